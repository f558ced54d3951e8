//! The era adapter: which protocol era a request belongs to, and how results and errors are
//! shaped for it. Handlers never look at versions; they hand their result body here.
//!
//! - Session era (after `initialize`): results go out as the handler built them; a missing
//!   resource is -32002.
//! - Stateless era (2026-07-28, chosen per request by `_meta`): every result gets
//!   `resultType`, `_meta.io.modelcontextprotocol/serverInfo`, and cacheable ones `ttlMs` and
//!   `cacheScope`; a missing resource is -32602.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::ServerInner;
use super::envelope::RequestMeta;
use crate::protocol::LogLevel;
use crate::protocol::jsonrpc::{encode_result, encode_result_with};
use crate::protocol::{
    CallToolResult, Content, ErrorCode, McpError, ProtocolEra, ProtocolVersion, RequestId,
};
use crate::request::{ClientInfo, Reply};

/// The era-specific view of one request.
pub(crate) struct Scope {
    pub(crate) client: Arc<ClientInfo>,
    pub(crate) progress_token: Option<Value>,
    /// The least severe log level the client wants for this request.
    pub(crate) log_level: Option<crate::protocol::LogLevel>,
    /// Where the request's notifications go (set by the connection after `resolve`).
    pub(crate) sink: Option<crate::request::Sink>,
    /// The HTTP request headers, on HTTP (set likewise).
    pub(crate) headers: Option<Arc<http::HeaderMap>>,
    /// Ends the request's HTTP response stream early (set likewise).
    pub(crate) closer: Option<Arc<tokio::sync::Notify>>,
    /// The verified caller, on HTTP with authorization (set likewise).
    pub(crate) principal: Option<Arc<crate::auth::Principal>>,
    /// The client's address, on HTTP (set likewise).
    pub(crate) peer: Option<std::net::IpAddr>,
    /// 2026-07-28 requests that may ask the client: this round's answers (see `input.rs`).
    pub(crate) round: Option<Arc<crate::request_state::round::Round>>,
}

/// Whether a result may be cached by the client (2026-07-28 caching rules).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cache {
    /// Not cacheable (tool calls, prompts, errors).
    No,
    /// Describes the server (discovery, the lists of tools, templates and prompts).
    Listing,
    /// Resource data, which can change under the client (reads, listed resources).
    Data,
}

pub(crate) const STATELESS_KEY_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const STATELESS_KEY_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

/// Decides the era of a request (anything but `initialize`) from its `_meta` (parsed once, by
/// the envelope) and the connection's session, if one is open (with its `logging/setLevel`).
/// A missing member or session is an envelope error ([`Reply::missing`]).
pub(crate) fn resolve(
    id: &RequestId,
    meta: Option<RequestMeta>,
    session: Option<(Arc<ClientInfo>, LogLevel)>,
) -> Result<Scope, Reply> {
    let invalid = |e: McpError| Reply::error(Some(id), &e);
    let progress_token = meta.as_ref().and_then(|m| m.progress_token.clone());
    if progress_token
        .as_ref()
        .is_some_and(|t| !t.is_string() && !t.is_i64() && !t.is_u64())
    {
        return Err(invalid(McpError::invalid_params(
            "`_meta.progressToken` must be a string or an integer",
        )));
    }
    let requested_level = meta
        .as_ref()
        .and_then(|m| m.log_level.as_deref())
        .map(LogLevel::parse)
        .transpose()
        .map_err(invalid)?;
    match meta {
        Some(RequestMeta {
            protocol_version: Some(version),
            client_capabilities,
            client_info,
            ..
        }) => {
            let requested = version.as_str().ok_or_else(|| {
                invalid(McpError::invalid_params(format!(
                    "`_meta.{STATELESS_KEY_VERSION}` must be a string"
                )))
            })?;
            let version = ProtocolVersion::parse(requested)
                .filter(|v| v.era() == ProtocolEra::Stateless)
                .ok_or_else(|| invalid(unsupported_version(requested)))?;
            let capabilities = match client_capabilities {
                Some(caps @ Value::Object(_)) => caps,
                Some(_) => {
                    return Err(invalid(McpError::invalid_params(format!(
                        "`_meta.{STATELESS_KEY_CAPS}` must be an object"
                    ))));
                }
                None => {
                    let e = McpError::invalid_params(format!(
                        "Missing required `_meta.{STATELESS_KEY_CAPS}` (protocol {version} requires it on every request)"
                    ))
                    .with_data(serde_json::json!({ "missing": [STATELESS_KEY_CAPS] }));
                    return Err(Reply::missing(Some(id), &e));
                }
            };
            let client = Arc::new(ClientInfo {
                version,
                info: client_info,
                capabilities,
            });
            // 2026-07-28: log notifications only when this request asks for them.
            Ok(Scope {
                client,
                progress_token,
                log_level: requested_level,
                sink: None,
                headers: None,
                principal: None,
                peer: None,
                closer: None,
                round: None,
            })
        }
        _ => match session {
            // Session era: the level `logging/setLevel` chose (everything until then).
            Some((client, level)) => Ok(Scope {
                client,
                progress_token,
                log_level: Some(level),
                sink: None,
                headers: None,
                principal: None,
                peer: None,
                closer: None,
                round: None,
            }),
            None => {
                let e = McpError::invalid_params(format!(
                    "No session: send `initialize` first (protocol 2025-11-25 and earlier), or put \
                     `{STATELESS_KEY_VERSION}` and `{STATELESS_KEY_CAPS}` in `_meta` (protocol 2026-07-28)"
                ))
                .with_data(serde_json::json!({ "missing": [STATELESS_KEY_VERSION, STATELESS_KEY_CAPS] }));
                Err(Reply::missing(Some(id), &e))
            }
        },
    }
}

/// Shapes a tool result for what `version` knows: no `structuredContent` before 2025-06-18,
/// and content block types newer than the version become text describing them (a strict
/// client rejects a whole result over a block type it does not know).
pub(crate) fn downgrade_result(result: &mut CallToolResult, version: ProtocolVersion) {
    if version.has_structured_output() {
        return;
    }
    result.structured_content = None;
    for block in &mut result.content {
        let text = match block {
            Content::ResourceLink { uri, name, .. } => format!("{name}: {uri}"),
            Content::Audio { mime_type, .. } if version < ProtocolVersion::V2025_03_26 => {
                format!("[{mime_type} audio, not supported by protocol {version}]")
            }
            _ => continue,
        };
        *block = Content::text(text);
    }
}

/// -32022 with the versions a stateless request may name.
pub(crate) fn unsupported_version(requested: &str) -> McpError {
    let supported: Vec<&str> = ProtocolVersion::of_era(ProtocolEra::Stateless)
        .map(|v| v.as_str())
        .collect();
    McpError::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {requested:?}; supported: {}",
            supported.join(", ")
        ),
    )
    .with_data(serde_json::json!({ "supported": supported, "requested": requested }))
}

#[derive(Serialize)]
struct ResultMeta<'a> {
    #[serde(flatten)]
    extra: Option<&'a Map<String, Value>>,
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        skip_serializing_if = "Option::is_none"
    )]
    server_info: Option<&'a RawValue>,
}

impl ResultMeta<'_> {
    fn is_empty(&self) -> bool {
        self.server_info.is_none() && self.extra.is_none_or(Map::is_empty)
    }
}

impl Scope {
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.client.version
    }

    /// Encodes a success response for this era. `meta` holds the handler's own `_meta` members.
    pub(crate) fn ok<T: Serialize>(
        &self,
        server: &ServerInner,
        id: &RequestId,
        body: &T,
        meta: Option<&Map<String, Value>>,
        cache: Cache,
    ) -> Reply {
        encode_ok(server, self.version().era(), id, body, meta, cache)
    }

    /// Encodes an error response for this era.
    pub(crate) fn err(&self, id: &RequestId, error: McpError) -> Reply {
        encode_err(self.version().era(), id, error)
    }
}

pub(crate) fn encode_ok<T: Serialize>(
    server: &ServerInner,
    era: ProtocolEra,
    id: &RequestId,
    body: &T,
    meta: Option<&Map<String, Value>>,
    cache: Cache,
) -> Reply {
    let stateless = era == ProtocolEra::Stateless;
    if !stateless && meta.is_none_or(Map::is_empty) {
        // Nothing to add: the body is the result (the common session-era case, kept direct).
        return Reply::result(encode_result(id, body));
    }
    let limits = &server.limits;
    let ttl = match cache {
        Cache::No => None,
        Cache::Listing => Some(limits.cache_ttl),
        Cache::Data => Some(limits.resource_cache_ttl),
    };
    let ttl_ms = ttl
        .filter(|_| stateless)
        .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
    let meta = ResultMeta {
        extra: meta,
        server_info: stateless.then_some(&*server.info_raw),
    };
    // The body's members, then the era's: `resultType`, the cache hints, `_meta`.
    Reply::result(encode_result_with(id, body, |members| {
        if stateless {
            members.add("resultType", "complete")?;
        }
        if let Some(ttl_ms) = ttl_ms {
            members.add("ttlMs", &ttl_ms)?;
            members.add("cacheScope", &limits.cache_scope)?;
        }
        if !meta.is_empty() {
            members.add("_meta", &meta)?;
        }
        Ok(())
    }))
}

/// Encodes a 2026-07-28 `InputRequiredResult` (never cacheable).
pub(crate) fn encode_input_required(
    server: &ServerInner,
    id: &RequestId,
    body: &crate::request_state::round::InputRequired,
) -> Reply {
    encode_typed(server, id, body, "input_required")
}

/// Encodes a 2026-07-28 result of another `resultType` than `complete` (never cacheable).
pub(crate) fn encode_typed<T: Serialize>(
    server: &ServerInner,
    id: &RequestId,
    body: &T,
    result_type: &'static str,
) -> Reply {
    let meta = ResultMeta {
        extra: None,
        server_info: Some(&*server.info_raw),
    };
    Reply::result(encode_result_with(id, body, |members| {
        members.add("resultType", result_type)?;
        members.add("_meta", &meta)
    }))
}

pub(crate) fn encode_err(era: ProtocolEra, id: &RequestId, mut error: McpError) -> Reply {
    if era == ProtocolEra::Stateless && error.code == ErrorCode::RESOURCE_NOT_FOUND_LEGACY {
        error.code = ErrorCode::INVALID_PARAMS;
    }
    Reply::error(Some(id), &error)
}
