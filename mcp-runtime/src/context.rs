//! [`Context`]: what a tool can learn about the request it serves, and the injection trait.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::{Era, McpError, ProtocolVersion, RequestId};

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
    pub(crate) version: ProtocolVersion,
    pub(crate) client_info: Option<Value>,
    pub(crate) client_capabilities: Value,
    pub(crate) progress_token: Option<Value>,
    pub(crate) transport: &'static str,
    pub(crate) cancel: CancellationToken,
}

impl Context {
    pub(crate) fn new(info: RequestInfo) -> Self {
        Context {
            inner: Arc::new(info),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The protocol version this request is served under.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The protocol era (session or stateless).
    pub fn era(&self) -> Era {
        self.inner.version.era()
    }

    /// The client's self-reported `clientInfo` (display only: never a basis for security decisions).
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.client_info.as_ref()
    }

    /// The capabilities the client declared (`{}` when none).
    pub fn client_capabilities(&self) -> &Value {
        &self.inner.client_capabilities
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
