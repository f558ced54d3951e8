//! Redis-backed shared state for [`mcp_runtime`] servers run as several instances behind a
//! load balancer.
//!
//! One [`Redis`] handle (a multiplexed connection that reconnects by itself) gives every store:
//! each is the Redis implementation of a trait whose in-memory default lives in `mcp-runtime`.
//! Keys are prefixed with the fleet's name (`mcp:{fleet}:…`), so fleets can share a server.
//!
//! - [`RedisChangeBus`] (`ServerBuilder::change_bus`): changes announced on one instance reach
//!   the listen streams and legacy subscriptions of every instance;
//! - [`RedisSessionStore`] (`HttpConfig::session_store`): a legacy session restores on an
//!   instance that did not create it;
//! - [`RedisEventStore`] (`HttpConfig::event_store`): an SSE stream resumes with
//!   `Last-Event-ID` on another instance;
//! - [`RedisTaskStore`] (`ServerBuilder::task_store`): tasks read and cancelled through any
//!   instance, failed when their instance's lease lapses;
//! - [`RedisStateGuard`] (`ServerBuilder::request_state_guard`, optional): a 2026-07-28
//!   `requestState` accepted once fleet-wide.
//!
//! Requirements: **Redis 7.0 or later** (the stores use `PEXPIRETIME`, `SET … PXAT` and
//! `XADD … NOMKSTREAM`), one server rather than Redis Cluster; and **instances whose clocks
//! are in sync**: a task lease is a wall-clock time written by one instance and judged by the
//! clock of another, so keep the lease (`ServerBuilder::task_lease`) much longer than any
//! clock skew between them.
//!
//! The crate's README has a server using them all; `examples/fleet` in the workspace is a
//! complete instance.

#![warn(missing_docs)]

mod change_bus;
mod conn;
mod events;
mod sessions;
mod state_guard;
mod tasks;

pub use change_bus::RedisChangeBus;
pub use conn::{Redis, RedisError};
pub use events::RedisEventStore;
pub use sessions::RedisSessionStore;
pub use state_guard::RedisStateGuard;
pub use tasks::RedisTaskStore;

/// The README's examples, compiled as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
