//! Where a request's messages to the client go before its result: progress and log
//! notifications, and (session era) its requests to the client.
//!
//! Each request has a sink chosen by its transport: the stdio writer, the SSE stream of its
//! HTTP response, or the test client's collector. Notifications stop once the request is
//! finished or cancelled.

use std::fmt;
use std::sync::Arc;

use crate::protocol::jsonrpc::Encoded;

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
