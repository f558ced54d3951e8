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
pub(crate) struct Sink(Arc<dyn Deliver>);

/// What a sink hands its messages to: a closure, or a transport's own shared value (one
/// allocation for the sink and what the transport reads from it).
pub(crate) trait Deliver: Send + Sync + 'static {
    /// Hands `message` on; `false` when it could not be (the stream is gone or full).
    fn deliver(&self, message: Encoded) -> bool;
}

impl<F: Fn(Encoded) -> bool + Send + Sync + 'static> Deliver for F {
    fn deliver(&self, message: Encoded) -> bool {
        self(message)
    }
}

impl Sink {
    /// `send` returns whether the message was handed on (not whether the client read it).
    pub(crate) fn new(send: impl Fn(Encoded) -> bool + Send + Sync + 'static) -> Sink {
        Sink(Arc::new(send))
    }

    /// A sink delivering to `to`, which the transport keeps a handle on.
    pub(crate) fn to(to: Arc<dyn Deliver>) -> Sink {
        Sink(to)
    }

    /// Sends a message; `false` when it could not be handed on (the stream is gone or full).
    pub(crate) fn send(&self, message: Encoded) -> bool {
        self.0.deliver(message)
    }
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sink")
    }
}
