//! The dispatcher: one table from method name to handler, shared by both eras.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::connection::{Arrival, CatchUnwind, Connection, Step};
use super::envelope::Head;
use super::era::{self, Cache, Scope};
use crate::protocol::jsonrpc::Request;
use crate::protocol::{Era, McpError, ProtocolVersion, RequestId};
use crate::request::{Asker, Cancellation, ClientInfo, Context, Reply, RequestInfo, Slot};

impl Connection {
    pub(crate) fn on_request(
        self: &Arc<Self>,
        req: Request<'_>,
        head: Option<Head<'_>>,
        arrival: Arrival,
    ) -> Step {
        let meta = head.and_then(|h| h.meta);
        let with_meta = meta.as_ref().is_some_and(|m| m.protocol_version.is_some());
        if req.method == "initialize" {
            // 2026-07-28 has no `initialize`: with that era's `_meta` (or on a connection that
            // serves only that era) it is an unknown method, and it never opens a session.
            if self.stateless_only || with_meta {
                let e = McpError::method_not_found(&req.method);
                return Step::Reply(era::encode_err(Era::Stateless, &req.id, e));
            }
            let reply = self.initialize(&req);
            if self.session().is_some() {
                self.start_forwarding();
            }
            return Step::Reply(reply);
        }
        // A ping is answered even before `initialize` (the lifecycle allows pings then); a
        // stateless client's ping is checked below and refused, as 2026-07-28 has no ping.
        if req.method == "ping" && !with_meta {
            return Step::Reply(era::encode_ok(
                &self.server.inner,
                Era::Session,
                &req.id,
                &serde_json::Map::new(),
                None,
                Cache::No,
            ));
        }
        let session = self.session().map(|client| (client, self.log_level()));
        let mut scope = match era::resolve(&req.id, meta, session) {
            Ok(scope) => scope,
            Err(reply) => return Step::Reply(reply),
        };
        scope.sink = self.sink_for(arrival.sink);
        scope.headers = arrival.headers;
        scope.closer = arrival.closer;
        let stateless = scope.version().era() == Era::Stateless;
        // Methods behind a capability the server did not advertise are "not found".
        let registry = &self.server.inner.registry;
        let has_tools = !registry.tools.items.is_empty();
        let has_resources = registry.has_resources();
        let has_prompts = !registry.prompts.items.is_empty();
        let has_completions = registry.has_completions();
        match &*req.method {
            "server/discover" if stateless => self.discover(&scope, &req),
            "logging/setLevel" if !stateless => self.set_level(&scope, &req),
            "tools/list" if has_tools => {
                self.list_page(&scope, &req, "tools", &registry.tools, |t| {
                    &t.listing[usize::from(!scope.version().has_structured_output())]
                })
            }
            "tools/call" if has_tools => self.call_tool(scope, req),
            "resources/list" if has_resources => self.list_resources(scope, req),
            "resources/templates/list" if has_resources => self.list_page(
                &scope,
                &req,
                "resourceTemplates",
                &registry.templates,
                |t| &t.listing,
            ),
            "resources/read" if has_resources => self.read_resource(scope, req),
            "prompts/list" if has_prompts => {
                self.list_page(&scope, &req, "prompts", &registry.prompts, |p| &p.listing)
            }
            "prompts/get" if has_prompts => self.get_prompt(scope, req),
            "resources/subscribe" if has_resources && !stateless => self.subscribe(&scope, &req),
            "resources/unsubscribe" if has_resources && !stateless => {
                self.unsubscribe(&scope, &req)
            }
            "subscriptions/listen" if stateless => self.listen(scope, req),
            "completion/complete" if has_completions => self.complete(scope, &req),
            _ => Step::Reply(scope.err(&req.id, McpError::method_not_found(&req.method))),
        }
    }

    fn set_level(&self, scope: &Scope, req: &Request<'_>) -> Step {
        #[derive(Deserialize)]
        struct Params {
            level: String,
        }
        let level =
            parse_params::<Params>(req).and_then(|p| crate::outbound::LogLevel::parse(&p.level));
        match level {
            Ok(level) => {
                self.set_log_level(level);
                self.reply(scope, req, &serde_json::Map::new(), Cache::No)
            }
            Err(e) => Step::Reply(scope.err(&req.id, e)),
        }
    }

    pub(super) fn reply<T: Serialize>(
        &self,
        scope: &Scope,
        req: &Request<'_>,
        body: &T,
        cache: Cache,
    ) -> Step {
        Step::Reply(scope.ok(&self.server.inner, &req.id, body, None, cache))
    }

    fn initialize(&self, req: &Request<'_>) -> Reply {
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "protocolVersion")]
            protocol_version: String,
            #[serde(default)]
            capabilities: Option<Value>,
            #[serde(rename = "clientInfo")]
            client_info: Option<Value>,
        }
        let params: Params = match parse_params(req) {
            Ok(p) => p,
            Err(e) => return Reply::error(Some(&req.id), &e),
        };
        // Echo a session-era version we speak; otherwise offer our newest (the client decides).
        let version = ProtocolVersion::parse(&params.protocol_version)
            .filter(|v| v.era() == Era::Session)
            .unwrap_or(ProtocolVersion::LATEST_SESSION);
        let capabilities = params
            .capabilities
            .unwrap_or_else(|| Value::Object(Default::default()));
        if !self.open_session(ClientInfo {
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
        let inner = &self.server.inner;
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct InitializeResult<'a> {
            protocol_version: ProtocolVersion,
            capabilities: &'a Value,
            server_info: &'a RawValue,
            #[serde(skip_serializing_if = "Option::is_none")]
            instructions: Option<&'a str>,
        }
        let body = InitializeResult {
            protocol_version: version,
            capabilities: &inner.capabilities,
            server_info: &inner.info_raw,
            instructions: inner.instructions.as_deref(),
        };
        era::encode_ok(inner, Era::Session, &req.id, &body, None, Cache::No)
    }

    fn discover(&self, scope: &Scope, req: &Request<'_>) -> Step {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct DiscoverResult<'a> {
            supported_versions: Vec<ProtocolVersion>,
            capabilities: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            instructions: Option<&'a str>,
        }
        let inner = &self.server.inner;
        let body = DiscoverResult {
            supported_versions: ProtocolVersion::of_era(Era::Stateless).collect(),
            capabilities: &inner.capabilities,
            instructions: inner.instructions.as_deref(),
        };
        self.reply(scope, req, &body, Cache::Listing)
    }

    /// Runs a handler that may outlive this call (it awaits, or calls user code): registers it
    /// for cancellation and the connection's limit, polls it first and cancellation second, and
    /// shapes its outcome for the request's era.
    pub(super) fn run<T: Outcome>(
        self: &Arc<Self>,
        scope: Scope,
        id: &RequestId,
        what: &'static str,
        cache: Cache,
        start: impl FnOnce(Context) -> HandlerFuture<T>,
    ) -> Step {
        let asker = match (&scope.round, scope.version().era()) {
            (Some(round), _) => Asker::Round(round.clone()),
            (None, Era::Session) => {
                let peer: std::sync::Weak<Self> = Arc::downgrade(self);
                Asker::Session(peer)
            }
            (None, Era::Stateless) => Asker::Unavailable(
                "in protocol 2026-07-28 only tools/call, prompts/get and resources/read can ask the client",
            ),
        };
        // A retry carrying answers is never cached.
        let cache = match &scope.round {
            Some(round) if round.retry => Cache::No,
            _ => cache,
        };
        let in_flight = match self.begin(id, |slot| self.context(&scope, id, slot, asker)) {
            Ok(f) => f,
            Err(e) => return Step::Reply(scope.err(id, e)),
        };
        let fut = start(in_flight.ctx.clone());
        let id = id.clone();
        let conn = self.clone();
        Step::Run(Box::pin(async move {
            // The handler is polled first: most finish on their first poll, and then the
            // cancellation future is never registered (a cheap `is_cancelled` check covers it).
            let ctx = &in_flight.ctx;
            let limit = conn.server.inner.limits.request_timeout;
            let timed_out = async {
                match limit {
                    Some(limit) => tokio::time::sleep(limit).await,
                    None => std::future::pending().await,
                }
            };
            let outcome = tokio::select! {
                biased;
                outcome = CatchUnwind(fut) => outcome,
                _ = ctx.cancelled() => return None,
                // A 2026-07-28 handler waits for answers the client must give: stop it there.
                _ = ctx.input_blocked() => {
                    ctx.finish();
                    let round = scope.round.as_ref().expect("only rounds block");
                    let body = round.input_required(&conn.server.inner.sealer);
                    // Whatever still holds the context (a spawned task awaiting an ask) ends.
                    ctx.cancel();
                    return Some(era::encode_input_required(&conn.server.inner, &id, &body));
                }
                _ = timed_out => {
                    ctx.cancel();
                    let limit = limit.unwrap_or_default();
                    tracing::warn!(handler = what, ?limit, "request timed out");
                    return Some(scope.err(&id, McpError::internal(format!("Request timed out after {} ms", limit.as_millis()))));
                }
            };
            if ctx.is_cancelled() {
                return None;
            }
            // Nothing more goes out for this request once its result does.
            ctx.finish();
            drop(in_flight);
            let inner = &conn.server.inner;
            Some(match outcome {
                Ok(Ok(mut result)) => {
                    result.shape_for(scope.version());
                    scope.ok(inner, &id, &result, result.meta(), cache)
                }
                Ok(Err(e)) => scope.err(&id, e),
                Err(panic) => {
                    tracing::error!(handler = what, panic = %panic, "handler panicked");
                    scope.err(
                        &id,
                        McpError::internal(format!("Internal error: `{what}` panicked")),
                    )
                }
            })
        }))
    }

    /// The context of a request that may outlive its message.
    pub(super) fn context(
        &self,
        scope: &Scope,
        id: &RequestId,
        slot: Slot,
        asker: Asker,
    ) -> Context {
        Context::new(RequestInfo {
            id: id.clone(),
            client: scope.client.clone(),
            progress_token: scope.progress_token.clone(),
            transport: self.wire.name,
            cancel: Cancellation::default(),
            _slot: Some(slot),
            sink: scope.sink.clone(),
            log_level: scope.log_level,
            finished: Default::default(),
            progress: Default::default(),
            states: self.server.inner.states.clone(),
            headers: scope.headers.clone(),
            closer: scope.closer.clone(),
            changes: self.server.inner.changes.clone(),
            asker,
        })
    }

    /// A list method: `items` paged by the request's cursor, under `key` in the result.
    pub(super) fn list_page<T: crate::registry::Listed>(
        &self,
        scope: &Scope,
        req: &Request<'_>,
        key: &'static str,
        paged: &super::super::registry::Paged<T>,
        listing: impl Fn(&T) -> &RawValue,
    ) -> Step {
        let cursor = match cursor_of(req) {
            Ok(c) => c,
            Err(e) => return Step::Reply(scope.err(&req.id, e)),
        };
        let inner = &self.server.inner;
        let Some((items, next_cursor)) =
            paged.page_enabled(&inner.changes, cursor.as_deref(), inner.limits.page_size)
        else {
            return Step::Reply(scope.err(&req.id, McpError::invalid_params("Invalid cursor")));
        };
        let body = ListPage {
            key,
            items: items.into_iter().map(listing).collect(),
            next_cursor,
        };
        self.reply(scope, req, &body, Cache::Listing)
    }
}

/// The future of a handler run through [`Connection::run`].
pub(super) type HandlerFuture<T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, McpError>> + Send>>;

/// A handler's result: serialized as the response body, after era-specific shaping.
pub(super) trait Outcome: Serialize + Send + 'static {
    /// Adjusts the result for what `version` understands.
    fn shape_for(&mut self, _version: ProtocolVersion) {}
    /// The handler's own `_meta` members.
    fn meta(&self) -> Option<&serde_json::Map<String, Value>> {
        None
    }
}

/// One page of a list result: `{"<key>": [...], "nextCursor"?: "..."}`.
pub(super) struct ListPage<I> {
    pub(super) key: &'static str,
    pub(super) items: Vec<I>,
    pub(super) next_cursor: Option<String>,
}

impl<I: Serialize> Serialize for ListPage<I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(self.key, &self.items)?;
        if let Some(next) = &self.next_cursor {
            map.serialize_entry("nextCursor", next)?;
        }
        map.end()
    }
}

/// The `cursor` of a list request (absent params mean the first page).
pub(super) fn cursor_of(req: &Request<'_>) -> Result<Option<String>, McpError> {
    #[derive(Deserialize)]
    struct Params {
        cursor: Option<String>,
    }
    Ok(parse_optional_params::<Params>(req)?.and_then(|p| p.cursor))
}

/// Parses required params; errors are -32602 with serde's reason.
pub(super) fn parse_params<'a, T: Deserialize<'a>>(req: &Request<'a>) -> Result<T, McpError> {
    let text = req.params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| {
        McpError::invalid_params(format!(
            "Invalid params for {}: {}",
            req.method,
            crate::protocol::jsonrpc::strip_position(&e)
        ))
    })
}

pub(super) fn parse_optional_params<T: for<'de> Deserialize<'de>>(
    req: &Request<'_>,
) -> Result<Option<T>, McpError> {
    match req.params {
        None => Ok(None),
        Some(_) => parse_params(req).map(Some),
    }
}
