//! The dispatcher: messages in (decoded once, batches taken apart, notifications and client
//! responses handed to the connection), and one table from method name to handler, shared by
//! both eras. The handlers' common parts are in `handler.rs`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::completion::complete;
use super::connection::{Arrival, Connection, Step, panic_message};
use super::envelope::{self, Decoded, Envelope, Message, RequestMeta};
use super::era::{self, Cache, Scope};
use super::handler::{list_page, reply};
use super::mount::{self, Kind};
use super::prompts::get_prompt;
use super::resources::{list_resources, read_resource};
use super::skills;
use super::subscriptions::{listen, subscribe, unsubscribe};
use super::tools::call_tool;
use crate::protocol::jsonrpc::{DecodeError, Encoded};
use crate::protocol::params::{Body, Request};
use crate::protocol::{McpError, ProtocolEra, ProtocolVersion};
use crate::request::{ClientInfo, Reply};

/// Decodes one message (or a 2025-03-26 batch) and decides what to do with it.
pub(crate) fn on_message(conn: &Arc<Connection>, text: &str) -> Step {
    on_message_with(conn, text, Arrival::default())
}

/// Like [`on_message`], with what the transport knows of this message:
/// where its notifications go (the SSE stream of its HTTP response) and its HTTP headers.
pub(crate) fn on_message_with(conn: &Arc<Connection>, text: &str, arrival: Arrival) -> Step {
    on_decoded(conn, envelope::decode_any(text), arrival)
}

/// Like [`on_message_with`], for a message the transport has decoded (and checked).
pub(crate) fn on_decoded(conn: &Arc<Connection>, decoded: Decoded<'_>, arrival: Arrival) -> Step {
    match decoded {
        Decoded::One(Ok(envelope)) => on_envelope(conn, envelope, arrival),
        Decoded::One(Err(e)) => undecodable(e),
        Decoded::Batch(items) => on_batch(conn, items, &arrival),
    }
}

/// A message that did not decode.
fn undecodable(e: DecodeError) -> Step {
    if e.notification {
        // No response to a notification, however malformed (JSON-RPC and the spec's
        // cancellation rules both say so).
        tracing::debug!(error = %e.error, "ignoring a malformed notification");
        return Step::Nothing;
    }
    Step::Reply(Reply::error(e.id.as_ref(), &e.error))
}

/// Decides what to do with a message the transport has decoded (and maybe routed by).
pub(crate) fn on_envelope(
    conn: &Arc<Connection>,
    envelope: Envelope<'_>,
    arrival: Arrival,
) -> Step {
    match envelope.message {
        Message::Request(req) => on_request_guarded(conn, req, arrival),
        Message::Notification(n) => {
            conn.on_notification(n);
            Step::Nothing
        }
        Message::Response(r) => {
            conn.on_response(r);
            Step::Nothing
        }
    }
}

/// A decoded request through the server's middleware (if any), then the dispatcher; a panic
/// in a handler's synchronous part fails this request only. Mounts hand requests to their
/// server here.
pub(crate) fn on_request_guarded(conn: &Arc<Connection>, req: Request, arrival: Arrival) -> Step {
    if !conn.server.inner.middleware.is_empty() {
        return super::layers::through(conn, req, arrival, on_request);
    }
    let id = req.id.clone();
    // Handlers run user code (argument parsing, defaults) before any task exists;
    // a panic there fails this request only.
    catch_unwind(AssertUnwindSafe(|| on_request(conn, req, arrival))).unwrap_or_else(|payload| {
        tracing::error!(id = %id, panic = %panic_message(&*payload), "request handler panicked");
        Step::Reply(Reply::error(
            Some(&id),
            &McpError::internal("Internal error"),
        ))
    })
}

/// Whether a session at `version` (`None`: no session) takes JSON-RPC batches: only 2025-03-26
/// does (its servers MUST accept them). 2024-11-05 says nothing of batches and 2025-06-18
/// removed them; 2026-07-28 has one message per request.
pub(crate) fn accepts_batches(version: Option<ProtocolVersion>) -> bool {
    version == Some(ProtocolVersion::V2025_03_26)
}

/// The error (-32600, id `null`) for a batch where none is accepted: at the session's
/// `version`, or without a session (`None`).
pub(crate) fn batch_refused(version: Option<ProtocolVersion>) -> McpError {
    let at = match version {
        Some(v) => format!("at protocol {v}"),
        None => "without a session".to_owned(),
    };
    McpError::invalid_request(format!(
        "Invalid request: JSON-RPC batches are not accepted {at}; send one message per request \
         (only a 2025-03-26 session accepts batches)"
    ))
}

/// JSON-RPC batches exist only in protocol 2025-03-26 (servers MUST accept them there); the
/// answer is one array of the responses, or nothing when the batch held only notifications.
/// Each request of the batch keeps the HTTP headers and the verified principal it came with
/// (its answer goes into the batch's reply, not a stream of its own). Anywhere else the batch
/// gets one error ([`batch_refused`]); on HTTP that is a 400, decided before this runs.
pub(crate) fn on_batch(
    conn: &Arc<Connection>,
    items: Result<Vec<Result<Envelope<'_>, DecodeError>>, McpError>,
    arrival: &Arrival,
) -> Step {
    let version = conn.session().map(|s| s.version);
    if !accepts_batches(version) {
        return Step::Reply(Reply::error(None, &batch_refused(version)));
    }
    let items = match items {
        Ok(items) => items,
        Err(e) => return Step::Reply(Reply::error(None, &e)),
    };
    let mut ready = Vec::new();
    let mut pending = Vec::new();
    for item in items {
        let step = match item {
            Ok(envelope) => match &envelope.message {
                Message::Request(r) if r.method == "initialize" => {
                    let e = McpError::invalid_request(
                        "Invalid request: `initialize` must not be batched",
                    );
                    Step::Reply(Reply::error(Some(&r.id), &e))
                }
                // A batch belongs to a 2025-03-26 session: a 2026-07-28 request (its
                // `_meta` naming that era) is not served inside one.
                Message::Request(r) if envelope.is_stateless() => {
                    let e = McpError::invalid_request(
                        "Invalid request: a 2026-07-28 request cannot be part of a batch",
                    );
                    Step::Reply(Reply::error(Some(&r.id), &e))
                }
                _ => {
                    let each = Arrival {
                        headers: arrival.headers.clone(),
                        principal: arrival.principal.clone(),
                        peer: arrival.peer,
                        ..Arrival::default()
                    };
                    on_envelope(conn, envelope, each)
                }
            },
            Err(e) if e.notification => Step::Nothing,
            Err(e) => Step::Reply(Reply::error(e.id.as_ref(), &e.error)),
        };
        match step {
            Step::Reply(out) => ready.push(out),
            Step::Run(fut) => pending.push(tokio::spawn(fut)),
            Step::Nothing => {}
        }
    }
    let join = |mut ready: Vec<Reply>| -> Option<Reply> {
        if ready.is_empty() {
            return None;
        }
        let len = ready.iter().map(|r| r.bytes.len() + 1).sum::<usize>() + 2;
        let mut out: Encoded = Vec::with_capacity(len);
        out.push(b'[');
        for (i, r) in ready.drain(..).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&r.bytes);
        }
        out.push(b']');
        Some(Reply::result(out))
    };
    if pending.is_empty() {
        return join(ready).map_or(Step::Nothing, Step::Reply);
    }
    Step::Run(Box::pin(async move {
        for handle in pending {
            if let Ok(Some(out)) = handle.await {
                ready.push(out);
            }
        }
        join(ready)
    }))
}

/// The message for an input line longer than the limit (the line itself was dropped).
pub(crate) fn too_large(conn: &Connection) -> Reply {
    let limit = conn.server.inner.limits.max_message_bytes;
    Reply::error(
        None,
        &McpError::invalid_request(format!("Message larger than {limit} bytes")),
    )
}

/// The message for an input line that is not UTF-8.
pub(crate) fn invalid_utf8() -> Reply {
    Reply::error(
        None,
        &McpError::new(
            crate::protocol::ErrorCode::PARSE_ERROR,
            "Parse error: invalid UTF-8",
        ),
    )
}

pub(crate) fn on_request(conn: &Arc<Connection>, req: Request, arrival: Arrival) -> Step {
    use tracing::Instrument;
    let span = super::trace::request_span(conn, &req, arrival.headers.as_deref());
    if span.is_disabled() {
        return dispatch_request(conn, req, arrival);
    }
    let step = span.in_scope(|| dispatch_request(conn, req, arrival));
    match step {
        Step::Reply(reply) => {
            super::trace::record_reply(&span, &reply);
            Step::Reply(reply)
        }
        Step::Run(pending) => {
            let outer = span.clone();
            Step::Run(Box::pin(
                async move {
                    let reply = pending.await;
                    if let Some(reply) = &reply {
                        super::trace::record_reply(&outer, reply);
                    }
                    reply
                }
                .instrument(span),
            ))
        }
        Step::Nothing => Step::Nothing,
    }
}

fn dispatch_request(conn: &Arc<Connection>, mut req: Request, arrival: Arrival) -> Step {
    let meta = req.params.meta.take().map(|meta| *meta);
    // A request routed to a mount keeps its `_meta`: the mount's dispatcher reads it again.
    let mounted = !conn.server.inner.mounts.is_empty();
    let routed_meta = if mounted { meta.clone() } else { None };
    let with_meta = meta.as_ref().is_some_and(RequestMeta::is_stateless);
    if req.method == "initialize" {
        // 2026-07-28 has no `initialize`: with that era's `_meta` (or on a connection that
        // serves only that era) it is an unknown method, and it never opens a session.
        if conn.stateless_only || with_meta {
            let e = McpError::method_not_found(&req.method);
            return Step::Reply(era::encode_err(ProtocolEra::Stateless, &req.id, e));
        }
        let reply = initialize(conn, req);
        if conn.session().is_some() {
            conn.start_forwarding();
        }
        return Step::Reply(reply);
    }
    // A ping is answered even before `initialize` (the lifecycle allows pings then); a
    // stateless client's ping is checked below and refused, as 2026-07-28 has no ping.
    if req.method == "ping" && !with_meta {
        if let Body::Invalid(e) = &req.params.body {
            return Step::Reply(Reply::error(Some(&req.id), e));
        }
        return Step::Reply(era::encode_ok(
            &conn.server.inner,
            ProtocolEra::Session,
            &req.id,
            &serde_json::Map::new(),
            None,
            Cache::No,
        ));
    }
    let session = conn.session().map(|client| (client, conn.log_level()));
    let mut scope = match era::resolve(&req.id, meta, session) {
        Ok(scope) => scope,
        Err(reply) => return Step::Reply(reply),
    };
    // Params that do not fit the method are refused by the handler the table routes to, when
    // it takes its params (`handler::unread`): a method this server does not serve is -32601
    // whatever its params.
    scope.sink = conn.sink_for(arrival.sink);
    scope.headers = arrival.headers;
    scope.closer = arrival.closer;
    scope.principal = arrival.principal;
    scope.peer = arrival.peer;
    let stateless = scope.version().era() == ProtocolEra::Stateless;
    tracing::Span::current().record("mcp.protocol.version", scope.version().as_str());
    // A request naming an item of a mounted server goes to that server.
    if mounted
        && matches!(
            &*req.method,
            "tools/call" | "prompts/get" | "resources/read" | "completion/complete"
        )
        && let Some(found) = mount::route(conn, &req)
    {
        return mount::forward(conn, scope, req, routed_meta, found, on_request_guarded);
    }
    // Skills of a server mounted without a prefix (a proxy's upstream), where it has none.
    if mounted
        && conn.server.inner.skills.is_none()
        && matches!(
            &*req.method,
            "skills/list" | "skills/get" | "resources/directory/read"
        )
        && let Some(found) = mount::route_skills(conn, &req)
    {
        return mount::forward(conn, scope, req, routed_meta, found, on_request_guarded);
    }
    // A task of a mounted server (a proxy's upstream) is that server's.
    if mounted
        && matches!(
            &*req.method,
            "tasks/get" | "tasks/cancel" | "tasks/update" | "tasks/result"
        )
        && let Some(found) = mount::route_task(conn, &req)
    {
        return mount::forward(conn, scope, req, routed_meta, found, on_request_guarded);
    }
    // Methods behind a capability the server did not advertise are "not found".
    let inner = &conn.server.inner;
    let registry = &inner.registry;
    let has_tools = inner.serves_tools();
    let has_resources = inner.serves_resources();
    let has_prompts = inner.serves_prompts();
    let has_completions = inner.serves_completions();
    // Skills (SEP-2640) are resources too: they bring the resources methods with them.
    let has_skills = conn.server.inner.skills.is_some();
    let lists_resources = has_resources || has_skills;
    match &*req.method {
        "server/discover" if stateless => discover(conn, &scope, &req),
        "logging/setLevel" if !stateless => set_level(conn, &scope, &req),
        "tools/list" if has_tools && mounted => mount::list(conn, scope, req, Kind::Tool),
        "tools/list" if has_tools => list_page(conn, &scope, &req, "tools", &registry.tools, |t| {
            t.listing_for(scope.version())
        }),
        "tools/call" if has_tools => call_tool(conn, scope, req),
        "resources/list" if lists_resources && mounted => {
            mount::list(conn, scope, req, Kind::Resource)
        }
        "resources/list" if lists_resources => list_resources(conn, scope, req),
        "resources/templates/list" if lists_resources && mounted => {
            mount::list(conn, scope, req, Kind::Template)
        }
        "resources/templates/list" if lists_resources => list_page(
            conn,
            &scope,
            &req,
            "resourceTemplates",
            &registry.templates,
            |t| &t.listing,
        ),
        "resources/read" if has_skills => skills::read(conn, scope, req, has_resources),
        "resources/read" if has_resources => read_resource(conn, scope, req),
        "skills/list" if has_skills => skills::list_skills(conn, &scope, &req),
        "skills/get" if has_skills => skills::get_skill(conn, &scope, &req),
        "resources/directory/read" if has_skills => skills::read_directory(conn, &scope, &req),
        "prompts/list" if has_prompts && mounted => mount::list(conn, scope, req, Kind::Prompt),
        "prompts/list" if has_prompts => {
            list_page(conn, &scope, &req, "prompts", &registry.prompts, |p| {
                &p.listing
            })
        }
        "prompts/get" if has_prompts => get_prompt(conn, scope, req),
        // Only where the server can reach the client later (not declared otherwise).
        "resources/subscribe" if has_resources && !stateless && conn.wire.lasting => {
            subscribe(conn, &scope, &req)
        }
        "resources/unsubscribe" if has_resources && !stateless => unsubscribe(conn, &scope, &req),
        "subscriptions/listen" if stateless => listen(conn, scope, req),
        "completion/complete" if has_completions => complete(conn, scope, &req),
        "tasks/get" => super::tasks::get(conn, scope, req),
        "tasks/cancel" => super::tasks::cancel(conn, scope, req),
        "tasks/update" if stateless => super::tasks::update(conn, scope, req),
        "tasks/result" if !stateless => super::tasks::result(conn, scope, req),
        "tasks/list" if !stateless => super::tasks::list(conn, scope, req),
        _ => Step::Reply(scope.err(&req.id, McpError::method_not_found(&req.method))),
    }
}

fn set_level(conn: &Connection, scope: &Scope, req: &Request) -> Step {
    let Body::SetLevel(params) = &req.params.body else {
        return Step::Reply(scope.err(&req.id, super::handler::unread(req)));
    };
    match crate::protocol::LogLevel::parse(&params.level) {
        Ok(level) => {
            conn.set_log_level(level);
            reply(conn, scope, req, &serde_json::Map::new(), Cache::No)
        }
        Err(e) => Step::Reply(scope.err(&req.id, e)),
    }
}

fn initialize(conn: &Connection, req: Request) -> Reply {
    let params = match req.params.body {
        Body::Initialize(params) => params,
        Body::Invalid(e) => return Reply::error(Some(&req.id), &e),
        _ => return Reply::error(Some(&req.id), &super::handler::unread(&req)),
    };
    // Echo a session-era version we speak; otherwise offer our newest (the client decides).
    let version = ProtocolVersion::parse(&params.protocol_version)
        .filter(|v| v.era() == ProtocolEra::Session)
        .unwrap_or(ProtocolVersion::LATEST_SESSION);
    let capabilities = params
        .capabilities
        .unwrap_or_else(|| Value::Object(Default::default()));
    if !conn.open_session(ClientInfo {
        version,
        info: params.client_info,
        capabilities,
    }) {
        return Reply::error(
            Some(&req.id),
            &McpError::invalid_request(
                "Already initialized: `initialize` may be sent once per connection",
            ),
        );
    }
    tracing::debug!(%version, "session opened");
    tracing::Span::current().record("mcp.protocol.version", version.as_str());
    let inner = &conn.server.inner;
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct InitializeResult<'a> {
        protocol_version: ProtocolVersion,
        capabilities: &'a Value,
        server_info: &'a RawValue,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<&'a str>,
    }
    // A connection that ends with this request declares nothing it could only do later:
    // no subscriptions, no `listChanged`, no session-era tasks.
    let one_shot;
    let capabilities = if !conn.wire.lasting {
        one_shot = without_later(&inner.capabilities);
        &one_shot
    } else if version == ProtocolVersion::V2025_11_25 {
        &inner.tasks_capabilities
    } else {
        &inner.capabilities
    };
    let body = InitializeResult {
        protocol_version: version,
        capabilities,
        server_info: &inner.info_raw,
        instructions: inner.instructions.as_deref(),
    };
    era::encode_ok(inner, ProtocolEra::Session, &req.id, &body, None, Cache::No)
}

/// `capabilities` without what needs the server to reach the client after the request:
/// `subscribe` and `listChanged`.
fn without_later(capabilities: &Value) -> Value {
    let mut out = capabilities.clone();
    for kind in ["tools", "resources", "prompts"] {
        if let Some(entry) = out.get_mut(kind).and_then(Value::as_object_mut) {
            entry.remove("subscribe");
            entry.remove("listChanged");
        }
    }
    out
}

fn discover(conn: &Connection, scope: &Scope, req: &Request) -> Step {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct DiscoverResult<'a> {
        supported_versions: Vec<ProtocolVersion>,
        capabilities: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<&'a str>,
    }
    let inner = &conn.server.inner;
    let body = DiscoverResult {
        supported_versions: ProtocolVersion::of_era(ProtocolEra::Stateless).collect(),
        capabilities: &inner.stateless_capabilities,
        instructions: inner.instructions.as_deref(),
    };
    reply(conn, scope, req, &body, Cache::Listing)
}
