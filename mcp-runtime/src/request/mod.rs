//! The bottom layer of a request: what a handler sees of it ([`Context`]), the client it comes
//! from and the caller its token names ([`Principal`]), its cancellation and its place among the
//! connection's requests, and the [`Peer`] it can talk back to.
//!
//! Nothing here imports a module above it (`tests/module_cycles.rs` checks): what a request
//! needs of them is a small trait or an opaque value defined here. The dispatcher and the
//! transports build these values and implement [`Peer`]; `request_state::round::Round` and `task::Live`
//! implement [`RoundAsks`] and [`TaskAsks`]; `catalog/` makes the catalog handle a request
//! carries ([`Opaque`]) and defines `Context::catalog`. `ask/`, `State<T>` and the handlers use
//! them.

mod ask;
mod cancel;
mod client_info;
pub(crate) mod context;
mod peer;
mod principal;
mod reply;
mod sink;
mod state_map;

pub use ask::{Ask, ElicitationHandle, new_elicitation_id};
pub(crate) use cancel::{Cancellation, Gauge, Slot};
pub(crate) use client_info::ClientInfo;
pub use context::{Context, FromContext};
pub(crate) use context::{Opaque, RequestInfo};
pub(crate) use peer::{Answer, AskFuture, Asker, Blocked, ClientAnswer, Peer, RoundAsks, TaskAsks};
pub use principal::Principal;
pub(crate) use reply::{Reply, ReplyKind};
pub(crate) use sink::{Deliver, Sink};
pub(crate) use state_map::StateMap;
