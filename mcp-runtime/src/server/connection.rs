//! One client connection, independent of the transport: its session (if any), its requests in
//! flight, and the step each incoming message calls for.

use std::collections::HashMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context as TaskContext, Poll};

use serde::Deserialize;

use super::Server;
use super::era::ClientInfo;
use crate::context::Context;
use crate::protocol::jsonrpc::{self, Encoded, Incoming, Notification, encode_error};
use crate::protocol::{McpError, RequestId};

/// A response the transport must still wait for; `None` when the request was cancelled.
pub(crate) type Pending = Pin<Box<dyn Future<Output = Option<Encoded>> + Send + 'static>>;

/// What the transport does with one incoming message.
pub(crate) enum Step {
    /// Send this response now (cheap requests are answered without a task).
    Reply(Encoded),
    /// Run this to completion (on a task of its own) and send what it yields.
    Run(Pending),
    /// Nothing to send (a notification or a client response).
    Nothing,
}

/// Per-connection state. A stdio process has one; each test client has one.
pub(crate) struct Connection {
    pub(crate) server: Server,
    pub(crate) transport: &'static str,
    session: OnceLock<Arc<ClientInfo>>,
    in_flight: Mutex<HashMap<RequestId, Context>>,
}

impl Connection {
    pub(crate) fn new(server: Server, transport: &'static str) -> Arc<Self> {
        Arc::new(Connection {
            server,
            transport,
            session: OnceLock::new(),
            in_flight: Mutex::new(HashMap::new()),
        })
    }

    /// The session opened by `initialize`, if any.
    pub(crate) fn session(&self) -> Option<Arc<ClientInfo>> {
        self.session.get().cloned()
    }

    /// Opens the session; `false` if one is already open.
    pub(crate) fn open_session(&self, client: ClientInfo) -> bool {
        self.session.set(Arc::new(client)).is_ok()
    }

    /// Decodes one message and decides what to do with it.
    pub(crate) fn on_message(self: &Arc<Self>, text: &str) -> Step {
        if text.trim_start().starts_with('[') {
            return Step::Reply(encode_error(
                None,
                &McpError::invalid_request(
                    "Invalid request: JSON-RPC batches are not supported (removed in protocol 2025-06-18)",
                ),
            ));
        }
        match jsonrpc::decode(text) {
            Err(e) => Step::Reply(encode_error(e.id.as_ref(), &e.error)),
            Ok(Incoming::Request(req)) => self.on_request(req),
            Ok(Incoming::Notification(n)) => {
                self.on_notification(n);
                Step::Nothing
            }
            Ok(Incoming::Response(r)) => {
                tracing::debug!(id = %r.id, "ignoring a response to no request of ours");
                Step::Nothing
            }
        }
    }

    /// The message for an input line longer than the limit (the line itself was dropped).
    pub(crate) fn too_large(&self) -> Encoded {
        let limit = self.server.inner.limits.max_message_bytes;
        encode_error(
            None,
            &McpError::invalid_request(format!("Message larger than {limit} bytes")),
        )
    }

    /// The message for an input line that is not UTF-8.
    pub(crate) fn invalid_utf8(&self) -> Encoded {
        encode_error(
            None,
            &McpError::new(
                crate::protocol::ErrorCode::PARSE_ERROR,
                "Parse error: invalid UTF-8",
            ),
        )
    }

    fn on_notification(&self, n: Notification<'_>) {
        match &*n.method {
            "notifications/cancelled" => {
                #[derive(Deserialize)]
                struct Cancelled {
                    #[serde(rename = "requestId")]
                    request_id: RequestId,
                }
                let parsed = n
                    .params
                    .and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok());
                // Unknown, finished and malformed cancellations are ignored, as the spec says.
                if let Some(Cancelled { request_id }) = parsed
                    && let Some(ctx) = self
                        .in_flight
                        .lock()
                        .expect("in-flight lock")
                        .get(&request_id)
                {
                    tracing::debug!(id = %request_id, "request cancelled by the client");
                    ctx.cancel();
                }
            }
            "notifications/initialized" => tracing::debug!("client initialized"),
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    /// Registers a request that will run on its own task, so it can be cancelled.
    pub(crate) fn begin(
        self: &Arc<Self>,
        id: &RequestId,
        ctx: &Context,
    ) -> Result<InFlight, McpError> {
        let mut map = self.in_flight.lock().expect("in-flight lock");
        if map.contains_key(id) {
            return Err(McpError::invalid_request(format!(
                "Request id {id} is already in flight"
            )));
        }
        let limit = self.server.inner.limits.max_in_flight;
        if map.len() >= limit {
            return Err(McpError::internal(format!(
                "Server busy: {limit} requests already in flight on this connection"
            )));
        }
        map.insert(id.clone(), ctx.clone());
        Ok(InFlight {
            conn: self.clone(),
            id: id.clone(),
            ctx: ctx.clone(),
        })
    }

    /// Cancels every request in flight (shutdown).
    pub(crate) fn cancel_all(&self) {
        self.in_flight
            .lock()
            .expect("in-flight lock")
            .values()
            .for_each(Context::cancel);
    }

    /// How many requests are running.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.lock().expect("in-flight lock").len()
    }
}

/// A request in flight; unregisters itself when dropped (finished, cancelled or abandoned).
pub(crate) struct InFlight {
    conn: Arc<Connection>,
    id: RequestId,
    pub(crate) ctx: Context,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn
            .in_flight
            .lock()
            .expect("in-flight lock")
            .remove(&self.id);
    }
}

/// Polls a future, turning a panic into `Err` so one bad handler cannot take the server down.
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut self.0).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(panic_message(&*payload))),
        }
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned())
}
