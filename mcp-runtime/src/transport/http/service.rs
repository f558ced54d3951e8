//! Request routing and the Streamable HTTP endpoint: POST, GET and DELETE on the MCP path, for
//! both protocol eras.

use std::sync::Arc;
use std::time::Instant;

use http::header::{ACCEPT, ALLOW};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use tokio::sync::mpsc;

use super::auth;
use super::body::{self, HttpResponse};
use super::card;
use super::client_limits::ClientKey;
use super::cors;
use super::guard::{self, Refusal};
use super::health;
use super::legacy;
use super::session_era::{self, SessionEra};
use super::sessions::{Full, Lookup, Session};
use super::shared::{
    self, LAST_EVENT_ID, METHOD_HEADER, NAME_HEADER, RequestBody, SESSION_HEADER, Shared,
    VERSION_HEADER, header, owner, read_body, repeated, utf8,
};
use super::stateless::{check_param_headers, check_stateless_headers, stateless_status};
use super::stream::{respond, resume, spawn_stream};
use crate::auth::Principal;
use crate::protocol::jsonrpc;
use crate::protocol::{ErrorCode, McpError, ProtocolVersion};
use crate::request::{ClientInfo, Reply};
use crate::server::connection::{Arrival, Connection, Step, Wire};
use crate::server::dispatch;
use crate::server::envelope::{self, Decoded, Envelope};

/// Serves one request; `local_loopback` says whether it came in through a loopback address,
/// `memo` is its connection's last token (when the server checks tokens and the request came
/// through its own listener).
pub(crate) async fn handle<B: RequestBody>(
    state: Arc<Shared>,
    peer: std::net::IpAddr,
    local_loopback: bool,
    memo: Option<Arc<auth::TokenMemo>>,
    req: Request<B>,
) -> HttpResponse {
    // Health checks come before everything (they expose nothing) and are not logged at info:
    // a load balancer asks every second.
    if let Some(mut response) = health::answer(&state, req.method(), req.uri().path()) {
        tracing::debug!(
            path = req.uri().path(),
            status = response.status().as_u16(),
            "health check"
        );
        name_instance(&state, &mut response);
        return response;
    }
    // What the request's log line needs, copied only when it is written.
    let log = tracing::enabled!(tracing::Level::INFO).then(|| {
        (
            Instant::now(),
            req.method().clone(),
            req.uri().path().to_owned(),
        )
    });
    // Decided before routing, as the request is consumed there: every answer to a listed
    // origin is readable by its script, errors and SSE streams included.
    let origin = cors::allowed_origin(req.headers(), &state.config);
    let preflight = cors::is_preflight(req.method(), req.headers());
    let mut response = route(&state, peer, local_loopback, memo, origin.clone(), req).await;
    if let Some(origin) = origin
        && !preflight
    {
        cors::expose(&mut response, origin);
    }
    name_instance(&state, &mut response);
    if let Some((start, method, path)) = log {
        tracing::info!(%method, path, status = response.status().as_u16(), ms = start.elapsed().as_millis() as u64, "http request");
    }
    response
}

/// `X-Mcp-Instance`, when configured ([`HttpConfig::instance_header`]): which instance
/// of a fleet answered, for whoever debugs the routing.
///
/// [`HttpConfig::instance_header`]: super::HttpConfig::instance_header
fn name_instance(state: &Shared, response: &mut HttpResponse) {
    if let Some(name) = &state.config.instance_header {
        response.headers_mut().insert(INSTANCE_HEADER, name.clone());
    }
}

/// The header naming the answering instance.
const INSTANCE_HEADER: http::HeaderName = http::HeaderName::from_static("x-mcp-instance");

async fn route<B: RequestBody>(
    state: &Arc<Shared>,
    peer: std::net::IpAddr,
    local_loopback: bool,
    memo: Option<Arc<auth::TokenMemo>>,
    origin: Option<HeaderValue>,
    req: Request<B>,
) -> HttpResponse {
    // Nothing is read before the Host/Origin guard has passed. The server card is public
    // (any origin may read it), behind the Host check all the same.
    let is_card = req
        .uri()
        .path()
        .strip_prefix(state.config.path.as_str())
        .is_some_and(|rest| rest == card::SUFFIX);
    let is_catalog = req.uri().path() == card::CATALOG_PATH;
    if let Err(refusal) = guard::check(
        req.headers(),
        req.uri().authority().map(|a| a.as_str()),
        &state.config,
        local_loopback,
    ) && !((is_card || is_catalog) && matches!(refusal, Refusal::Origin(_)))
    {
        let why = match refusal {
            Refusal::Host(h) => format!("Host {h:?} is not allowed (DNS-rebinding protection)"),
            Refusal::Origin(o) => format!("Origin {o:?} is not allowed"),
        };
        return unread_body(
            req.headers(),
            body::error(StatusCode::FORBIDDEN, McpError::invalid_request(why)),
        );
    }
    if *state.shutdown.borrow() {
        return shared::closing(body::error(
            StatusCode::SERVICE_UNAVAILABLE,
            McpError::internal("The server is shutting down"),
        ));
    }
    if is_card && let Some(response) = card::answer(state, req.method(), req.headers()) {
        return response;
    }
    if is_catalog && let Some(response) = card::answer_catalog(state, req.method(), req.headers()) {
        return response;
    }
    let path = req.uri().path();
    let endpoint = &state.config.path;
    let is_mcp = path == endpoint || path.strip_suffix('/') == Some(endpoint.as_str());
    let legacy_path = path == "/sse" || path == "/messages";
    // HTTP+SSE is a session transport: served only where sessions are.
    let is_legacy =
        state.config.legacy_sse && state.config.session_era == SessionEra::Serve && legacy_path;
    if state.config.legacy_sse && state.config.session_era == SessionEra::Reject && legacy_path {
        return body::error(StatusCode::BAD_REQUEST, session_era::rejected(None));
    }
    // A preflight carries no credentials: it is answered before authorization would run.
    if (is_mcp || is_legacy)
        && let Some(origin) = origin
        && cors::is_preflight(req.method(), req.headers())
    {
        return cors::preflight(origin, req.headers());
    }
    // Authorization: after the guard and the preflight, before any route reads the body, so
    // every method and route is covered. The protected resource metadata (RFC 9728) is public.
    if let Some(response) = auth::metadata(state, req.method(), path) {
        return response;
    }
    let principal = if is_mcp || is_legacy {
        // A POST to the endpoint is checked against the required scopes once its body says
        // what it asks for (`auth::check_required`).
        let defer_required = is_mcp && req.method() == Method::POST;
        let memo = memo.as_deref();
        match auth::authenticate(state, req.headers(), req.uri(), defer_required, memo).await {
            Ok(p) => p,
            Err(response) => return unread_body(req.headers(), response),
        }
    } else {
        None
    };
    // A POST to the endpoint checks its headers once its body is decoded, to answer with the
    // request's id.
    if !(is_mcp && req.method() == Method::POST)
        && let Some(e) = repeated_header(req.headers())
    {
        return body::error(StatusCode::BAD_REQUEST, e);
    }
    if is_mcp {
        return match *req.method() {
            Method::POST => post(state, peer, req, principal).await,
            Method::GET => get(state, req.headers(), principal.as_ref()).await,
            Method::DELETE => delete(state, req.headers(), principal.as_ref()).await,
            _ => not_allowed("GET, POST, DELETE"),
        };
    }
    if is_legacy {
        match (req.method(), path) {
            (&Method::GET, "/sse") => return legacy::open(state, req.headers(), principal),
            (&Method::POST, "/messages") => return legacy::post(state, req, principal).await,
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

/// 400 for a header that must appear once and is repeated: -32020 for the 2026-07-28
/// headers the body is checked against, -32600 for the others.
/// `response`, answered before the request's body was read: when there is a body, with
/// `Connection: close` (RFC 9112 §9.6). hyper cannot always drain an unread body, and then
/// closes the connection after the response; said in the response, a client opens a new
/// connection for its next request instead of sending it on this one as it closes (an official
/// client retrying at once with a token after a 401 got "server disconnected").
fn unread_body(headers: &HeaderMap, response: HttpResponse) -> HttpResponse {
    let has_body = headers.contains_key(http::header::TRANSFER_ENCODING)
        || headers
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0");
    if has_body {
        shared::closing(response)
    } else {
        response
    }
}

fn repeated_header(headers: &HeaderMap) -> Option<McpError> {
    let name = repeated(headers)?;
    let code = if [&METHOD_HEADER, &NAME_HEADER, &VERSION_HEADER].contains(&name) {
        ErrorCode::HEADER_MISMATCH
    } else {
        ErrorCode::INVALID_REQUEST
    };
    Some(McpError::new(code, format!("Header {name} is repeated")))
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

async fn post<B: RequestBody>(
    state: &Arc<Shared>,
    peer: std::net::IpAddr,
    req: Request<B>,
    principal: Option<Arc<Principal>>,
) -> HttpResponse {
    let who = principal.as_deref();
    let (parts, incoming) = req.into_parts();
    // Shared with the handler's `Context` as they are: not copied.
    let shared_headers = Arc::new(parts.headers);
    let headers: &HeaderMap = &shared_headers;
    let bytes = match read_body(incoming, headers, &state.config).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let text = match utf8(&bytes) {
        Ok(text) => text,
        Err(r) => return r,
    };
    // Decoded once: routing, the header checks and the scope checks read the decoded value,
    // and the dispatcher gets it.
    let body = Body(envelope::decode_any(text));
    // Errors found here still name the request they answer.
    let request_id = match &body.0 {
        Decoded::One(Ok(envelope)) => envelope.request().map(|r| r.id.clone()),
        Decoded::One(Err(e)) => e.id.clone(),
        Decoded::Batch(_) => None,
    };
    let fail = |status: StatusCode, e: McpError| {
        body::json(status, jsonrpc::encode_error(request_id.as_ref(), &e))
    };
    if let Some(e) = repeated_header(headers) {
        return fail(StatusCode::BAD_REQUEST, e);
    }
    // Before anything routes on the body: the scopes every request needs.
    if let Err(refused) = auth::check_required(state, &body.0, who) {
        return refused;
    }
    // A message that is not JSON-RPC (-32700, -32600) is a bad request in either era (nothing
    // runs); batches (an array) are taken apart by the connection, which words their errors.
    // (Params that do not fit their method decode as a request, refused by the dispatcher
    // before anything reads them.)
    if let Decoded::One(Err(e)) = &body.0
        && !e.notification
    {
        return fail(StatusCode::BAD_REQUEST, e.error.clone());
    }
    // The stateless era: a request with 2026-07-28 `_meta`, or, without a session, one that says
    // 2026-07-28 in its header (its missing `_meta` is then reported by the dispatcher: -32602).
    let stateless_header =
        header(headers, &VERSION_HEADER) == Some(ProtocolVersion::V2026_07_28.as_str());
    if let Decoded::One(Ok(envelope)) = &body.0
        && let Some(req) = envelope.request()
    {
        let with_meta = envelope.is_stateless();
        if with_meta || (stateless_header && header(headers, &SESSION_HEADER).is_none()) {
            if with_meta
                && let Err(e) = check_stateless_headers(headers, req)
                    .and_then(|()| check_param_headers(headers, req, &state.server.inner))
            {
                return fail(StatusCode::BAD_REQUEST, e);
            }
            if let Err(refused) = auth::check_scopes(state, req, who) {
                return refused;
            }
            let Some(slot) = client_slot(state, headers, who, peer) else {
                return too_busy(state, fail);
            };
            return stateless(state, body, &shared_headers, principal, peer)
                .await
                .map(|body| body.holding_slot(slot));
        }
    }
    if state.config.session_era != SessionEra::Serve {
        let batch = matches!(body.0, Decoded::Batch(_));
        if stateless_header {
            // A 2026-07-28 client's batch or notification: what it gets in every position.
            let e = if batch {
                dispatch::batch_refused(Some(ProtocolVersion::V2026_07_28))
            } else {
                no_session()
            };
            return fail(StatusCode::BAD_REQUEST, e);
        }
        if state.config.session_era == SessionEra::Reject {
            let asked = initialize_version(&body).or_else(|| header(headers, &VERSION_HEADER));
            return fail(StatusCode::BAD_REQUEST, session_era::rejected(asked));
        }
        let Some(slot) = client_slot(state, headers, who, peer) else {
            return too_busy(state, fail);
        };
        return without_sessions(state, body, &shared_headers, principal, peer, fail)
            .await
            .map(|body| body.holding_slot(slot));
    }
    if let Some(id) = header(headers, &SESSION_HEADER) {
        let found = state
            .sessions
            .get(id, owner(state, headers, who).as_ref(), Some(&state.server))
            .await;
        let session = match found {
            Ok(Some(session)) => session,
            Ok(None) => {
                return fail(
                    StatusCode::NOT_FOUND,
                    McpError::invalid_request("Unknown or expired session: initialize again"),
                );
            }
            Err(e) => return lookup_failed(e, fail),
        };
        if let Some(v) = header(headers, &VERSION_HEADER)
            && ProtocolVersion::parse(v).is_none()
        {
            return fail(
                StatusCode::BAD_REQUEST,
                McpError::invalid_request(format!("Unsupported MCP-Protocol-Version {v:?}")),
            );
        }
        // A batch is a bad request wherever it is not accepted (the POST body must be one
        // message from 2025-06-18 on): 400, never a 200 carrying the error.
        if matches!(body.0, Decoded::Batch(_)) {
            let version = session.conn.session().map(|s| s.version);
            if !dispatch::accepts_batches(version) {
                return fail(StatusCode::BAD_REQUEST, dispatch::batch_refused(version));
            }
        }
        // A batch: each of its requests is checked.
        if let Err(refused) = auth::check_scopes_all(state, &body.0, who) {
            return refused;
        }
        return in_session(state, &session, body, &shared_headers, principal, peer).await;
    }
    let initializing = matches!(
        &body.0,
        Decoded::One(Ok(envelope)) if envelope.request().is_some_and(|r| r.method == "initialize")
    );
    if initializing {
        return initialize(state, body, &shared_headers, principal, peer).await;
    }
    if matches!(body.0, Decoded::Batch(_)) {
        // No session takes a batch before it exists (`initialize` is never batched), and the
        // stateless era has none: say so rather than ask for a session id.
        let named = header(headers, &VERSION_HEADER)
            .and_then(ProtocolVersion::parse)
            .filter(|v| !dispatch::accepts_batches(Some(*v)));
        return fail(StatusCode::BAD_REQUEST, dispatch::batch_refused(named));
    }
    fail(StatusCode::BAD_REQUEST, no_session())
}

/// A place among the requests one client may have in progress without a session (2026-07-28,
/// and the session era served statelessly); `None` when it has them all.
fn client_slot(
    state: &Shared,
    headers: &HeaderMap,
    who: Option<&Principal>,
    peer: std::net::IpAddr,
) -> Option<super::client_limits::ClientSlot> {
    // A verified caller is one client wherever it connects from; anything else is its
    // address, narrowed by whatever identity the headers claim.
    let keys = match (who, owner(state, headers, who)) {
        (Some(_), Some(caller)) => vec![ClientKey::Caller(caller)],
        (None, Some(claimed)) => vec![ClientKey::Address(peer), ClientKey::Caller(claimed)],
        (_, None) => vec![ClientKey::Address(peer)],
    };
    state.clients.take(keys)
}

/// 429 with `Retry-After` for a client with every place taken.
fn too_busy(
    state: &Shared,
    fail: impl FnOnce(StatusCode, McpError) -> HttpResponse,
) -> HttpResponse {
    let limit = state.clients.limit();
    let mut r = fail(
        StatusCode::TOO_MANY_REQUESTS,
        McpError::internal(format!(
            "Too many requests in progress from this client (limit {limit}); try again later"
        )),
    );
    r.headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The `protocolVersion` an `initialize` asks for, if the body is one.
fn initialize_version<'a>(body: &'a Body<'_>) -> Option<&'a str> {
    let Decoded::One(Ok(envelope)) = &body.0 else {
        return None;
    };
    match &envelope.request()?.params.body {
        crate::protocol::params::Body::Initialize(params) => Some(&params.protocol_version),
        _ => None,
    }
}

/// A session-era message served without a session table ([`SessionEra::Stateless`]): on a
/// connection of its own, which ends with the request. `initialize` runs as usual but opens
/// nothing the next request could find (no `Mcp-Session-Id`); any other message is served at
/// the version its `MCP-Protocol-Version` header names (2025-03-26 without one, as the spec
/// says), for a client whose capabilities are unknown. A stale `Mcp-Session-Id` is ignored.
async fn without_sessions(
    state: &Arc<Shared>,
    message: Body<'_>,
    headers: &Arc<HeaderMap>,
    principal: Option<Arc<Principal>>,
    peer: std::net::IpAddr,
    fail: impl Fn(StatusCode, McpError) -> HttpResponse,
) -> HttpResponse {
    let named = match header(headers, &VERSION_HEADER) {
        None => None,
        Some(v) => match ProtocolVersion::parse(v) {
            Some(v) => Some(v),
            None => {
                return fail(
                    StatusCode::BAD_REQUEST,
                    McpError::invalid_request(format!("Unsupported MCP-Protocol-Version {v:?}")),
                );
            }
        },
    };
    // A batch only where the header says 2025-03-26: with no session, nothing else vouches
    // for the version.
    if matches!(message.0, Decoded::Batch(_)) && !dispatch::accepts_batches(named) {
        return fail(StatusCode::BAD_REQUEST, dispatch::batch_refused(named));
    }
    if let Err(refused) = auth::check_scopes_all(state, &message.0, principal.as_deref()) {
        return refused;
    }
    let conn = Connection::new(state.server.clone(), Wire::HTTP_ONE_SHOT);
    if initialize_version(&message).is_none() {
        conn.open_session(ClientInfo {
            version: named.unwrap_or(ProtocolVersion::V2025_03_26),
            info: None,
            capabilities: serde_json::Value::Object(Default::default()),
        });
    }
    let headers = headers.clone();
    respond(
        state,
        None,
        headers,
        principal,
        peer,
        session_status,
        |arrival| message.run(&conn, arrival),
    )
    .await
}

/// A session that could not be looked up: 503 with `Retry-After`, never 404 (which tells
/// the client its session is gone, and it would initialize again and lose it).
pub(crate) fn lookup_failed(
    e: Lookup,
    fail: impl FnOnce(StatusCode, McpError) -> HttpResponse,
) -> HttpResponse {
    match e {
        Lookup::Full(max) => body::too_many_sessions(max),
        Lookup::Unavailable(e) => {
            tracing::warn!(error = %e, "session lookup failed");
            let mut r = fail(
                StatusCode::SERVICE_UNAVAILABLE,
                McpError::internal(
                    "The session store is unavailable, so this session cannot be looked up; try again shortly",
                ),
            );
            r.headers_mut()
                .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    }
}

fn no_session() -> McpError {
    McpError::invalid_request(
        "Missing Mcp-Session-Id header: send `initialize` first (protocol 2025-11-25 and earlier), \
         or 2026-07-28 `_meta` on every request",
    )
}

/// A POST body on its way to a connection: a message or a batch, decoded once.
struct Body<'a>(Decoded<'a>);

/// The session-era methods that change what a session's stored record holds.
const RECORDED: [&str; 3] = [
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

impl Body<'_> {
    /// Whether running it may change the session's record.
    fn changes_record(&self) -> bool {
        let recorded = |item: &Result<Envelope<'_>, _>| {
            item.as_ref()
                .ok()
                .and_then(Envelope::request)
                .is_some_and(|req| RECORDED.contains(&&*req.method))
        };
        match &self.0 {
            Decoded::One(item) => recorded(item),
            Decoded::Batch(Ok(items)) => items.iter().any(recorded),
            Decoded::Batch(Err(_)) => false,
        }
    }

    fn run(self, conn: &Arc<Connection>, arrival: Arrival) -> Step {
        dispatch::on_decoded(conn, self.0, arrival)
    }
}

async fn initialize(
    state: &Arc<Shared>,
    message: Body<'_>,
    headers: &Arc<HeaderMap>,
    principal: Option<Arc<Principal>>,
    peer: std::net::IpAddr,
) -> HttpResponse {
    let session = match state.sessions.create(
        &state.server,
        None,
        owner(state, headers, principal.as_deref()),
    ) {
        Ok(s) => s,
        Err(Full(max)) => return body::too_many_sessions(max),
    };
    let mut response = in_session(state, &session, message, headers, principal, peer).await;
    // Only a successful handshake opens a session.
    if session.conn.session().is_some() {
        state.sessions.save(&session).await;
        let id = HeaderValue::from_str(&session.id).expect("hex is a valid header value");
        response.headers_mut().insert(SESSION_HEADER.clone(), id);
        tracing::debug!(session = %session.id, "session opened");
    } else {
        state.sessions.discard(&session.id);
    }
    response
}

/// Runs one message of a session. A handler that must wait runs as a task of its own: in the
/// session era a dropped connection is not a cancellation (the client sends
/// `notifications/cancelled`).
async fn in_session(
    state: &Arc<Shared>,
    session: &Arc<Session>,
    message: Body<'_>,
    headers: &Arc<HeaderMap>,
    principal: Option<Arc<Principal>>,
    peer: std::net::IpAddr,
) -> HttpResponse {
    let headers = headers.clone();
    let conn = &session.conn;
    let changes_record = message.changes_record();
    let response = respond(
        state,
        Some(session),
        headers,
        principal,
        peer,
        session_status,
        |arrival| message.run(conn, arrival),
    )
    .await;
    // Answered once the store has it: a client that fails over next finds it there.
    if changes_record && state.sessions.shared() {
        state.sessions.save(session).await;
    }
    response
}

/// Session-era errors travel in the JSON-RPC body of a 200.
fn session_status(_: &Reply) -> StatusCode {
    StatusCode::OK
}

/// A 2026-07-28 request. Dropping this future (the client closed the connection) drops the
/// handler: closing the stream is the cancellation in this era.
async fn stateless(
    state: &Arc<Shared>,
    message: Body<'_>,
    headers: &Arc<HeaderMap>,
    principal: Option<Arc<Principal>>,
    peer: std::net::IpAddr,
) -> HttpResponse {
    let headers = headers.clone();
    let conn = &state.stateless;
    respond(
        state,
        None,
        headers,
        principal,
        peer,
        stateless_status,
        |arrival| message.run(conn, arrival),
    )
    .await
}

/// A GET or DELETE without `Mcp-Session-Id`: 405 naming POST at 2026-07-28 (which has no
/// session, no GET stream and nothing to delete), else 400.
fn without_session(headers: &HeaderMap) -> HttpResponse {
    if header(headers, &VERSION_HEADER) == Some(ProtocolVersion::V2026_07_28.as_str()) {
        return not_allowed("POST");
    }
    body::error(
        StatusCode::BAD_REQUEST,
        McpError::invalid_request("Missing Mcp-Session-Id header"),
    )
}

async fn get(
    state: &Arc<Shared>,
    headers: &HeaderMap,
    principal: Option<&Arc<Principal>>,
) -> HttpResponse {
    if state.config.session_era != SessionEra::Serve {
        return not_allowed("POST"); // no session, so no stream of its own
    }
    let Some(id) = header(headers, &SESSION_HEADER) else {
        return without_session(headers);
    };
    let found = state
        .sessions
        .get(
            id,
            owner(state, headers, principal.map(|p| &**p)).as_ref(),
            Some(&state.server),
        )
        .await;
    let session = match found {
        Ok(Some(session)) => session,
        Ok(None) => {
            return body::error(
                StatusCode::NOT_FOUND,
                McpError::invalid_request("Unknown or expired session: initialize again"),
            );
        }
        Err(e) => return lookup_failed(e, body::error),
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
    // Resuming names one of the session's streams in `Last-Event-ID`: what the store kept after
    // that event is sent again, and a POST's stream is followed until its result, then ends.
    if let Some(last) = header(headers, &LAST_EVENT_ID)
        && let Some((stream, after)) = session.resume_point(last, state.sessions.shared())
    {
        match state.config.events.replay(&session.id, stream, after).await {
            Ok(Some(_)) => resume(state, &session, stream, after, tx),
            Ok(None) => {
                // A standalone GET stream (nothing is recorded on those): this one takes its
                // place, and hears that everything may have changed meanwhile (after its
                // priming event, which the new channel has room for).
                if let Some(priming) =
                    session.priming(session.new_stream(), 0, state.config.sse_retry)
                {
                    let _ = tx.try_send(priming);
                }
                let sink = super::stream::standalone_sink(&tx, None);
                spawn_stream(state, tx, &session, None);
                crate::server::reopen_standalone(&session.conn, sink);
            }
            Err(e) => {
                tracing::warn!(session = %session.id, error = %e, "could not look up an SSE stream to resume");
                let mut r = body::error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    McpError::internal(
                        "The event store is unavailable, so this stream cannot be resumed; try again shortly",
                    ),
                );
                r.headers_mut()
                    .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
                return r;
            }
        }
        return body::sse(rx);
    }
    let stream = session.new_stream();
    // Notifications unrelated to a request go on the newest GET stream.
    *session.conn.standalone.lock().expect("standalone lock") =
        Some(super::stream::standalone_sink(&tx, None));
    let priming = session.priming(stream, 0, state.config.sse_retry);
    spawn_stream(state, tx, &session, priming);
    body::sse(rx)
}

async fn delete(
    state: &Arc<Shared>,
    headers: &HeaderMap,
    principal: Option<&Arc<Principal>>,
) -> HttpResponse {
    if state.config.session_era != SessionEra::Serve {
        return not_allowed("POST"); // no session to end
    }
    let Some(id) = header(headers, &SESSION_HEADER) else {
        return without_session(headers);
    };
    let owner = owner(state, headers, principal.map(|p| &**p));
    match state.sessions.delete(id, owner.as_ref()).await {
        Ok(true) => {
            // Awaited, as its events are: once the client has its 200 the session's finished
            // tasks are gone (they would count against its client's limit until their TTL).
            let tasks = &state.server.inner.tasks;
            tasks
                .end_session(&crate::server::connection::Connection::session_task_owner(
                    id,
                ))
                .await;
            tracing::debug!(session = %id, "session ended by the client");
            body::empty(StatusCode::OK)
        }
        Ok(false) => body::error(
            StatusCode::NOT_FOUND,
            McpError::invalid_request("Unknown or expired session"),
        ),
        Err(e) => lookup_failed(e, body::error),
    }
}
