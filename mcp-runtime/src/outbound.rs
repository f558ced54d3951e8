//! Messages a request sends to the client before its result: progress and log notifications.
//!
//! Each request has a sink chosen by its transport: the stdio writer, the SSE stream of its
//! HTTP response, or the test client's collector. Notifications stop once the request is
//! finished or cancelled.

use std::fmt;
use std::sync::Arc;

use crate::protocol::jsonrpc::Encoded;
// Its public home (a request logs at one of these levels); it is part of the protocol.
pub use crate::protocol::logging::LogLevel;

/// Where a request's notifications go.
#[derive(Clone)]
pub(crate) struct Sink(Arc<dyn Fn(Encoded) -> bool + Send + Sync>);

impl Sink {
    /// `send` returns whether the message was handed on (not whether the client read it).
    pub(crate) fn new(send: impl Fn(Encoded) -> bool + Send + Sync + 'static) -> Sink {
        Sink(Arc::new(send))
    }

    /// Sends a message; `false` when it could not be handed on (the stream is gone or full).
    pub(crate) fn send(&self, message: Encoded) -> bool {
        (self.0)(message)
    }
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sink")
    }
}
