//! [`Context`]: what a tool can learn about the request it serves, and the injection trait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod asks;

use serde::Serialize;
use serde_json::Value;

use super::{Asker, Cancellation, ClientInfo, Principal, Sink, Slot, StateMap};
use crate::protocol::jsonrpc::{encode_notification, try_encode_notification};
use crate::protocol::{LogLevel, McpError, ProtocolEra, ProtocolVersion, RequestId};

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
    pub(crate) _slot: Option<Slot>,
    /// Where notifications for this request go, if anywhere.
    pub(crate) sink: Option<Sink>,
    /// The least severe level the client wants logged (`None`: no log notifications).
    pub(crate) log_level: Option<LogLevel>,
    /// Set when the result is on its way: nothing more may be sent for the request.
    pub(crate) finished: AtomicBool,
    /// Held while a notification is checked and sent, and while the request is finished: a
    /// notification from another thread either goes before the result or not at all.
    pub(crate) gate: Mutex<()>,
    pub(crate) progress: Mutex<ProgressState>,
    pub(crate) states: Arc<StateMap>,
    pub(crate) headers: Option<Arc<http::HeaderMap>>,
    pub(crate) closer: Option<Arc<tokio::sync::Notify>>,
    pub(crate) principal: Option<Arc<Principal>>,
    /// The server's catalog handle (`crate::catalog::Catalog`), opaque at this layer:
    /// `catalog/` makes it and reads it back (`Context::catalog` is defined there).
    pub(crate) catalog: Opaque,
    /// How asks (elicitation, sampling, roots) reach the client.
    pub(crate) asker: Asker,
    /// The 2025-11-25 task this request's work runs as (its messages name it).
    pub(crate) related_task: Option<String>,
}

/// A server-wide value a request carries for a layer above this one, which made it and alone
/// reads it back (by downcasting): the request layer needs no knowledge of its type. Cloning it
/// per request costs what cloning the value's own `Arc` did.
pub(crate) type Opaque = Arc<dyn std::any::Any + Send + Sync>;

/// The last progress sent, to keep it increasing and rate-limited.
#[derive(Debug, Default)]
pub(crate) struct ProgressState {
    last: Option<f64>,
    at: Option<Instant>,
}

/// At most one progress notification per this interval (the last one, at 100%, always goes).
const PROGRESS_INTERVAL: Duration = Duration::from_millis(10);

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

    /// Whether a notification may still be sent: the request is neither finished nor cancelled.
    pub(crate) fn live_sink(&self) -> Option<&Sink> {
        let inner = &self.inner;
        if inner.finished.load(Ordering::Acquire) || inner.cancel.is_cancelled() {
            return None;
        }
        inner.sink.as_ref()
    }

    pub(crate) fn asker(&self) -> &Asker {
        &self.inner.asker
    }

    /// Cancels this request when called, without keeping it alive.
    pub(crate) fn canceller(&self) -> Box<dyn Fn() + Send + Sync> {
        let weak = Arc::downgrade(&self.inner);
        Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.cancel.cancel();
            }
        })
    }

    /// `_meta` naming the 2025-11-25 task this request runs as: every message of a task says so.
    fn related_task_meta(&self) -> Option<Value> {
        self.related_task().map(
            |id| serde_json::json!({ "io.modelcontextprotocol/related-task": { "taskId": id } }),
        )
    }

    pub(crate) fn related_task(&self) -> Option<&str> {
        self.inner.related_task.as_deref()
    }

    /// The id of the [task](crate::task) this call runs as, if it runs as one.
    pub fn task_id(&self) -> Option<&str> {
        match &self.inner.asker {
            Asker::Task(task) => Some(task.id()),
            _ => self.related_task(),
        }
    }

    /// Completes when a 2026-07-28 handler waits for input the client has not given yet.
    pub(crate) async fn input_blocked(&self) {
        match &self.inner.asker {
            Asker::Round(round) => round.blocked().wait().await,
            _ => std::future::pending().await,
        }
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.inner.finished.load(Ordering::Acquire)
    }

    pub(crate) fn finish(&self) {
        let _gate = self.inner.gate.lock().expect("notification gate");
        self.inner.finished.store(true, Ordering::Release);
    }

    /// Sends a notification for this request if it is still live (not finished nor
    /// cancelled); whether it went. Checked and sent under the gate `finish` takes, so it
    /// cannot race the result out (sinks never block: they queue or drop).
    pub(crate) fn send_live(&self, message: crate::protocol::jsonrpc::Encoded) -> bool {
        let _gate = self.inner.gate.lock().expect("notification gate");
        self.live_sink().is_some_and(|sink| sink.send(message))
    }

    /// Reports progress to the client: `progress` so far, out of `total` if known, with an
    /// optional message. A no-op when the client sent no progress token, after the request
    /// finished, when `progress` does not increase, or when called faster than the client needs
    /// (at most one every 10 ms; reaching `total` always goes).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.report_progress(progress, total, message, true);
    }

    /// The least severe log level the client wants for this request (`None`: no log
    /// messages), for a proxy asking its upstream for the same.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn wanted_log_level(&self) -> Option<LogLevel> {
        self.inner.log_level
    }

    /// [`progress`](Self::progress) without the 10 ms interval: for progress a server
    /// elsewhere reported (a proxy passes each one on; the upstream paced them already).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn forward_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        self.report_progress(progress, total, message, false);
    }

    fn report_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
        paced: bool,
    ) {
        let Some(token) = &self.inner.progress_token else {
            return;
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return;
        }
        if self.live_sink().is_none() {
            return;
        }
        {
            let mut state = self.inner.progress.lock().expect("progress lock");
            if state.last.is_some_and(|last| progress <= last) {
                return;
            }
            let done = total.is_some_and(|t| progress >= t);
            if paced && !done && state.at.is_some_and(|at| at.elapsed() < PROGRESS_INTERVAL) {
                return;
            }
            state.last = Some(progress);
            state.at = Some(Instant::now());
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Params<'a> {
            progress_token: &'a Value,
            progress: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            total: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            message: Option<&'a str>,
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<Value>,
        }
        self.send_live(encode_notification(
            "notifications/progress",
            Params {
                progress_token: token,
                progress,
                total,
                message,
                meta: self.related_task_meta(),
            },
        ));
    }

    /// Sends a log message to the client (`notifications/message`) if it asked for this level:
    /// in the session era through `logging/setLevel` (everything until it does), in 2026-07-28
    /// through the request's `_meta` log level (nothing without it).
    pub fn log(&self, level: LogLevel, data: impl Serialize) {
        self.log_as(level, None, data);
    }

    /// Like [`log`](Self::log), naming the logger.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, data: impl Serialize) {
        if self.inner.log_level.is_none_or(|min| level < min) {
            return;
        }
        if self.live_sink().is_none() {
            return;
        }
        #[derive(Serialize)]
        struct Params<'a, T> {
            level: LogLevel,
            #[serde(skip_serializing_if = "Option::is_none")]
            logger: Option<&'a str>,
            data: T,
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<Value>,
        }
        // Log data is the user's: one that cannot be serialized is dropped, not a failure.
        match try_encode_notification(
            "notifications/message",
            Params {
                level,
                logger,
                data,
                meta: self.related_task_meta(),
            },
        ) {
            Some(message) => {
                self.send_live(message);
            }
            None => tracing::warn!("a log message could not be serialized; dropped"),
        }
    }

    /// Logs at `debug`.
    pub fn debug(&self, data: impl Serialize) {
        self.log(LogLevel::Debug, data);
    }

    /// Logs at `info`.
    pub fn info(&self, data: impl Serialize) {
        self.log(LogLevel::Info, data);
    }

    /// Logs at `warning`.
    pub fn warning(&self, data: impl Serialize) {
        self.log(LogLevel::Warning, data);
    }

    /// Logs at `error`.
    pub fn error(&self, data: impl Serialize) {
        self.log(LogLevel::Error, data);
    }

    pub(crate) fn states(&self) -> &StateMap {
        &self.inner.states
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
    pub fn era(&self) -> ProtocolEra {
        self.inner.client.version.era()
    }

    /// The client's self-reported `clientInfo` (display only: never a basis for security decisions).
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.client.info.as_ref()
    }

    /// The capabilities the client declared (`{}` when none): from `initialize` in the session
    /// era, from the request's `_meta` (`io.modelcontextprotocol/clientCapabilities`) in
    /// 2026-07-28.
    pub fn client_capabilities(&self) -> &Value {
        &self.inner.client.capabilities
    }

    /// The settings the client declared for extension `id` (SEP-2133: its
    /// `capabilities.extensions`, in both eras), or `None` when it did not declare it. An
    /// extension without settings is `Some({})`.
    ///
    /// ```standalone_crate
    /// use mcp_runtime::prelude::*;
    ///
    /// /// Shows the weather, as an app where the client renders MCP Apps.
    /// #[tool]
    /// async fn weather(ctx: Context) -> String {
    ///     let apps = ctx
    ///         .client_extension("io.modelcontextprotocol/ui")
    ///         .and_then(|ui| ui["mimeTypes"].as_array())
    ///         .is_some_and(|types| types.iter().any(|t| t == "text/html;profile=mcp-app"));
    ///     if apps { "rendered in the app".into() } else { "Sunny, 21 °C".into() }
    /// }
    /// # fn main() {}
    /// ```
    pub fn client_extension(&self, id: &str) -> Option<&Value> {
        self.client_extensions()?.get(id)
    }

    /// Whether the client renders MCP Apps: it declared the `io.modelcontextprotocol/ui`
    /// extension with the `text/html;profile=mcp-app` MIME type (in either era). A tool linked
    /// to an app can return a shorter text when it does, and must return a complete one when
    /// it does not; see [`apps`](crate::apps).
    pub fn client_supports_apps(&self) -> bool {
        crate::protocol::apps::supported_by(&self.inner.client.capabilities)
    }

    /// Every extension the client declared (`capabilities.extensions`), by identifier;
    /// `None` when it declared none.
    pub fn client_extensions(&self) -> Option<&serde_json::Map<String, Value>> {
        self.inner
            .client
            .capabilities
            .get("extensions")?
            .as_object()
    }

    /// The client's progress token for this request, if it sent one.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.progress_token.as_ref()
    }

    /// The HTTP request's headers, when the request came over HTTP (for example to read an
    /// API key or a tracing header; verify anything used for security yourself).
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.inner.headers.as_deref()
    }

    /// The caller, as its verified access token names it (HTTP with authorization
    /// configured); `None` otherwise.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_deref()
    }

    /// The server's catalog handle, as `catalog/` put it there.
    pub(crate) fn catalog_handle(&self) -> &Opaque {
        &self.inner.catalog
    }

    /// Ends this request's HTTP response stream now, while the handler goes on (SSE polling,
    /// SEP-1699): the client reconnects with a GET and `Last-Event-ID` and receives what the
    /// request sends after this, its result included. Useful before long work behind proxies
    /// that cut idle connections. Only HTTP sessions at protocol 2025-11-25 or later have
    /// resumable streams; elsewhere this does nothing and returns `false`.
    pub fn close_stream(&self) -> bool {
        match &self.inner.closer {
            Some(closer) if !self.is_finished() => {
                closer.notify_one();
                true
            }
            _ => false,
        }
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

/// A parameter type the framework supplies instead of the client. [`Context`] and
/// [`State<T>`](crate::State) are injected wherever they appear; a type of your own that
/// implements this trait (an extractor reading a header, say) is injected when its parameter is
/// marked `#[inject]`. Injected parameters are left out of the input schema, and an `Err` from
/// [`from_context`](Self::from_context) rejects the request with that error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a type the framework can inject",
    label = "not injectable",
    note = "`Context` and `State<T>` are injected as they are; implement `FromContext` for your own type and mark its parameter `#[inject]`"
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

impl FromContext for Principal {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        ctx.principal().cloned().ok_or_else(|| {
            McpError::invalid_request(
                "this request carries no verified access token (the server has no authorization configured, or the request did not come over HTTP)",
            )
        })
    }
}
