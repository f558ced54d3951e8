//! Composing servers: several servers served as one
//! ([`ServerBuilder::mount`](crate::ServerBuilder::mount)).
//!
//! A server made of smaller ones keeps each one's tools, resources, templates and prompts
//! under a prefix of its own, and each one's middleware, scopes, enable/disable and
//! completion:
//!
//! ```standalone_crate
//! use mcp_runtime::Server;
//! let weather = Server::builder()
//!     .name("weather")
//!     .item_filter(|item| item.location.0.contains("weather"))
//!     .build()?;
//! let server = Server::builder()
//!     .name("assistant")
//!     .item_filter(|item| !item.location.0.contains("weather"))
//!     .mount("weather", weather) // its `forecast` tool is served as `weather_forecast`
//!     .build()?;
//! # drop(server);
//! # Ok::<(), mcp_runtime::BuildError>(())
//! ```
//!
//! How names and URIs are rewritten, and what a mount does not carry, is in
//! [`ServerBuilder::mount`](crate::ServerBuilder::mount).
//!
//! With the `client` feature, `Proxy` serves a server reached through a
//! [`Client`](crate::client::Client) (over stdio or HTTP, in either protocol era) the same way:
//! mounted under a prefix next to other servers (a gateway), or alone under its own name
//! (a bridge from one transport to another, as `examples/bridge` does).
//!
//! A `Proxy` made with `Proxy::connect`, `Proxy::connect_sse` or `Proxy::spawn` also keeps its
//! upstream connections (the module's `lifecycle`):
//! - an upstream that went away (a spawned server that exited; an HTTP server that refuses
//!   connections, or answers 404 for a session it forgot; an HTTP+SSE server whose stream
//!   ended) fails the requests waiting for it with an error that says so, is logged, and is
//!   connected to again (the command started again) on the next request, its subscriptions
//!   made again; failed attempts back off (100 ms, doubling, up to 10 s), and a request
//!   meanwhile fails at once, saying when the next attempt is;
//! - an upstream that keeps state for its client (a session-era server over stdio, over HTTP
//!   with `Mcp-Session-Id`, or over HTTP+SSE) gets one connection, for a command one process,
//!   per session-era client session in front, opened on its first request (a subscription
//!   included) and closed when that session ends (or, at the bound on how many are open, when
//!   a new session needs the place of the one idle the longest): `UpstreamSessions`,
//!   `Proxy::upstream_sessions`, `Proxy::max_upstream_sessions`; a stateless one (2026-07-28)
//!   is shared by every client.

pub use crate::server::Mounted;

#[cfg(feature = "client")]
mod calls;
#[cfg(feature = "client")]
mod lifecycle;
#[cfg(feature = "client")]
mod proxy;
#[cfg(feature = "client")]
pub use lifecycle::UpstreamSessions;
#[cfg(feature = "client")]
pub use proxy::Proxy;
