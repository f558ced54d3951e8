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

pub use crate::server::Mounted;

#[cfg(feature = "client")]
mod lifecycle;
#[cfg(feature = "client")]
mod proxy;
#[cfg(feature = "client")]
pub use lifecycle::UpstreamSessions;
#[cfg(feature = "client")]
pub use proxy::Proxy;
