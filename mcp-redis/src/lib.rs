//! Redis-backed shared state for [`mcp_runtime`] servers run as several instances behind a
//! load balancer.
//!
//! One [`Redis`] handle (a multiplexed connection that reconnects by itself) gives every store:
//! each is the Redis implementation of a trait whose in-memory default lives in `mcp-runtime`.
//! Keys are prefixed with the fleet's name (`mcp:{fleet}:…`), so fleets can share a server.

#![warn(missing_docs)]

mod change_bus;
mod conn;

pub use change_bus::RedisChangeBus;
pub use conn::{Redis, RedisError};
