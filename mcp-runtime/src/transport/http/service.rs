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
use tokio::sync::{mpsc, watch};

use super::body::{self, HttpResponse};
use super::config::HttpConfig;
use super::guard::{self, Refusal};
use super::legacy;
use super::session::{Full, Session, Sessions};
use super::stateless::{check_param_headers, check_stateless_headers, stateless_status};
use super::stream::{respond, spawn_stream};
use crate::Server;
use crate::protocol::jsonrpc::{self, Incoming as Message};
use crate::protocol::{ErrorCode, McpError, ProtocolVersion};
use crate::server::connection::Connection;
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

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
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
            if with_meta
                && let Err(e) = check_stateless_headers(headers, req)
                    .and_then(|()| check_param_headers(headers, req, &state.server.inner.registry))
            {
                return fail(StatusCode::BAD_REQUEST, e);
            }
            return stateless(state, text, headers).await;
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
        return in_session(state, &session, text, headers).await;
    }
    match decoded {
        Ok(Message::Request(req)) if req.method == "initialize" => {
            initialize(state, text, headers).await
        }
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

async fn initialize(state: &Arc<State>, text: &str, headers: &HeaderMap) -> HttpResponse {
    let session = match state.sessions.create(&state.server, None) {
        Ok(s) => s,
        Err(Full(max)) => {
            return body::error(
                StatusCode::SERVICE_UNAVAILABLE,
                McpError::internal(format!("Too many sessions (limit {max}); try again later")),
            );
        }
    };
    let mut response = in_session(state, &session, text, headers).await;
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
async fn in_session(
    state: &Arc<State>,
    session: &Arc<Session>,
    text: &str,
    headers: &HeaderMap,
) -> HttpResponse {
    let headers = Arc::new(headers.clone());
    respond(state, &session.conn, text, Some(session), headers, |_| {
        StatusCode::OK
    })
    .await
}

/// A 2026-07-28 request. Dropping this future (the client closed the connection) drops the
/// handler: closing the stream is the cancellation in this era.
async fn stateless(state: &Arc<State>, text: &str, headers: &HeaderMap) -> HttpResponse {
    let headers = Arc::new(headers.clone());
    respond(
        state,
        &state.stateless,
        text,
        None,
        headers,
        stateless_status,
    )
    .await
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
        if store.replay(&session.id, stream, after).is_none() {
            // A standalone GET stream (nothing is recorded on those yet): carry on with keep-alives.
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
                let Some((events, finished)) = store.replay(&session.id, stream, after) else {
                    return; // forgotten (the session ended or the stream aged out)
                };
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
    // Notifications unrelated to a request go on the newest GET stream.
    *session.conn.standalone.lock().expect("standalone lock") =
        Some(super::stream::standalone_sink(&tx, None));
    spawn_stream(
        state,
        tx,
        priming(&session, stream),
        None,
        Some(session.ended()),
    );
    body::sse(rx)
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
