//! Request routing and the Streamable HTTP endpoint: POST, GET and DELETE on the MCP path, for
//! both protocol eras.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::header::{ACCEPT, ALLOW, CONTENT_LENGTH};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::body::{self, HttpResponse};
use super::config::HttpConfig;
use super::events::EventStore;
use super::guard::{self, Refusal};
use super::legacy;
use super::session::{Full, Session, Sessions};
use crate::Server;
use crate::outbound::Sink;
use crate::protocol::jsonrpc::Encoded;
use crate::protocol::jsonrpc::{self, Incoming as Message};
use crate::protocol::{ErrorCode, McpError, ProtocolVersion};
use crate::server::connection::{Connection, Pending, Step};
use crate::server::era;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// Everything a request handler needs.
pub(crate) struct State {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Arc<Sessions>,
    /// Stateless (2026-07-28) requests share one connection: it never opens a session.
    pub(crate) stateless: Arc<Connection>,
    pub(crate) loopback: bool,
    /// Flips to `true` at shutdown, ending SSE streams.
    pub(crate) shutdown: watch::Receiver<bool>,
}

pub(crate) async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    let start = Instant::now();
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    let response = route(&state, req).await;
    tracing::info!(%method, path, status = response.status().as_u16(), ms = start.elapsed().as_millis() as u64, "http request");
    Ok(response)
}

async fn route(state: &Arc<State>, req: Request<Incoming>) -> HttpResponse {
    // Nothing is read before the Host/Origin guard has passed.
    let authority = req.uri().authority().map(|a| a.as_str().to_owned());
    if let Err(refusal) = guard::check(
        req.headers(),
        authority.as_deref(),
        &state.config,
        state.loopback,
    ) {
        let why = match refusal {
            Refusal::Host(h) => format!("Host {h:?} is not allowed (DNS-rebinding protection)"),
            Refusal::Origin(o) => format!("Origin {o:?} is not allowed"),
        };
        return body::error(StatusCode::FORBIDDEN, McpError::invalid_request(why));
    }
    let path = req.uri().path();
    let endpoint = &state.config.path;
    let is_mcp = path == endpoint || path.strip_suffix('/') == Some(endpoint.as_str());
    if is_mcp {
        return match *req.method() {
            Method::POST => post(state, req).await,
            Method::GET => get(state, req.headers()),
            Method::DELETE => delete(state, req.headers()),
            _ => not_allowed("GET, POST, DELETE"),
        };
    }
    if state.config.legacy_sse {
        match (req.method(), path) {
            (&Method::GET, "/sse") => return legacy::open(state, req.headers()),
            (&Method::POST, "/messages") => return legacy::post(state, req).await,
            (_, "/sse") => return not_allowed("GET"),
            (_, "/messages") => return not_allowed("POST"),
            _ => {}
        }
    }
    body::error(
        StatusCode::NOT_FOUND,
        McpError::invalid_request(format!("No MCP endpoint at {path}; use {endpoint}")),
    )
}

fn not_allowed(allow: &'static str) -> HttpResponse {
    let mut r = body::error(
        StatusCode::METHOD_NOT_ALLOWED,
        McpError::invalid_request("Method not allowed"),
    );
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    r
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Reads the body, refusing more than the limit with 413.
pub(crate) async fn read_body(
    body: Incoming,
    headers: &HeaderMap,
    limit: usize,
) -> Result<Bytes, HttpResponse> {
    let too_large = || {
        body::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            McpError::invalid_request(format!("Request body larger than {limit} bytes")),
        )
    };
    if header(headers, CONTENT_LENGTH.as_str())
        .and_then(|l| l.parse::<usize>().ok())
        .is_some_and(|l| l > limit)
    {
        return Err(too_large());
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(_) => Err(body::error(
            StatusCode::BAD_REQUEST,
            McpError::invalid_request("Could not read the request body"),
        )),
    }
}

async fn post(state: &Arc<State>, req: Request<Incoming>) -> HttpResponse {
    let (parts, incoming) = req.into_parts();
    let bytes = match read_body(incoming, &parts.headers, state.config.max_body_bytes).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return body::error(
            StatusCode::BAD_REQUEST,
            McpError::new(ErrorCode::PARSE_ERROR, "Parse error: invalid UTF-8"),
        );
    };
    let headers = &parts.headers;
    let decoded = jsonrpc::decode(text);
    // Errors found here still name the request they answer.
    let request_id = match &decoded {
        Ok(Message::Request(req)) => Some(req.id.clone()),
        Err(e) => e.id.clone(),
        _ => None,
    };
    let fail = |status: StatusCode, e: McpError| {
        body::json(status, jsonrpc::encode_error(request_id.as_ref(), &e))
    };
    // The stateless era: a request with 2026-07-28 `_meta`, or, without a session, one that says
    // 2026-07-28 in its header (its missing `_meta` is then reported by the dispatcher: -32602).
    let stateless_header =
        header(headers, VERSION_HEADER) == Some(ProtocolVersion::V2026_07_28.as_str());
    if let Ok(Message::Request(req)) = &decoded {
        let with_meta = era::has_stateless_meta(req);
        if with_meta || (stateless_header && header(headers, SESSION_HEADER).is_none()) {
            if with_meta && let Err(e) = check_stateless_headers(headers, req) {
                return fail(StatusCode::BAD_REQUEST, e);
            }
            return stateless(state, text).await;
        }
    }
    if let Some(id) = header(headers, SESSION_HEADER) {
        let Some(session) = state.sessions.get(id) else {
            return fail(
                StatusCode::NOT_FOUND,
                McpError::invalid_request("Unknown or expired session: initialize again"),
            );
        };
        if let Some(v) = header(headers, VERSION_HEADER)
            && ProtocolVersion::parse(v).is_none()
        {
            return fail(
                StatusCode::BAD_REQUEST,
                McpError::invalid_request(format!("Unsupported MCP-Protocol-Version {v:?}")),
            );
        }
        return in_session(state, &session, text).await;
    }
    match decoded {
        Ok(Message::Request(req)) if req.method == "initialize" => initialize(state, text).await,
        Err(e) if !e.notification => fail(StatusCode::BAD_REQUEST, e.error),
        _ => fail(
            StatusCode::BAD_REQUEST,
            McpError::invalid_request(
                "Missing Mcp-Session-Id header: send `initialize` first (protocol 2025-11-25 and earlier), \
                 or 2026-07-28 `_meta` on every request",
            ),
        ),
    }
}

async fn initialize(state: &Arc<State>, text: &str) -> HttpResponse {
    let session = match state.sessions.create(&state.server, None) {
        Ok(s) => s,
        Err(Full(max)) => {
            return body::error(
                StatusCode::SERVICE_UNAVAILABLE,
                McpError::internal(format!("Too many sessions (limit {max}); try again later")),
            );
        }
    };
    let mut response = in_session(state, &session, text).await;
    // Only a successful handshake opens a session.
    if session.conn.session().is_some() {
        let id = HeaderValue::from_str(&session.id).expect("hex is a valid header value");
        response.headers_mut().insert(SESSION_HEADER, id);
        tracing::debug!(session = %session.id, "session opened");
        state.sessions.insert(session);
    }
    response
}

/// Runs one message of a session. A handler that must wait runs as a task of its own: in the
/// session era a dropped connection is not a cancellation (the client sends
/// `notifications/cancelled`).
async fn in_session(state: &Arc<State>, session: &Arc<Session>, text: &str) -> HttpResponse {
    respond(state, &session.conn, text, Some(session), |_| {
        StatusCode::OK
    })
    .await
}

/// A 2026-07-28 request. Dropping this future (the client closed the connection) drops the
/// handler: closing the stream is the cancellation in this era.
async fn stateless(state: &Arc<State>, text: &str) -> HttpResponse {
    respond(state, &state.stateless, text, None, stateless_status).await
}

/// Runs a message and answers it: JSON when the handler sends nothing before its result, an SSE
/// stream (its notifications, then the result) when it does. In a session the handler runs as a
/// task of its own and the stream's events are kept for resumption.
async fn respond(
    state: &Arc<State>,
    conn: &Arc<Connection>,
    text: &str,
    session: Option<&Arc<Session>>,
    status_of: fn(&[u8]) -> StatusCode,
) -> HttpResponse {
    // Bounded: a client that reads slowly loses notifications, never the server its memory.
    let (ntx, mut notes) = mpsc::channel::<Encoded>(256);
    let sink = Sink::new(move |message| {
        let _ = ntx.try_send(message);
    });
    // JSON-only: the request gets no sink, so nothing can turn its answer into a stream.
    let sink = (!state.config.json_only).then_some(sink);
    let fut = match conn.on_message_with(text, sink) {
        Step::Reply(out) => return body::json(status_of(&out), out),
        Step::Nothing => return body::empty(StatusCode::ACCEPTED),
        Step::Run(fut) => fut,
    };
    let mut result: Pending = match session {
        Some(_) => Box::pin(async move { tokio::spawn(fut).await.ok().flatten() }),
        None => fut,
    };
    let early = tokio::select! {
        biased;
        Some(note) = notes.recv() => Ok(note),
        out = &mut result => Err(out),
    };
    let (first, done) = match early {
        Ok(note) => (note, None),
        // The result came first; a notification that raced it still goes first, on a stream.
        Err(out) => match notes.try_recv() {
            Ok(note) => (note, Some(out)),
            Err(_) => {
                return match out {
                    Some(out) => body::json(status_of(&out), out),
                    None => body::empty(StatusCode::ACCEPTED),
                };
            }
        },
    };
    let (tx, rx) = mpsc::channel(64);
    let mut events = stream_events(state, session);
    let keep_alive = state.config.sse_keep_alive;
    let in_session = session.is_some();
    tokio::spawn(async move {
        // In a session a lost client is not a cancellation: the events are still recorded
        // for a resuming GET. Without one (2026-07-28), dropping `result` cancels the handler.
        let mut client = true;
        if let Some(priming) = events.priming() {
            deliver(&tx, priming, &mut client).await;
        }
        deliver(&tx, events.event(&first), &mut client).await;
        let out = match done {
            Some(out) => out,
            None => loop {
                if !client && !in_session {
                    return;
                }
                tokio::select! {
                    biased;
                    Some(note) = notes.recv() => deliver(&tx, events.event(&note), &mut client).await,
                    out = &mut result => break out,
                    _ = tx.closed(), if client => client = false,
                    _ = tokio::time::sleep(keep_alive) => {
                        deliver(&tx, Bytes::from_static(b": keep-alive\n\n"), &mut client).await;
                    }
                }
            },
        };
        for note in std::iter::from_fn(|| notes.try_recv().ok()) {
            deliver(&tx, events.event(&note), &mut client).await;
        }
        if let Some(out) = out {
            deliver(&tx, events.event(&out), &mut client).await;
        }
        events.finish();
    });
    body::sse(rx)
}

/// Sends an event while the client is there; after it left, nothing (events are still recorded).
async fn deliver(tx: &mpsc::Sender<Bytes>, event: Bytes, client: &mut bool) {
    if *client && tx.send(event).await.is_err() {
        *client = false;
    }
}

/// Numbers and records the events of one SSE response (in a session), or just frames them.
struct StreamEvents {
    target: Option<(Arc<Session>, u64, Arc<dyn EventStore>)>,
    retry: u128,
}

fn stream_events(state: &Arc<State>, session: Option<&Arc<Session>>) -> StreamEvents {
    StreamEvents {
        target: session.map(|s| (s.clone(), s.new_stream(), state.config.events.clone())),
        retry: state.config.sse_retry.as_millis(),
    }
}

impl StreamEvents {
    /// The priming event (an id and a retry hint, no data), for resumable streams of clients
    /// at 2025-11-25 or later (older SDKs fail on an event with empty data).
    fn priming(&mut self) -> Option<Bytes> {
        let (session, stream, _) = self.target.as_ref()?;
        if !session.primes() {
            return None;
        }
        let (id, _) = session.event_id(*stream);
        Some(Bytes::from(format!(
            "id: {id}\nretry: {}\ndata: \n\n",
            self.retry
        )))
    }

    fn event(&mut self, message: &[u8]) -> Bytes {
        match &self.target {
            Some((session, stream, store)) => {
                let (id, seq) = session.event_id(*stream);
                let event = body::event(Some(&id), None, message);
                store.append(&session.id, *stream, seq, event.clone());
                event
            }
            None => body::event(None, None, message),
        }
    }

    fn finish(&self) {
        if let Some((session, stream, store)) = &self.target {
            store.finish(&session.id, *stream);
        }
    }
}

/// The HTTP status of a 2026-07-28 response, from its JSON-RPC error (the spec's mapping).
fn stateless_status(out: &[u8]) -> StatusCode {
    #[derive(Deserialize)]
    struct Shape {
        error: Option<ErrorShape>,
    }
    #[derive(Deserialize)]
    struct ErrorShape {
        code: i32,
        data: Option<Value>,
    }
    let Ok(Shape { error: Some(e) }) = serde_json::from_slice::<Shape>(out) else {
        return StatusCode::OK;
    };
    match ErrorCode(e.code) {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        // A missing `_meta` field is 400; other invalid params are ordinary errors.
        ErrorCode::INVALID_PARAMS
            if e.data.as_ref().is_some_and(|d| d.get("missing").is_some()) =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// Decodes a header value that may be `=?base64?…?=` (for values that are not plain ASCII).
fn header_value(raw: &str) -> Option<String> {
    use base64::Engine as _;
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(raw.to_owned()),
    }
}

/// 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` must be present and agree
/// with the body (-32020 otherwise).
fn check_stateless_headers(
    headers: &HeaderMap,
    req: &jsonrpc::Request<'_>,
) -> Result<(), McpError> {
    let mismatch = |what: String| McpError::new(ErrorCode::HEADER_MISMATCH, what);
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<Meta<'a>>,
        // Any JSON: a body whose `name` is not a string must still have its headers checked
        // (the dispatcher then reports the bad `name` itself).
        name: Option<Value>,
        uri: Option<Value>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
        version: Option<std::borrow::Cow<'a, str>>,
    }
    let params: Params<'_> = req
        .params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Params {
            meta: None,
            name: None,
            uri: None,
        });
    let check = |name: &str, expected: Option<&str>| -> Result<(), McpError> {
        let got = header(headers, name).and_then(header_value);
        match (got.as_deref(), expected) {
            (Some(g), Some(e)) if g == e => Ok(()),
            (None, Some(_)) => Err(mismatch(format!("Missing required header {name}"))),
            (Some(g), Some(e)) => Err(mismatch(format!(
                "Header {name} is {g:?} but the body says {e:?}"
            ))),
            (_, None) => Ok(()),
        }
    };
    let version = params.meta.as_ref().and_then(|m| m.version.as_deref());
    check("mcp-protocol-version", version)?;
    check("mcp-method", Some(&req.method))?;
    let named = match &*req.method {
        "tools/call" | "prompts/get" => params.name.as_ref(),
        "resources/read" => params.uri.as_ref(),
        _ => None,
    };
    let name = named.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    check("mcp-name", name.as_deref())
}

fn get(state: &Arc<State>, headers: &HeaderMap) -> HttpResponse {
    let Some(id) = header(headers, SESSION_HEADER) else {
        if header(headers, VERSION_HEADER) == Some(ProtocolVersion::V2026_07_28.as_str()) {
            return not_allowed("POST");
        }
        return body::error(
            StatusCode::BAD_REQUEST,
            McpError::invalid_request("Missing Mcp-Session-Id header"),
        );
    };
    let Some(session) = state.sessions.get(id) else {
        return body::error(
            StatusCode::NOT_FOUND,
            McpError::invalid_request("Unknown or expired session: initialize again"),
        );
    };
    if !header(headers, ACCEPT.as_str())
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"))
    {
        return body::error(
            StatusCode::NOT_ACCEPTABLE,
            McpError::invalid_request("GET opens an SSE stream: accept text/event-stream"),
        );
    }
    let (tx, rx) = mpsc::channel(64);
    let priming =
        |session: &Session, stream: u64| session.primes().then(|| session.event_id(stream).0);
    // Resuming names one of the session's streams in `Last-Event-ID`: what the store kept after
    // that event is sent again, and a POST's stream is followed until its result, then ends.
    if let Some(last) = header(headers, "last-event-id")
        && let Some(stream) = session.known_stream(last)
    {
        let mut after = last
            .split_once('-')
            .and_then(|(_, seq)| seq.parse::<u64>().ok())
            .unwrap_or(0);
        let store = state.config.events.clone();
        let (events, finished) = store.replay(&session.id, stream, after);
        if events.is_empty() && !finished {
            // A GET stream (nothing recorded on those yet): carry on with keep-alives.
            spawn_stream(
                state,
                tx,
                priming(&session, stream),
                None,
                Some(session.ended()),
            );
            return body::sse(rx);
        }
        let retry = state.config.sse_retry.as_millis();
        let first = priming(&session, stream)
            .map(|id| Bytes::from(format!("id: {id}\nretry: {retry}\ndata: \n\n")));
        let mut ended = session.ended();
        let session = session.clone();
        tokio::spawn(async move {
            if let Some(first) = first
                && tx.send(first).await.is_err()
            {
                return;
            }
            loop {
                let (events, finished) = store.replay(&session.id, stream, after);
                for (seq, event) in events {
                    after = seq;
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
                if finished {
                    return;
                }
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_millis(25)) => {}
                    _ = tx.closed() => return,
                    _ = ended.changed() => return,
                }
            }
        });
        return body::sse(rx);
    }
    let stream = session.new_stream();
    spawn_stream(
        state,
        tx,
        priming(&session, stream),
        None,
        Some(session.ended()),
    );
    body::sse(rx)
}

/// Feeds an SSE stream: a priming event (its id, a `retry` hint, empty data), then keep-alive
/// comments until the client goes away, its session ends, or the server shuts down. `first` is
/// sent after the priming event.
pub(crate) fn spawn_stream(
    state: &Arc<State>,
    tx: mpsc::Sender<Bytes>,
    priming_id: Option<String>,
    first: Option<Bytes>,
    ended: Option<watch::Receiver<bool>>,
) {
    let keep_alive = state.config.sse_keep_alive;
    let retry = state.config.sse_retry.as_millis();
    let mut shutdown = state.shutdown.clone();
    // A stream outside a session never ends this way: its sender lives as long as the task.
    let (keep, unended) = watch::channel(false);
    let mut ended = ended.unwrap_or(unended);
    tokio::spawn(async move {
        let _keep = keep;
        if let Some(id) = priming_id {
            let priming = Bytes::from(format!("id: {id}\nretry: {retry}\ndata: \n\n"));
            if tx.send(priming).await.is_err() {
                return;
            }
        }
        if let Some(first) = first
            && tx.send(first).await.is_err()
        {
            return;
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep(keep_alive) => {
                    if tx.send(Bytes::from_static(b": keep-alive\n\n")).await.is_err() {
                        return;
                    }
                }
                _ = shutdown.changed() => return,
                // The session ended (or was dropped with its sender).
                _ = ended.changed() => return,
                _ = tx.closed() => return,
            }
        }
    });
}

fn delete(state: &Arc<State>, headers: &HeaderMap) -> HttpResponse {
    let Some(id) = header(headers, SESSION_HEADER) else {
        return body::error(
            StatusCode::BAD_REQUEST,
            McpError::invalid_request("Missing Mcp-Session-Id header"),
        );
    };
    match state.sessions.remove(id) {
        Some(_) => {
            state.config.events.remove_session(id);
            tracing::debug!(session = %id, "session ended by the client");
            body::empty(StatusCode::OK)
        }
        None => body::error(
            StatusCode::NOT_FOUND,
            McpError::invalid_request("Unknown or expired session"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_may_be_base64() {
        assert_eq!(header_value("tools/call").as_deref(), Some("tools/call"));
        assert_eq!(header_value("=?base64?w6l0w6k=?=").as_deref(), Some("été"));
        assert_eq!(header_value("=?base64?!!?="), None);
    }

    #[test]
    fn stateless_errors_map_to_statuses() {
        let err = |code: i32, data: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"{data}}}}}"#)
                .into_bytes()
        };
        assert_eq!(stateless_status(&err(-32601, "")), StatusCode::NOT_FOUND);
        assert_eq!(stateless_status(&err(-32022, "")), StatusCode::BAD_REQUEST);
        assert_eq!(
            stateless_status(&err(-32602, r#","data":{"missing":["x"]}"#)),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(stateless_status(&err(-32602, "")), StatusCode::OK);
        assert_eq!(
            stateless_status(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            StatusCode::OK
        );
    }
}
