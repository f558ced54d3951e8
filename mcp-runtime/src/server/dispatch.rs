//! The dispatcher: one table from method name to handler, shared by both eras.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::connection::{CatchUnwind, Connection, Step};
use super::era::{self, Cache, ClientInfo, Scope};
use crate::context::{Cancellation, Context, RequestInfo};
use crate::protocol::jsonrpc::{Request, encode_error};
use crate::protocol::{Era, McpError, ProtocolVersion};
use crate::tool::ToolCall;

impl Connection {
    pub(crate) fn on_request(self: &Arc<Self>, req: Request<'_>) -> Step {
        if req.method == "initialize" {
            return Step::Reply(self.initialize(&req));
        }
        // A ping is answered even before `initialize` (the lifecycle allows pings then); a
        // stateless client's ping is checked below and refused, as 2026-07-28 has no ping.
        if req.method == "ping" && !era::has_stateless_meta(&req) {
            return Step::Reply(era::encode_ok(
                &self.server.inner,
                Era::Session,
                &req.id,
                &serde_json::Map::new(),
                None,
                Cache::No,
            ));
        }
        let scope = match era::resolve(self, &req) {
            Ok(scope) => scope,
            Err(e) => return Step::Reply(encode_error(Some(&req.id), &e)),
        };
        let stateless = scope.version().era() == Era::Stateless;
        let has_tools = !self.server.inner.registry.is_empty();
        match &*req.method {
            "server/discover" if stateless => self.discover(&scope, &req),
            "tools/list" if has_tools => self.list_tools(&scope, &req),
            "tools/call" if has_tools => self.call_tool(scope, req),
            _ => Step::Reply(scope.err(&req.id, McpError::method_not_found(&req.method))),
        }
    }

    fn reply<T: Serialize>(
        &self,
        scope: &Scope,
        req: &Request<'_>,
        body: &T,
        cache: Cache,
    ) -> Step {
        Step::Reply(scope.ok(&self.server.inner, &req.id, body, None, cache))
    }

    fn initialize(&self, req: &Request<'_>) -> Vec<u8> {
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
            Err(e) => return encode_error(Some(&req.id), &e),
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
            return encode_error(
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
        self.reply(scope, req, &body, Cache::Yes)
    }

    fn list_tools(&self, scope: &Scope, req: &Request<'_>) -> Step {
        #[derive(Deserialize)]
        struct Params {
            cursor: Option<String>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct ListToolsResult<'a> {
            tools: Vec<&'a RawValue>,
            #[serde(skip_serializing_if = "Option::is_none")]
            next_cursor: Option<String>,
        }
        let cursor = match parse_optional_params::<Params>(req) {
            Ok(p) => p.and_then(|p| p.cursor),
            Err(e) => return Step::Reply(scope.err(&req.id, e)),
        };
        let inner = &self.server.inner;
        let Some((tools, next_cursor)) = inner
            .registry
            .page(cursor.as_deref(), inner.limits.page_size)
        else {
            return Step::Reply(scope.err(&req.id, McpError::invalid_params("Invalid cursor")));
        };
        let variant = usize::from(!scope.version().has_structured_output());
        let body = ListToolsResult {
            tools: tools.iter().map(|t| &*t.listing[variant]).collect(),
            next_cursor,
        };
        self.reply(scope, req, &body, Cache::Yes)
    }

    fn call_tool(self: &Arc<Self>, scope: Scope, req: Request<'_>) -> Step {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(borrow)]
            name: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            arguments: Option<&'a RawValue>,
        }
        let params: Params<'_> = match parse_params(&req) {
            Ok(p) => p,
            Err(e) => return Step::Reply(scope.err(&req.id, e)),
        };
        // `arguments` must be an object by the CallToolRequest schema: a protocol error. Objects
        // that do not fit the tool's own schema are tool errors the model can fix (isError).
        if params
            .arguments
            .is_some_and(|a| !matches!(a.get().as_bytes().first(), Some(b'{') | Some(b'n')))
        {
            let e = McpError::invalid_params(
                "Invalid params for tools/call: `arguments` must be an object",
            );
            return Step::Reply(scope.err(&req.id, e));
        }
        let inner = &self.server.inner;
        let Some(tool) = inner.registry.get(&params.name) else {
            let e = McpError::invalid_params(format!("Unknown tool: {}", params.name))
                .with_data(serde_json::json!({ "name": params.name }));
            return Step::Reply(scope.err(&req.id, e));
        };
        let in_flight = match self.begin(&req.id, |slot| {
            Context::new(RequestInfo {
                id: req.id.clone(),
                client: scope.client.clone(),
                progress_token: scope.progress_token.clone(),
                transport: self.transport,
                cancel: Cancellation::default(),
                _slot: Some(slot),
            })
        }) {
            Ok(f) => f,
            Err(e) => return Step::Reply(scope.err(&req.id, e)),
        };
        let name = tool.def.name;
        let fut = (tool.def.call)(ToolCall {
            context: in_flight.ctx.clone(),
            arguments: params.arguments,
            mode: tool.mode,
        });
        let id = req.id;
        let conn = self.clone();
        Step::Run(Box::pin(async move {
            // The tool is polled first: most finish on their first poll, and then the
            // cancellation future is never registered (a cheap `is_cancelled` check covers it).
            let ctx = &in_flight.ctx;
            let outcome = tokio::select! {
                biased;
                outcome = CatchUnwind(fut) => outcome,
                _ = ctx.cancelled() => return None,
            };
            if ctx.is_cancelled() {
                return None;
            }
            drop(in_flight);
            let inner = &conn.server.inner;
            Some(match outcome {
                Ok(Ok(mut result)) => {
                    era::downgrade_result(&mut result, scope.version());
                    scope.ok(inner, &id, &result, Some(&result.meta), Cache::No)
                }
                Ok(Err(e)) => scope.err(&id, e),
                Err(panic) => {
                    tracing::error!(tool = name, panic = %panic, "tool panicked");
                    scope.err(
                        &id,
                        McpError::internal(format!("Internal error: tool `{name}` panicked")),
                    )
                }
            })
        }))
    }
}

/// Parses required params; errors are -32602 with serde's reason.
fn parse_params<'a, T: Deserialize<'a>>(req: &Request<'a>) -> Result<T, McpError> {
    let text = req.params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| {
        McpError::invalid_params(format!(
            "Invalid params for {}: {}",
            req.method,
            crate::protocol::jsonrpc::strip_position(&e)
        ))
    })
}

fn parse_optional_params<T: for<'de> Deserialize<'de>>(
    req: &Request<'_>,
) -> Result<Option<T>, McpError> {
    match req.params {
        None => Ok(None),
        Some(_) => parse_params(req).map(Some),
    }
}
