//! One incoming message, decoded once: the JSON-RPC envelope and, for a request, its params
//! typed by method with `_meta` ([`params`](crate::protocol::params)). Transports decode a message (or a
//! batch) here, route and check it with what they find, and hand the same value to the
//! dispatcher: nothing after this reads the message text again.

use crate::protocol::jsonrpc::{self, ClientResponse, DecodeError, Incoming, Notification};
use crate::protocol::params::{self, Request};
use crate::protocol::{ErrorCode, McpError};

pub(crate) use crate::protocol::params::RequestMeta;

/// A decoded message: a request with its params read by method, or a notification or client
/// response (which borrow from the text).
pub(crate) struct Envelope<'a> {
    pub(crate) message: Message<'a>,
}

/// What a message is.
// It lives on the stack for one message: boxing the request would cost an allocation each.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Message<'a> {
    /// A request, decoded whole.
    Request(Request),
    /// A notification.
    Notification(Notification<'a>),
    /// A response to a server-to-client request.
    Response(ClientResponse<'a>),
}

/// Decodes one message (not a batch): the JSON-RPC envelope, then a request's params by its
/// method ([`params::decode`]), `_meta` included, in one pass.
///
/// A request whose params serde_json cannot read at all (`1e400`, nesting past its depth
/// limit) is a parse error (-32700). Params that read but do not fit the method decode to
/// [`params::Body::Invalid`]: the dispatcher refuses the request before anything looks at it.
pub(crate) fn decode(text: &str) -> Result<Envelope<'_>, DecodeError> {
    let message = match jsonrpc::decode(text)? {
        Incoming::Request(req) => {
            let params = params::decode(&req.method, req.params.map(|p| p.get())).map_err(|e| {
                DecodeError {
                    id: Some(req.id.clone()),
                    notification: false,
                    error: McpError::new(
                        ErrorCode::PARSE_ERROR,
                        format!("Parse error: {}", jsonrpc::strip_position(&e)),
                    ),
                }
            })?;
            Message::Request(Request {
                id: req.id,
                method: params::method_name(req.method),
                params,
            })
        }
        Incoming::Notification(n) => Message::Notification(n),
        Incoming::Response(r) => Message::Response(r),
    };
    Ok(Envelope { message })
}

/// A message or a 2025-03-26 batch, decoded once (the HTTP transport checks each request of a
/// batch before the connection runs it).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Decoded<'a> {
    /// One message.
    One(Result<Envelope<'a>, DecodeError>),
    /// A JSON array: each member decoded, or the error for the whole array.
    Batch(Result<Vec<Result<Envelope<'a>, DecodeError>>, McpError>),
}

/// Decodes a message or a batch.
pub(crate) fn decode_any(text: &str) -> Decoded<'_> {
    if !text.trim_start().starts_with('[') {
        return Decoded::One(decode(text));
    }
    let items: Vec<&serde_json::value::RawValue> = match serde_json::from_str(text) {
        Ok(items) => items,
        Err(e) => {
            return Decoded::Batch(Err(McpError::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: {}", jsonrpc::strip_position(&e)),
            )));
        }
    };
    if items.is_empty() {
        return Decoded::Batch(Err(McpError::invalid_request(
            "Invalid request: empty batch",
        )));
    }
    let items = items
        .into_iter()
        .map(|item| {
            let text = item.get();
            if text.starts_with('[') {
                return Err(DecodeError {
                    id: None,
                    notification: false,
                    error: McpError::invalid_request("Invalid request: nested batch"),
                });
            }
            decode(text)
        })
        .collect();
    Decoded::Batch(Ok(items))
}

impl Envelope<'_> {
    /// Whether the message is a request naming a protocol version in its `_meta`: a
    /// stateless-era (2026-07-28) request.
    pub(crate) fn is_stateless(&self) -> bool {
        matches!(&self.message, Message::Request(r) if r.params.is_stateless())
    }

    /// The request, if the message is one.
    pub(crate) fn request(&self) -> Option<&Request> {
        match &self.message {
            Message::Request(r) => Some(r),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestId;

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
        let text = request(&format!(r#"{{"_meta":{escaped},"name":"t"}}"#));
        assert!(decode(&text).ok().unwrap().is_stateless());
    }

    #[test]
    fn unreadable_params_are_a_parse_error_and_ill_fitting_ones_invalid() {
        let deep = format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/clientCapabilities":{}{}}},"name":"t"}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        for params in [
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":1e400},"name":"t"}"#.to_owned(),
            deep,
        ] {
            let err = decode(&request(&params)).err().expect(&params);
            assert_eq!(err.error.code, ErrorCode::PARSE_ERROR, "{params}");
            assert_eq!(err.id, Some(RequestId::Number(7)));
        }
        for params in [
            format!(r#"{{"_meta":{META},"_meta":{META},"name":"t"}}"#),
            r#"{"_meta":"x","name":"t"}"#.to_owned(),
            r#"{"name":7}"#.to_owned(),
        ] {
            let text = request(&params);
            let Ok(envelope) = decode(&text) else {
                panic!("{params}")
            };
            let req = envelope.request().expect("a request");
            assert!(
                matches!(req.params.body, params::Body::Invalid(_)),
                "{params}"
            );
            assert!(!envelope.is_stateless());
        }
    }

    #[test]
    fn array_params_are_invalid_for_a_method_with_members() {
        let text = request(&format!(r#"[{META},"t",null]"#));
        let envelope = decode(&text).ok().unwrap();
        let req = envelope.request().unwrap();
        assert!(matches!(req.params.body, params::Body::Invalid(_)));
        assert!(req.params.meta.is_none());
    }
}
