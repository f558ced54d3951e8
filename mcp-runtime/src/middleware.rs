//! Middleware: an ordered chain around the dispatcher, as FastMCP's `on_request`/`on_call_tool`
//! hooks. Each layer sees the request (method, params, who is calling) and either answers it
//! itself (an error, a result) or passes it on with [`Next::run`], and may change what comes
//! back. Layers run in the order they were added
//! ([`ServerBuilder::middleware`](crate::ServerBuilder::middleware)): the first added is the
//! outermost.
//!
//! ```standalone_crate
//! use mcp_runtime::middleware::{self, McpRequest, Next};
//! use mcp_runtime::prelude::*;
//!
//! /// Hides every tool whose name starts with `admin_` from `tools/list`, and refuses calls.
//! async fn hide_admin(req: McpRequest, next: Next) -> Result<middleware::Response, McpError> {
//!     if req.tool_name().is_some_and(|name| name.starts_with("admin_")) {
//!         return Err(McpError::invalid_params("Unknown tool"));
//!     }
//!     let listing = req.method() == "tools/list";
//!     let mut response = next.run(req).await?;
//!     if listing {
//!         response.edit_result(|result| {
//!             if let Some(tools) = result.get_mut("tools").and_then(|t| t.as_array_mut()) {
//!                 tools.retain(|t| !t["name"].as_str().unwrap_or("").starts_with("admin_"));
//!             }
//!         });
//!     }
//!     Ok(response)
//! }
//!
//! # fn main() {
//! let server = mcp_runtime::Server::builder()
//!     .middleware(middleware::from_fn(hide_admin))
//!     .build()
//!     .unwrap();
//! # drop(server);
//! # }
//! ```
//!
//! Only requests pass through middleware (notifications and the client's responses do not).
//! A server with no middleware pays nothing; with some, each layer gets the request as the
//! server decoded it (the same typed value the checks and the dispatcher read: nothing is
//! parsed again unless a layer asks for the params as JSON), and the dispatcher's encoded
//! response, read as JSON only when a layer asks for the result. [`Timing`] is the built-in layer that logs each
//! request's method, target, duration and outcome.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{ErrorCode, McpError, RequestId};

/// The future a middleware returns.
pub type MiddlewareFuture =
    Pin<Box<dyn Future<Output = Result<Response, McpError>> + Send + 'static>>;

/// One layer of the chain.
pub trait Middleware: Send + Sync + 'static {
    /// Handles `req`: answer it, or pass it on with `next.run(req)`.
    fn call(&self, req: McpRequest, next: Next) -> MiddlewareFuture;
}

/// A middleware from an async fn or closure `(McpRequest, Next) -> Result<Response, McpError>`.
pub fn from_fn<F, Fut>(f: F) -> impl Middleware
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Response, McpError>> + Send + 'static,
{
    FromFn(f)
}

struct FromFn<F>(F);

impl<F, Fut> Middleware for FromFn<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Response, McpError>> + Send + 'static,
{
    fn call(&self, req: McpRequest, next: Next) -> MiddlewareFuture {
        Box::pin((self.0)(req, next))
    }
}

/// A request on its way through the chain: the request as the server decoded it, once (the
/// same value the dispatcher and every check read).
pub struct McpRequest {
    pub(crate) request: crate::protocol::params::Request,
    /// The params as JSON, made on first use by [`params`](McpRequest::params).
    pub(crate) json: OnceLock<Value>,
    /// A layer changed the params through [`params_mut`](McpRequest::params_mut).
    pub(crate) edited: bool,
    /// Made on first use by [`caller`](McpRequest::caller): most layers never ask, and for a
    /// request with an `Authorization` header it is a SHA-256 digest of that header.
    pub(crate) caller: OnceLock<String>,
    /// The dispatcher below the chain, which knows the caller and the request's headers.
    pub(crate) below: Arc<dyn Below>,
}

/// What is below the chain: the dispatcher of one request, and what it knows of its caller.
/// One per request, shared by the request and its clones; the server implements it (this
/// module does not name the server).
pub(crate) trait Below: Send + Sync + 'static {
    /// The caller, as [`McpRequest::caller`] gives it.
    fn caller(&self) -> String;
    /// The HTTP request headers, on HTTP.
    fn headers(&self) -> Option<&http::HeaderMap>;
    /// Dispatches `req` as the chain left it.
    fn dispatch(&self, req: McpRequest) -> Dispatched;
}

/// What the dispatcher made of a request: its answer now, one to wait for, or none (the
/// request was cancelled).
pub(crate) enum Dispatched {
    Now(Option<crate::request::Reply>),
    Later(Pin<Box<dyn Future<Output = Option<crate::request::Reply>> + Send>>),
}

impl Clone for McpRequest {
    fn clone(&self) -> Self {
        McpRequest {
            request: self.request.clone(),
            json: self.json.clone(),
            edited: self.edited,
            caller: self.caller.clone(),
            below: self.below.clone(),
        }
    }
}

impl std::fmt::Debug for McpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRequest")
            .field("request", &self.request)
            .field("json", &self.json)
            .field("edited", &self.edited)
            .field("caller", &self.caller)
            .field("headers", &self.headers())
            .finish_non_exhaustive()
    }
}

impl McpRequest {
    /// The JSON-RPC method (`tools/call`, `tools/list`, …).
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// The JSON-RPC id.
    pub fn id(&self) -> &RequestId {
        &self.request.id
    }

    /// The tool a `tools/call` names.
    pub fn tool_name(&self) -> Option<&str> {
        (self.request.method == "tools/call")
            .then(|| self.request.params.name())
            .flatten()
    }

    /// The tool or prompt a `tools/call` or `prompts/get` names.
    pub fn name(&self) -> Option<&str> {
        self.request.params.name()
    }

    /// The resource a `resources/read`, `resources/subscribe` or `resources/unsubscribe`
    /// names.
    pub fn uri(&self) -> Option<&str> {
        self.request.params.uri()
    }

    /// A `tools/call`'s arguments, as the JSON text the client sent.
    pub fn arguments(&self) -> Option<&serde_json::value::RawValue> {
        match &self.request.params.body {
            crate::protocol::params::Body::CallTool(p) => p.arguments.as_deref(),
            _ => None,
        }
    }

    /// The params as JSON (`null` when the request has none): the members of the method
    /// and the `_meta` members the server reads. Made on first use (the typed accessors above
    /// cost nothing).
    pub fn params(&self) -> &Value {
        self.json.get_or_init(|| self.request.params.to_json())
    }

    /// The params, to change before passing the request on. A changed request is decoded
    /// again before it reaches the dispatcher; it may not name another tool, prompt,
    /// resource or task than the client's request did (whose scopes were checked), and is
    /// refused with -32603 if it does.
    pub fn params_mut(&mut self) -> &mut Value {
        self.params();
        self.edited = true;
        self.json.get_mut().expect("made just above")
    }

    /// The params as `T` (-32602 when they do not fit).
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, McpError> {
        T::deserialize(self.params()).map_err(|e| {
            McpError::invalid_params(format!("Invalid params for {}: {e}", self.method()))
        })
    }

    /// Who is calling, stably across requests: `caller:<digest>` for a request that names its
    /// caller (by default its `Authorization` header, see
    /// [`ServerBuilder::request_state_caller`](crate::ServerBuilder::request_state_caller)),
    /// else `session:<id>` for a session-era connection, else `anonymous`. A digest, never the
    /// credentials themselves.
    pub fn caller(&self) -> &str {
        self.caller.get_or_init(|| self.below.caller())
    }

    /// The HTTP request headers, on HTTP.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.below.headers()
    }
}

/// What the rest of the chain answered: a result or a JSON-RPC error, as the client will get
/// it unless a layer changes it. The dispatcher's own encoding is kept, and read as JSON only
/// when a layer asks for the result.
#[derive(Debug)]
pub struct Response {
    /// The dispatcher's own encoding, while nothing has changed.
    pub(crate) encoded: Option<crate::request::Reply>,
    /// The result or error, read from `encoded` on first use (or set by a layer).
    pub(crate) outcome: OnceLock<Result<Value, McpError>>,
    /// The request was cancelled: nothing is sent (unless a layer answers anyway).
    pub(crate) cancelled: bool,
}

impl Response {
    /// A successful response with this result.
    pub fn result(result: Value) -> Response {
        Response {
            outcome: OnceLock::from(Ok(result)),
            encoded: None,
            cancelled: false,
        }
    }

    /// The result, or the error the client gets.
    pub fn outcome(&self) -> Result<&Value, &McpError> {
        self.read().as_ref()
    }

    fn read(&self) -> &Result<Value, McpError> {
        self.outcome.get_or_init(|| match &self.encoded {
            Some(reply) => read_reply(&reply.bytes),
            None => Err(McpError::internal("The request was cancelled")),
        })
    }

    /// Whether it is a JSON-RPC error.
    pub fn is_error(&self) -> bool {
        match (&self.encoded, self.outcome.get()) {
            (_, Some(outcome)) => outcome.is_err(),
            (Some(reply), None) => !matches!(reply.kind, crate::request::ReplyKind::Result),
            (None, None) => true,
        }
    }

    /// Whether it is a tool result with `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        match (&self.encoded, self.outcome.get()) {
            (Some(reply), None) => reply.tool_error,
            _ => self
                .read()
                .as_ref()
                .is_ok_and(|r| r.get("isError").and_then(Value::as_bool) == Some(true)),
        }
    }

    /// The JSON-RPC error code, for an error.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match (&self.encoded, self.outcome.get()) {
            (Some(reply), None) => match reply.kind {
                crate::request::ReplyKind::Result => None,
                crate::request::ReplyKind::Error(code)
                | crate::request::ReplyKind::Missing(code) => Some(code),
            },
            _ => self.read().as_ref().err().map(|e| e.code),
        }
    }

    /// Changes the result (nothing happens for an error).
    pub fn edit_result(&mut self, edit: impl FnOnce(&mut Value)) {
        self.read();
        if let Some(Ok(result)) = self.outcome.get_mut() {
            edit(result);
            self.encoded = None;
            self.cancelled = false;
        }
    }

    /// The result or error, for a layer that rebuilds the response.
    pub fn into_outcome(self) -> Result<Value, McpError> {
        self.read();
        self.outcome.into_inner().expect("read just above")
    }
}

/// The rest of the chain, then the dispatcher.
pub struct Next {
    pub(crate) chain: Arc<[Arc<dyn Middleware>]>,
    pub(crate) index: usize,
}

impl Next {
    /// Passes the request to the next layer (or the dispatcher) and returns what came back.
    pub async fn run(self, req: McpRequest) -> Result<Response, McpError> {
        match self.chain.get(self.index).cloned() {
            Some(layer) => {
                let next = Next {
                    chain: self.chain,
                    index: self.index + 1,
                };
                layer.call(req, next).await
            }
            // The dispatcher's own future is awaited here, not boxed again.
            None => Ok(from_reply(match req.below.clone().dispatch(req) {
                Dispatched::Now(reply) => reply,
                Dispatched::Later(pending) => pending.await,
            })),
        }
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("layers_left", &(self.chain.len() - self.index))
            .finish()
    }
}

/// The built-in timing layer: logs each request's method, tool, duration and outcome at
/// `INFO` under the target `mcp_runtime::middleware`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing;

impl Middleware for Timing {
    fn call(&self, req: McpRequest, next: Next) -> MiddlewareFuture {
        Box::pin(async move {
            let started = Instant::now();
            let (method, tool) = (req.method().to_owned(), req.tool_name().map(str::to_owned));
            let response = next.run(req).await;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let outcome = match &response {
                Ok(r) if r.is_tool_error() => "tool_error".to_owned(),
                Ok(r) => match r.error_code() {
                    None => "ok".to_owned(),
                    Some(code) => code.0.to_string(),
                },
                Err(e) => e.code.0.to_string(),
            };
            tracing::info!(
                target: "mcp_runtime::middleware",
                method = %method,
                tool = tool.as_deref().unwrap_or(""),
                ms = format_args!("{ms:.2}"),
                outcome = %outcome,
                "request"
            );
            response
        })
    }
}

/// A response a layer refused with: the JSON-RPC error as the client gets it.
pub(crate) fn refused(e: McpError) -> Response {
    Response {
        outcome: OnceLock::from(Err(e)),
        encoded: None,
        cancelled: false,
    }
}

/// What the dispatcher answered, kept as it was encoded.
pub(crate) fn from_reply(reply: Option<crate::request::Reply>) -> Response {
    Response {
        cancelled: reply.is_none(),
        encoded: reply,
        outcome: OnceLock::new(),
    }
}

/// A response's result or error, read from its encoding.
fn read_reply(bytes: &[u8]) -> Result<Value, McpError> {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        code: i32,
        message: String,
        data: Option<Value>,
    }
    #[derive(serde::Deserialize)]
    struct Message {
        result: Option<Value>,
        error: Option<ErrorBody>,
    }
    match serde_json::from_slice::<Message>(bytes) {
        Ok(Message { error: Some(e), .. }) => {
            let mut error = McpError::new(ErrorCode(e.code), e.message);
            error.data = e.data;
            Err(error)
        }
        Ok(Message { result, .. }) => Ok(result.unwrap_or(Value::Null)),
        Err(_) => Err(McpError::new(
            ErrorCode::INTERNAL_ERROR,
            "Internal error: unreadable response",
        )),
    }
}
