//! One incoming message, decoded once: the JSON-RPC envelope and, for a request that carries
//! `_meta`, the members of its params the runtime reads before any handler runs (the
//! 2026-07-28 protocol version, client capabilities and info, progress token and log level, and
//! the `name`/`uri` its HTTP headers must agree with). Transports decode a message with
//! [`decode`], route it with what they find, and hand the same [`Envelope`] to the dispatcher.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::jsonrpc::{self, DecodeError, Incoming, Request};
use crate::protocol::{ErrorCode, McpError};

/// A decoded message and its request's head.
pub(crate) struct Envelope<'a> {
    pub(crate) message: Incoming<'a>,
    /// The request's `_meta` and naming members, when its params carry `_meta`.
    pub(crate) head: Option<Head<'a>>,
}

/// What a request's params say about the request itself, parsed once.
#[derive(Deserialize, Default)]
pub(crate) struct Head<'a> {
    #[serde(rename = "_meta")]
    pub(crate) meta: Option<RequestMeta>,
    /// `tools/call` and `prompts/get` name their target (any JSON: the handler reports a bad one).
    #[serde(borrow)]
    pub(crate) name: Option<&'a RawValue>,
    /// `resources/read` names its resource.
    #[serde(borrow)]
    pub(crate) uri: Option<&'a RawValue>,
    /// `tasks/get`, `tasks/update` and `tasks/cancel` name their task.
    #[serde(rename = "taskId", borrow)]
    pub(crate) task_id: Option<&'a RawValue>,
}

/// The `_meta` members of a request that the runtime reads.
#[derive(Deserialize, Default)]
pub(crate) struct RequestMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub(crate) protocol_version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub(crate) client_capabilities: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    pub(crate) client_info: Option<Value>,
    #[serde(rename = "progressToken")]
    pub(crate) progress_token: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel")]
    pub(crate) log_level: Option<String>,
    /// W3C trace context (the spec reserves these `_meta` keys for it): any JSON, so that a
    /// malformed one is ignored rather than failing the request.
    #[cfg(feature = "opentelemetry")]
    pub(crate) traceparent: Option<serde_json::Value>,
    #[cfg(feature = "opentelemetry")]
    pub(crate) tracestate: Option<serde_json::Value>,
}

/// Decodes one message (not a batch).
///
/// Params that may carry `_meta` but do not read as a [`Head`] make the request fail: -32700 for
/// a member serde_json cannot read (`1e400`, nesting past its depth limit), -32602 for one of the
/// wrong type or a repeated `_meta`. The era and the header checks are decided by this one parse, so a request whose
/// `_meta` cannot be read must not go on as if it had none.
pub(crate) fn decode(text: &str) -> Result<Envelope<'_>, DecodeError> {
    let message = jsonrpc::decode(text)?;
    let head = match &message {
        Incoming::Request(req) => head_of(req).map_err(|e| {
            let why = jsonrpc::strip_position(&e);
            // What serde_json cannot read at all (a number out of range, nesting past its depth
            // limit) is a parse error; members of the wrong type or repeated are invalid params.
            let error = if e.is_syntax() || e.is_eof() {
                McpError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {why}"))
            } else {
                McpError::invalid_params(format!("Invalid params: {why}"))
            };
            DecodeError {
                id: Some(req.id.clone()),
                notification: false,
                error,
            }
        })?,
        _ => None,
    };
    Ok(Envelope { message, head })
}

/// Whether JSON `text` may have a member named `key` (made of letters and `_`): any spelling
/// serde_json reads as `key` contains either `key` itself or a `\u` escape (no other JSON
/// escape yields a letter or `_`). A cheap test before a parse, never a false "no".
pub(crate) fn may_have_member(text: &str, key: &str) -> bool {
    text.contains(key) || text.contains("\\u")
}

/// Most session-era requests carry no `_meta`: [`may_have_member`] spares them a second parse
/// of their params. (A `_meta` inside an argument's text only costs that parse.)
fn head_of<'a>(req: &Request<'a>) -> Result<Option<Head<'a>>, serde_json::Error> {
    let Some(params) = req.params else {
        return Ok(None);
    };
    let text = params.get();
    // Array params have no members (the handler refuses them); serde would read a struct
    // from an array by position.
    if !text.trim_start().starts_with('{') || !may_have_member(text, "_meta") {
        return Ok(None);
    }
    serde_json::from_str(text).map(Some)
}

impl Envelope<'_> {
    /// Whether the message is a request naming a protocol version in its `_meta`: a
    /// stateless-era (2026-07-28) request.
    pub(crate) fn is_stateless(&self) -> bool {
        self.head
            .as_ref()
            .and_then(|h| h.meta.as_ref())
            .is_some_and(RequestMeta::is_stateless)
    }
}

impl RequestMeta {
    /// Whether it names a protocol version: the mark of a stateless-era request.
    pub(crate) fn is_stateless(&self) -> bool {
        self.protocol_version.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    fn request(params: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#)
    }

    #[test]
    fn any_spelling_of_meta_is_read() {
        for key in ["_meta", r"_m\u0065ta", r"\u005fmeta"] {
            let text = request(&format!(r#"{{"{key}":{META},"name":"t"}}"#));
            let envelope = decode(&text).unwrap_or_else(|e| panic!("{key}: {}", e.error));
            assert!(envelope.is_stateless(), "{key}");
        }
        let escaped = META.replace('/', r"\/");
        let text = request(&format!(r#"{{"_meta":{escaped}}}"#));
        assert!(decode(&text).ok().unwrap().is_stateless());
    }

    #[test]
    fn unreadable_meta_is_an_error_not_absent() {
        use crate::protocol::ErrorCode;
        let deep = format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/clientCapabilities":{}{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        for (params, code) in [
            (
                r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":1e400}}"#.to_owned(),
                ErrorCode::PARSE_ERROR,
            ),
            (deep, ErrorCode::PARSE_ERROR),
            (
                format!(r#"{{"_meta":{META},"_meta":{META}}}"#),
                ErrorCode::INVALID_PARAMS,
            ),
            (r#"{"_meta":"x"}"#.to_owned(), ErrorCode::INVALID_PARAMS),
        ] {
            let err = decode(&request(&params)).err().expect(&params);
            assert_eq!(err.error.code, code, "{params}");
            assert_eq!(err.id, Some(crate::protocol::RequestId::Number(7)));
        }
    }

    #[test]
    fn array_params_have_no_head() {
        let text = request(&format!(r#"[{META},"t",null]"#));
        assert!(decode(&text).ok().unwrap().head.is_none());
    }
}
