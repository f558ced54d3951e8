//! Session-era asks: real JSON-RPC requests to the client, answered by id, and the
//! `notifications/elicitation/complete` a URL elicitation may be followed by.

use std::sync::Weak;

use serde_json::{Value, json};

use super::Ask;
use crate::protocol::jsonrpc::{encode_notification, encode_request};
use crate::protocol::{McpError, RequestId};
use crate::request::Peer;
use crate::request::Sink;

impl Ask<'_> {
    /// A JSON-RPC request to the client, answered by its response (session era).
    pub(super) async fn request_client(
        &self,
        peer: &dyn Peer,
        method: &'static str,
        params: Value,
    ) -> Result<Value, McpError> {
        if self.ctx.is_finished() || self.ctx.is_cancelled() {
            return Err(McpError::internal(format!(
                "Cannot send `{method}`: the request is finished or cancelled"
            )));
        }
        // The request's own stream; without one (JSON-only HTTP responses), the session's
        // (its GET stream), which the spec also allows for requests to the client.
        let sink = self
            .ctx
            .live_sink()
            .cloned()
            .or_else(|| peer.standalone())
            .ok_or_else(|| {
                McpError::internal(format!(
                    "Cannot send `{method}`: no stream to the client (JSON-only HTTP responses and no GET stream open)"
                ))
            })?;
        let (id, answer) = peer.start_request();
        // Unregisters the request however this ends; tells the client when it is abandoned.
        let guard = Outgoing {
            peer,
            id: id.clone(),
            sink: &sink,
        };
        if !sink.send(encode_request(&id, method, &params)) {
            return Err(McpError::internal(format!(
                "Cannot send `{method}`: the stream to the client is closed or full"
            )));
        }
        let limit = peer.request_timeout();
        let result = tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| Err(McpError::internal("The client connection is gone"))),
            _ = self.ctx.cancelled() => Err(McpError::internal("The request was cancelled")),
            _ = tokio::time::sleep(limit) => Err(McpError::internal(format!(
                "The client did not answer `{method}` within {} s", limit.as_secs()
            ))),
        };
        drop(guard);
        result
    }
}

/// Reports a URL elicitation complete to the session that was asked
/// ([`Context::elicitation_handle`](crate::Context::elicitation_handle)). Holds the session weakly.
#[derive(Clone, Debug)]
pub struct ElicitationHandle {
    pub(super) peer: Weak<dyn Peer>,
    pub(super) id: String,
}

impl ElicitationHandle {
    pub(super) fn notification(&self) -> Vec<u8> {
        encode_notification(
            "notifications/elicitation/complete",
            json!({ "elicitationId": &self.id }),
        )
    }

    /// Sends `notifications/elicitation/complete` on the session's own channel (stdout, or its
    /// GET stream). Returns whether it could: not when the session ended or has no stream open.
    pub fn complete(&self) -> bool {
        let Some(peer) = self.peer.upgrade() else {
            return false;
        };
        peer.standalone()
            .is_some_and(|sink| sink.send(self.notification()))
    }
}

/// A new URL elicitation id: 128 bits from the operating system's CSPRNG, as hex (hard to guess,
/// so it can name the elicitation in a URL).
pub fn new_elicitation_id() -> String {
    crate::id::random_id()
}

/// A request to the client awaiting its response.
struct Outgoing<'a> {
    peer: &'a dyn Peer,
    id: RequestId,
    sink: &'a Sink,
}

impl Drop for Outgoing<'_> {
    fn drop(&mut self) {
        if self.peer.forget_request(&self.id) {
            // Still unanswered (timed out, cancelled, abandoned): the client may stop asking.
            self.sink.send(encode_notification(
                "notifications/cancelled",
                json!({ "requestId": self.id, "reason": "The server no longer needs the answer" }),
            ));
        }
    }
}
