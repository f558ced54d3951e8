//! [`Context`]: what a tool can learn about the request it serves, and the injection trait.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::Notify;

use crate::protocol::{Era, McpError, ProtocolVersion, RequestId};
use crate::server::era::ClientInfo;

/// The request a handler is serving: its id, protocol version, the client, and cancellation.
///
/// Declare a parameter of this type (any name, any position) in a `#[tool]` fn to receive it; it
/// is not part of the tool's input schema. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<RequestInfo>,
}

#[derive(Debug)]
pub(crate) struct RequestInfo {
    pub(crate) id: RequestId,
    /// Shared with the session (or built for this request in the stateless era).
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) transport: &'static str,
    pub(crate) cancel: Cancellation,
    /// Held while any clone of the context lives (see `Slot`); `None` outside a connection.
    pub(crate) _slot: Option<crate::server::connection::Slot>,
}

/// One request's cancellation flag. It lives inside the request's shared state, so creating,
/// sharing and dropping it costs nothing beyond the `Arc` the `Context` already is (a
/// `tokio_util` `CancellationToken` takes a lock on every clone and drop, which showed in the
/// per-call profile, and its token trees are not needed here).
#[derive(Debug, Default)]
pub(crate) struct Cancellation {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    pub(crate) fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    pub(crate) async fn cancelled(&self) {
        loop {
            // A `Notified` receives `notify_waiters` from its creation on, so checking the flag
            // after creating it cannot miss a cancellation.
            let notified = self.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

impl Context {
    pub(crate) fn new(info: RequestInfo) -> Self {
        Context {
            inner: Arc::new(info),
        }
    }

    /// Whether two contexts belong to the same request.
    pub(crate) fn same_request(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Marks the request cancelled and wakes whoever waits on [`Context::cancelled`].
    pub(crate) fn cancel(&self) {
        self.inner.cancel.cancel();
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The protocol version this request is served under.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.client.version
    }

    /// The protocol era (session or stateless).
    pub fn era(&self) -> Era {
        self.inner.client.version.era()
    }

    /// The client's self-reported `clientInfo` (display only: never a basis for security decisions).
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.client.info.as_ref()
    }

    /// The capabilities the client declared (`{}` when none).
    pub fn client_capabilities(&self) -> &Value {
        &self.inner.client.capabilities
    }

    /// The client's progress token for this request, if it sent one.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.progress_token.as_ref()
    }

    /// The transport the request arrived on (`"stdio"`, `"in-process"`, …).
    pub fn transport(&self) -> &'static str {
        self.inner.transport
    }

    /// Whether the client cancelled this request.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the client cancels this request, so long work can stop early:
    /// `tokio::select! { _ = ctx.cancelled() => …, r = work() => … }`.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }
}

/// A parameter type the framework supplies instead of the client: [`Context`] and, later, state,
/// headers or auth claims. Such parameters are left out of the tool's input schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a type the framework can inject",
    label = "not injectable",
    note = "parameters named by type `Context` are injected; others must be `Deserialize + JsonSchema` arguments"
)]
pub trait FromContext: Sized {
    /// Builds the value for one request.
    fn from_context(ctx: &Context) -> Result<Self, McpError>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        Ok(ctx.clone())
    }
}
