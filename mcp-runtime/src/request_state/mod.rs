//! The `requestState` of 2026-07-28 multi-round-trip requests: a handler that asks the client
//! something stops, the call answers `InputRequiredResult` with the questions and a sealed
//! `requestState`, and the client's retry carries the answers and that state back (see
//! [`ask`](crate::ask) for how a handler asks).
//!
//! The server seals states with HMAC-SHA-256 under a key ring
//! ([`ServerBuilder::request_state_keys`](crate::ServerBuilder::request_state_keys)) and binds
//! each to its request, its caller and an expiry. A state may be presented again until it
//! expires, unless a [`RequestStateGuard`] is configured
//! ([`ServerBuilder::request_state_guard`](crate::ServerBuilder::request_state_guard)): then
//! each state runs once ([`MemoryStateGuard`] in one process, a shared store for a fleet).

mod guard;
pub(crate) mod round;
pub(crate) mod seal;

pub use guard::{GuardError, GuardFuture, MemoryStateGuard, RequestStateGuard};
