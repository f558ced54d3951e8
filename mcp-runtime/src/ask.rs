//! Asking the client: elicitation (a form or a URL for the user), sampling (a completion from
//! the client's model) and roots (the client's workspace folders), in both protocol eras.
//!
//! - Session era (2025-11-25 and earlier): each ask is a JSON-RPC request to the client on the
//!   live channel (stdout on stdio; the SSE stream of the tool call's POST on HTTP), answered by
//!   the client's response, with a time limit.
//! - 2026-07-28: servers send no requests. An ask with no answer yet stops the handler, and the
//!   call returns `InputRequiredResult`; the client retries with the answers, the handler runs
//!   again from the start, and this time each ask returns its answer (those of earlier rounds
//!   come back from the sealed `requestState`). **Code before an ask may therefore run more than
//!   once**: keep side effects after the last ask, and ask the same questions in the same order
//!   (an answer is only used for the question it answered). A value that must not change from
//!   one run to the next (a random id, a timestamp) goes through
//!   [`Context::remember`](crate::Context::remember).
//!
//! An ask the client did not declare a capability for fails with
//! [`ErrorCode::MISSING_CLIENT_CAPABILITY`](crate::protocol::ErrorCode::MISSING_CLIENT_CAPABILITY)
//! (-32021) before anything is sent: handle it (fall back to a default), or return it from the
//! tool (`?`) and the client gets that JSON-RPC error.

pub use crate::protocol::asks::{
    ElicitAction, Elicitation, Root, SampledMessage, Sampling, SamplingMessage,
};
pub use crate::protocol::form::form_schema;
pub use crate::request::{Ask, ElicitationHandle, new_elicitation_id};
// The 0.1 home of the requestState guard, now in `request_state` (a trait cannot be a
// deprecated alias, so the old paths stay as hidden re-exports).
#[doc(hidden)]
pub use crate::request_state::{GuardError, GuardFuture, MemoryStateGuard, RequestStateGuard};
