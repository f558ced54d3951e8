//! The engine every transport shares: request ids and pending answers, routing of what the
//! server sends (answers, notifications, its own requests), and the era rules (per-request
//! `_meta`, `InputRequiredResult` rounds) applied to every request in one place.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, broadcast, mpsc, oneshot};

use super::error::ClientError;
use super::handlers::{Handlers, ServerNotification};
use super::headers;
use super::limits::{Limits, REFUSALS, within};
use super::peek::{self, Received};
use super::sent::{EraMeta, Message, RawMember, SentParams};
use crate::protocol::headers::HeaderParam;
use crate::protocol::{ErrorCode, ProtocolVersion};

/// A request's answer: its result as the server sent it, or why there is none.
pub(crate) type Answer = Result<Received, ClientError>;

pub(crate) type LinkFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a transport hands the engine.
pub(crate) enum Inbound {
    /// One JSON-RPC message (or a batch) from the server, built here (a test, an empty answer
    /// a link stands in for).
    Message(Value),
    /// One JSON-RPC message (or a batch) the server sent, read ([`peek::read`]).
    Read(peek::Read),
    /// A request failed below JSON-RPC (an HTTP status without a JSON-RPC body, a stream that
    /// ended before the answer).
    Failed { id: i64, error: ClientError },
    /// The connection is gone: every pending request fails with this.
    Closed(ClientError),
}

/// One message for the transport, with what the HTTP headers mirror.
pub(crate) struct Outgoing {
    pub(crate) body: Vec<u8>,
    /// The request's id (requests only).
    pub(crate) id: Option<i64>,
    /// The method (requests and notifications; `None` for the client's answers).
    pub(crate) method: Option<String>,
    /// `MCP-Protocol-Version` for this message (`None` before `initialize` completes).
    pub(crate) version: Option<&'static str>,
    /// `Mcp-Name` and `Mcp-Param-*`.
    pub(crate) headers: Vec<(String, String)>,
}

/// A transport: sends messages; what arrives goes to the inbox it was made with.
pub(crate) trait Link: Send + Sync + 'static {
    /// Sends one message; returns once it is handed over (an HTTP response has begun).
    fn send(&self, out: Outgoing) -> LinkFuture<'_, Result<(), ClientError>>;
    /// The era and version are settled (HTTP: the session's GET stream opens now, before
    /// any later request, so nothing the server sends on it is missed).
    fn negotiated(&self, _version: ProtocolVersion) -> LinkFuture<'_, ()> {
        Box::pin(async {})
    }
    /// Nothing waits for request `id` any more (answered, or given up): stop reading its
    /// stream (HTTP: close it, and do not resume it).
    fn abandon(&self, _id: i64) {}
    /// Forgets the HTTP session, so that the next `initialize` starts a new one.
    fn reset_session(&self) {}
    /// The HTTP session's id, if there is one.
    fn session_id(&self) -> Option<String> {
        None
    }
    /// Ends the connection (HTTP: `DELETE` the session; stdio: close stdin, end the child).
    fn close(&self) -> LinkFuture<'_, ()>;
}

/// What connecting settled.
#[derive(Clone, Debug)]
pub(crate) struct Negotiated {
    pub(crate) version: ProtocolVersion,
    pub(crate) server_info: Value,
    pub(crate) capabilities: Value,
    pub(crate) instructions: Option<String>,
}

pub(crate) type ProgressFn = Arc<dyn Fn(&Value) + Send + Sync>;

pub(crate) struct Core {
    pub(crate) this: Weak<Core>,
    pub(crate) link: Box<dyn Link>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    next_id: AtomicI64,
    pub(crate) handlers: Handlers,
    pub(crate) events: broadcast::Sender<ServerNotification>,
    progress: Mutex<HashMap<String, ProgressFn>>,
    pub(crate) negotiated: RwLock<Option<Negotiated>>,
    tool_headers: Mutex<HashMap<String, Vec<HeaderParam>>>,
    pub(crate) client_info: Value,
    /// The `_meta` members of every 2026-07-28 request that never change.
    era_meta: EraMeta,
    pub(crate) limits: Limits,
    pub(crate) server_requests: ServerRequests,
    pub(crate) log_level: Mutex<Option<String>>,
    /// Lists and discovery kept for their `ttlMs` (when the builder turned it on).
    pub(crate) cache: super::cache::ResponseCache,
    closed: AtomicBool,
    /// The connection ended on its own (a spawned server exited, a stream closed for good).
    lost: AtomicBool,
}

/// The server's requests being answered, and the refusals of those past the bound.
pub(crate) struct ServerRequests {
    /// One permit per request being answered (`max_server_requests`).
    pub(crate) permits: Arc<Semaphore>,
    pub(crate) limit: usize,
    /// Refusals waiting to be sent (by one task, so a flood costs no task each). When it is
    /// full the routing waits, and so does the reading of what the server sends (routing is
    /// done by the reading task): a flood is slowed to the pace of its refusals.
    pub(crate) refusals: mpsc::Sender<Outgoing>,
}

impl ServerRequests {
    /// The bound, and the queue of refusals (the receiver goes to the router).
    pub(crate) fn new(limit: usize) -> (ServerRequests, mpsc::Receiver<Outgoing>) {
        let (refusals, rx) = mpsc::channel(REFUSALS);
        let requests = ServerRequests {
            permits: Arc::new(Semaphore::new(limit)),
            limit,
            refusals,
        };
        (requests, rx)
    }
}

/// The most `InputRequiredResult` rounds one call may take (a server that keeps asking is
/// broken or hostile).
const MAX_ROUNDS: usize = 16;

impl Core {
    /// The engine, and the receiver of its refusals of server requests: the caller starts
    /// the router with both (`router::spawn_router`).
    pub(crate) fn new(
        link: Box<dyn Link>,
        handlers: Handlers,
        client_info: Value,
        limits: Limits,
    ) -> (Arc<Core>, mpsc::Receiver<Outgoing>) {
        let (server_requests, refusals) = ServerRequests::new(limits.max_server_requests);
        let era_meta = EraMeta::new(&client_info, &handlers.capabilities(false));
        let core = Arc::new_cyclic(|this| Core {
            this: this.clone(),
            link,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            handlers,
            events: broadcast::channel(1024).0,
            progress: Mutex::new(HashMap::new()),
            negotiated: RwLock::new(None),
            tool_headers: Mutex::new(HashMap::new()),
            client_info,
            era_meta,
            limits,
            server_requests,
            log_level: Mutex::new(None),
            cache: super::cache::ResponseCache::new(limits.cache),
            closed: AtomicBool::new(false),
            lost: AtomicBool::new(false),
        });
        (core, refusals)
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.negotiated.read().unwrap().as_ref().map(|n| n.version)
    }

    pub(crate) fn is_stateless(&self) -> bool {
        self.version() == Some(ProtocolVersion::V2026_07_28)
    }

    /// Records what connecting settled, and tells the transport.
    pub(crate) async fn set_negotiated(&self, n: Negotiated) {
        let version = n.version;
        *self.negotiated.write().unwrap() = Some(n);
        self.link.negotiated(version).await;
    }

    /// Records what `initialize` settled; the transport is told after
    /// `notifications/initialized` (a session's GET stream opens only then).
    pub(crate) fn set_initialized(&self, n: Negotiated) {
        *self.negotiated.write().unwrap() = Some(n);
    }

    /// The client capabilities this client declares.
    pub(crate) fn capabilities(&self, session: bool) -> Value {
        self.handlers.capabilities(session)
    }

    /// The `_meta` a 2026-07-28 request carries.
    pub(crate) fn stateless_meta(&self) -> Map<String, Value> {
        self.era_meta
            .to_map(self.log_level.lock().unwrap().as_deref())
    }

    /// The `x-mcp-header` parameters of the tools just listed (those that have any): they
    /// replace what an earlier list said, so tools the server no longer lists are forgotten.
    pub(crate) fn remember_tool_headers(&self, tools: HashMap<String, Vec<HeaderParam>>) {
        *self.tool_headers.lock().unwrap() = tools;
    }

    pub(crate) fn knows_tool_headers(&self, tool: &str) -> bool {
        self.tool_headers.lock().unwrap().contains_key(tool)
    }

    fn message(&self, id: Option<i64>, method: &str, params: &Value) -> Outgoing {
        self.message_with(
            id,
            method,
            SentParams {
                params,
                raw: None,
                era: None,
            },
        )
    }

    /// The message for `params`, written straight from what they borrow: nothing is copied.
    fn message_with(&self, id: Option<i64>, method: &str, params: SentParams<'_>) -> Outgoing {
        let mut extra = Vec::new();
        if let Some(name) = headers::name_of(method, params.params) {
            extra.push(("Mcp-Name".to_owned(), name));
        }
        if method == "tools/call" {
            let tool = params
                .params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(p) = self.tool_headers.lock().unwrap().get(tool) {
                let raw = params.raw.filter(|(name, _)| *name == "arguments");
                let parsed = raw.and_then(|(_, text)| serde_json::from_str(text.get()).ok());
                let args = match &parsed {
                    Some(args) => args,
                    None => params.params.get("arguments").unwrap_or(&Value::Null),
                };
                extra.extend(headers::param_headers(p, args));
            }
        }
        let msg = Message {
            id,
            jsonrpc: "2.0",
            method,
            params,
        };
        Outgoing {
            body: serde_json::to_vec(&msg).unwrap_or_default(),
            id,
            method: Some(method.to_owned()),
            version: match method {
                "initialize" => None,
                "server/discover" => Some(ProtocolVersion::V2026_07_28.as_str()),
                _ => self.version().map(ProtocolVersion::as_str),
            },
            headers: extra,
        }
    }

    /// Sends a notification (within the request timeout).
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        self.check_open()?;
        self.send_within_deadline(self.message(None, method, &params))
            .await
    }

    /// Sends what waits for no answer (a notification, an answer to the server) within the
    /// request timeout: a server that stops reading cannot hold the sender.
    pub(crate) async fn send_within_deadline(&self, out: Outgoing) -> Result<(), ClientError> {
        within(self.limits.request_timeout, self.link.send(out)).await
    }

    fn check_open(&self) -> Result<(), ClientError> {
        if self.closed.load(Ordering::Acquire) {
            Err(ClientError::Closed)
        } else {
            Ok(())
        }
    }

    /// A fresh request id.
    pub(crate) fn alloc_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// One JSON-RPC request as given: no `_meta` added, no input rounds. `timeout`: `None`
    /// for the client's request timeout.
    pub(crate) async fn request_raw(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let limit = timeout.unwrap_or(self.limits.request_timeout);
        self.request_raw_id(self.alloc_id(), method, params, Some(limit))
            .await
    }

    /// [`request_raw`](Self::request_raw) with a given id. `limit` bounds the whole exchange:
    /// sending (a pipe that stops draining, a connection that never answers), the response
    /// head and body, and the wait for the answer (`None`: for as long as the answer takes,
    /// as a listen stream does).
    pub(crate) async fn request_raw_id(
        &self,
        id: i64,
        method: &str,
        params: Value,
        limit: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let out = self.message(Some(id), method, &params);
        drop(params);
        self.exchange(id, method, out, limit).await?.to_value()
    }

    /// Sends request `out` (id `id`) and waits for its answer, as
    /// [`request_raw_id`](Self::request_raw_id) describes.
    async fn exchange(
        &self,
        id: i64,
        method: &str,
        out: Outgoing,
        limit: Option<Duration>,
    ) -> Answer {
        self.check_open()?;
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        let mut guard = Pending {
            core: self,
            id,
            armed: true,
            // The spec: `initialize` is never cancelled; a probe is not a request worth telling
            // a session-era server about; a 2026-07-28 request is cancelled by closing its
            // stream (HTTP) and has no notification to send.
            notify: !self.is_stateless() && !matches!(method, "initialize" | "server/discover"),
        };
        let exchange = async {
            if let Err(e) = self.link.send(out).await {
                return Exchange::NotSent(e);
            }
            match rx.await {
                Ok(answer) => Exchange::Answered(answer),
                Err(_) => Exchange::Gone,
            }
        };
        let ended = match limit {
            Some(limit) => tokio::time::timeout(limit, exchange)
                .await
                .map_err(|_| ClientError::Timeout(limit)),
            None => Ok(exchange.await),
        };
        match ended {
            // Given up part way, maybe mid-send (a stdio link finishes the line before the
            // next message, so a cancellation follows a whole request).
            Err(timeout) => Err(timeout),
            Ok(Exchange::NotSent(e)) => {
                guard.notify = false; // it may never have arrived
                Err(e)
            }
            Ok(Exchange::Gone) => Err(ClientError::Closed),
            Ok(Exchange::Answered(answer)) => {
                guard.armed = false;
                answer
            }
        }
    }

    /// A request with the era's rules: `_meta` on every 2026-07-28 request, and
    /// `InputRequiredResult` rounds answered by the handlers (`answer`) and retried (new id,
    /// the same params, `inputResponses`, `requestState` echoed), or returned as they are (a
    /// proxy hands them to its own client, and sends its answers back as they are); within
    /// `timeout` (`None`: the request timeout). `params` are borrowed (written out as they are,
    /// the era's `_meta` merged in as they are written), and copied only for a second round;
    /// `raw`, one more member of them, is written as the text it came as.
    /// The result is as the server sent it (a proxy passes it on without building it).
    pub(crate) async fn request_with(
        &self,
        method: &str,
        params: &Value,
        raw: RawMember<'_>,
        timeout: Option<Duration>,
        answer: bool,
    ) -> Answer {
        let mut params = match params {
            Value::Object(_) => Cow::Borrowed(params),
            // None are sent as `{}` (where a 2026-07-28 `_meta` goes).
            Value::Null => Cow::Owned(Value::Object(Map::new())),
            other => {
                return Err(ClientError::protocol(format!(
                    "params must be an object, not {other}"
                )));
            }
        };
        let limit = timeout.unwrap_or(self.limits.request_timeout);
        let mut version_retried = false;
        for _ in 0..MAX_ROUNDS {
            // The era's `_meta`, under the request's own (which wins).
            let level = self.log_level.lock().unwrap().clone();
            let era = self
                .is_stateless()
                .then_some((&self.era_meta, level.as_deref()));
            let id = self.alloc_id();
            let sent = SentParams {
                params: &params,
                raw,
                era,
            };
            let out = self.message_with(Some(id), method, sent);
            let result = match self.exchange(id, method, out, Some(limit)).await {
                Err(e) if !version_retried && self.is_stateless() && offers_our_version(&e) => {
                    version_retried = true;
                    continue;
                }
                other => other?,
            };
            if !answer || result.result_type().as_deref() != Some("input_required") {
                return Ok(result);
            }
            let result = result.to_value()?;
            let responses = self.answer_inputs(&result).await?;
            let Value::Object(params) = params.to_mut() else {
                unreachable!("checked above: an object");
            };
            params.insert("inputResponses".into(), Value::Object(responses));
            match result.get("requestState") {
                Some(state) => params.insert("requestState".into(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        Err(ClientError::protocol(format!(
            "{method}: the server asked for input more than {MAX_ROUNDS} times"
        )))
    }

    /// Answers every entry of an `InputRequiredResult`'s `inputRequests` with the handlers.
    async fn answer_inputs(&self, result: &Value) -> Result<Map<String, Value>, ClientError> {
        let mut responses = Map::new();
        let Some(requests) = result.get("inputRequests").and_then(Value::as_object) else {
            return Ok(responses);
        };
        let most = self.limits.max_server_requests;
        if requests.len() > most {
            return Err(ClientError::protocol(format!(
                "the server asked for {} inputs in one round; this client answers at most {most}",
                requests.len()
            )));
        }
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let answer = self.handlers.answer(method, params).await?;
            responses.insert(key.clone(), answer);
        }
        Ok(responses)
    }

    /// Calls `on_progress` with each `notifications/progress` params for `token` until the
    /// returned guard drops.
    pub(crate) fn watch_progress(
        &self,
        token: String,
        on_progress: ProgressFn,
    ) -> impl Drop + use<'_> {
        self.progress
            .lock()
            .unwrap()
            .insert(token.clone(), on_progress);
        ProgressWatch { core: self, token }
    }

    pub(crate) fn next_progress_token(&self) -> String {
        format!("p-{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Closes the connection; later calls fail with [`ClientError::Closed`].
    pub(crate) async fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.link.close().await;
        self.fail_all(ClientError::Closed);
    }

    /// The connection ended on its own: every request still waiting fails with `error`, and
    /// [`is_gone`](Self::is_gone) says so from now on.
    pub(crate) fn lose(&self, error: ClientError) {
        self.lost.store(true, Ordering::Release);
        self.fail_all(error);
    }

    /// Whether the connection is over: closed, or ended on its own ([`lose`](Self::lose)).
    pub(crate) fn is_gone(&self) -> bool {
        self.closed.load(Ordering::Acquire) || self.lost.load(Ordering::Acquire)
    }

    /// Fails every request still waiting with `error` (or [`ClientError::Closed`] once the
    /// client is closed).
    pub(crate) fn fail_all(&self, error: ClientError) {
        let pending: Vec<_> = self.pending.lock().unwrap().drain().collect();
        for (_, tx) in pending {
            let _ = tx.send(Err(if self.closed.load(Ordering::Acquire) {
                ClientError::Closed
            } else {
                error.clone()
            }));
        }
    }

    /// Hands `answer` to request `id`; `false` when nothing waits for it (given up on:
    /// timed out, dropped).
    pub(crate) fn answer(&self, id: i64, answer: Answer) -> bool {
        let Some(tx) = self.pending.lock().unwrap().remove(&id) else {
            return false;
        };
        let _ = tx.send(answer);
        true
    }

    /// How many requests wait for an answer.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn pending_len(&self) -> usize {
        self.pending.lock().unwrap().len()
    }

    /// The progress callback for `token`, if a call watches it.
    pub(crate) fn progress_watcher(&self, token: &str) -> Option<ProgressFn> {
        self.progress.lock().unwrap().get(token).cloned()
    }
}

/// Whether `e` is -32022 (unsupported protocol version) naming 2026-07-28 among the versions
/// the server supports: the request is worth sending again at that version.
pub(crate) fn offers_our_version(e: &ClientError) -> bool {
    let ClientError::Rpc(e) = e else {
        return false;
    };
    e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        && e.data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(Value::as_array)
            .is_some_and(|v| {
                v.iter()
                    .any(|v| v.as_str() == Some(ProtocolVersion::V2026_07_28.as_str()))
            })
}

/// How a request's exchange ended, short of its deadline.
enum Exchange {
    NotSent(ClientError),
    Answered(Answer),
    /// The client dropped the request's sender (closed, or the connection ended).
    Gone,
}

/// A request in flight: removed from the pending map when it ends, and cancelled at the
/// server when it is given up (timeout, the caller's future dropped).
struct Pending<'a> {
    core: &'a Core,
    id: i64,
    armed: bool,
    /// Whether a `notifications/cancelled` goes to the server when it is given up.
    notify: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.core.pending.lock().unwrap().remove(&self.id);
        if !self.armed || self.core.closed.load(Ordering::Acquire) {
            return;
        }
        self.core.link.abandon(self.id);
        if !self.notify {
            return;
        }
        let Some(core) = self.core.this.upgrade() else {
            return;
        };
        let id = self.id;
        // An HTTP request is cancelled by closing its stream (done above); in the session era
        // the server is told as well.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let params = json!({"requestId": id, "reason": "the client gave up waiting"});
                let _ = core.notify("notifications/cancelled", params).await;
            });
        }
    }
}

struct ProgressWatch<'a> {
    core: &'a Core,
    token: String,
}

impl Drop for ProgressWatch<'_> {
    fn drop(&mut self) {
        self.core.progress.lock().unwrap().remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::McpError;

    #[test]
    fn a_version_error_naming_ours_is_retried() {
        let e: McpError = serde_json::from_value(json!({
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}
        }))
        .unwrap();
        assert!(offers_our_version(&ClientError::Rpc(e)));
        let other: McpError = serde_json::from_value(json!({
            "code": -32022, "message": "m", "data": {"supported": ["2025-11-25"]}
        }))
        .unwrap();
        assert!(!offers_our_version(&ClientError::Rpc(other)));
    }
}
