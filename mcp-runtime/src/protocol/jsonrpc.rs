//! The JSON-RPC 2.0 envelope: decoding incoming messages and encoding responses.
//!
//! Decoding is strict where it matters for safety (the `jsonrpc` member, the type of `id`,
//! duplicate members) and keeps `params` as raw JSON, so each handler parses exactly the type it
//! needs, once.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::IgnoredAny;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::error::{ErrorCode, McpError};

/// A JSON-RPC request id: a string or an integer, never `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl de::Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("integer id out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

/// A request the client sent: it expects exactly one response. Borrows from the message text.
#[derive(Debug)]
pub struct Request<'a> {
    /// The id to answer with.
    pub id: RequestId,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The raw `params` member, if present.
    pub params: Option<&'a RawValue>,
}

/// A notification the client sent: it gets no response.
#[derive(Debug)]
pub struct Notification<'a> {
    /// The method name.
    pub method: Cow<'a, str>,
    /// The raw `params` member, if present.
    pub params: Option<&'a RawValue>,
}

/// A response the client sent to a server-to-client request.
#[derive(Debug)]
pub struct ClientResponse<'a> {
    /// The id of the server's request.
    pub id: RequestId,
    /// `Ok(result)` or `Err(error object)`, both raw.
    pub outcome: Result<&'a RawValue, &'a RawValue>,
}

/// One decoded incoming message, borrowing from its text: handlers parse what they need from
/// it before anything outlives the line.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request.
    Request(Request<'a>),
    /// A notification.
    Notification(Notification<'a>),
    /// A response to a server-to-client request.
    Response(ClientResponse<'a>),
}

/// A message that could not be decoded, with the id to answer it under (when one could be read).
#[derive(Debug)]
pub struct DecodeError {
    /// The request id, when the envelope had a readable one.
    pub id: Option<RequestId>,
    /// The message was recognisably a notification (a `method`, no `id`): it gets no answer.
    pub notification: bool,
    /// What was wrong.
    pub error: McpError,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    // `null` must stay visible (an id of `null` is invalid, not absent).
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    // `null` too: params that are `null` are invalid (an object or an array), not absent.
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Decodes one JSON-RPC message (not a batch).
pub fn decode(text: &str) -> Result<Incoming<'_>, DecodeError> {
    // A message is an object. (serde would also read the envelope from an array, by position:
    // `["2.0",1,"tools/call",{…}]` must not run as a call that a proxy saw as a batch.)
    if !text.trim_start().starts_with('{') && serde_json::from_str::<IgnoredAny>(text).is_ok() {
        return Err(DecodeError {
            id: None,
            notification: false,
            error: McpError::invalid_request("Invalid request: a message is a JSON object"),
        });
    }
    let env: Envelope<'_> = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(e) => {
            let error = if e.is_syntax() || e.is_eof() {
                McpError::new(
                    ErrorCode::PARSE_ERROR,
                    format!("Parse error: {}", strip_position(&e)),
                )
            } else {
                McpError::invalid_request(format!("Invalid request: {}", strip_position(&e)))
            };
            return Err(DecodeError {
                id: None,
                notification: false,
                error,
            });
        }
    };
    let id = match env.id {
        None => None,
        Some(raw) => match serde_json::from_str::<RequestId>(raw.get()) {
            Ok(id) => Some(id),
            Err(e) => {
                // A string JSON's grammar allows but Unicode does not (a lone surrogate escape).
                let why = if raw.get().starts_with('"') {
                    format!(
                        "Invalid request: `id` is not a readable string ({})",
                        strip_position(&e)
                    )
                } else {
                    "Invalid request: `id` must be a string or an integer".to_owned()
                };
                return Err(DecodeError {
                    id: None,
                    notification: false,
                    error: McpError::invalid_request(why),
                });
            }
        },
    };
    let notification = env.id.is_none() && env.method.is_some();
    let fail = |id: Option<RequestId>, msg: &str| DecodeError {
        id,
        notification,
        error: McpError::invalid_request(format!("Invalid request: {msg}")),
    };
    if env.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(fail(id, "`jsonrpc` must be \"2.0\""));
    }
    if let Some(params) = env.params {
        let first = params.get().trim_start().as_bytes().first();
        if !matches!(first, Some(b'{') | Some(b'[')) {
            return Err(fail(id, "`params` must be an object or an array"));
        }
    }
    match (env.method, id) {
        (Some(method), Some(id)) if env.result.is_none() && env.error.is_none() => {
            Ok(Incoming::Request(Request {
                id,
                method,
                params: env.params,
            }))
        }
        (Some(method), None) if env.result.is_none() && env.error.is_none() => {
            Ok(Incoming::Notification(Notification {
                method,
                params: env.params,
            }))
        }
        (None, Some(id)) => match (env.result, env.error) {
            (Some(result), None) => Ok(Incoming::Response(ClientResponse {
                id,
                outcome: Ok(result),
            })),
            (None, Some(error)) => Ok(Incoming::Response(ClientResponse {
                id,
                outcome: Err(error),
            })),
            _ => Err(fail(
                Some(id),
                "a response needs exactly one of `result` and `error`",
            )),
        },
        (_, id) => Err(fail(id, "not a request, notification or response")),
    }
}

/// serde_json appends " at line L column C"; in a one-line message that is noise for the client.
pub(crate) fn strip_position(e: &serde_json::Error) -> String {
    let mut s = e.to_string();
    if e.line() != 0
        && let Some(i) = s.rfind(" at line ")
    {
        s.truncate(i);
    }
    s
}

/// The first allocation of an encoded result: most results fit (a small tool result is about
/// 110 bytes, a 2026-07-28 one with `resultType` and `_meta` about 250).
const RESULT_CAPACITY: usize = 384;

/// An encoded outgoing message: one line of JSON, without the newline.
pub type Encoded = Vec<u8>;

#[derive(Serialize)]
struct ResultEnvelope<'a, T> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: T,
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a McpError,
}

#[derive(Serialize)]
struct NotificationEnvelope<'a, T> {
    jsonrpc: &'static str,
    method: &'a str,
    params: T,
}

/// Encodes a success response.
pub fn encode_result<T: Serialize>(id: &RequestId, result: T) -> Encoded {
    // serde_json::to_vec starts at 128 bytes: a small tool result grew it twice.
    let mut out = Vec::with_capacity(RESULT_CAPACITY);
    serde_json::to_writer(
        &mut out,
        &ResultEnvelope {
            jsonrpc: "2.0",
            id,
            result,
        },
    )
    .map(|()| out)
    .unwrap_or_else(|e| unencodable(id, &e))
}

/// The error sent instead of a result that could not be encoded.
fn unencodable(id: &RequestId, e: &serde_json::Error) -> Encoded {
    encode_error(
        Some(id),
        &McpError::internal(format!("could not encode the result: {e}")),
    )
}

/// Encodes a success response whose result is the object `body` with the members `more`
/// adds after its own: the bytes a `#[serde(flatten)]` wrapper writes, without serde's flatten,
/// which sends each of the body's members through a map serializer of its own. A body that is
/// not an object is an internal error, as flattening it was.
pub(crate) fn encode_result_with<T: Serialize + ?Sized>(
    id: &RequestId,
    body: &T,
    more: impl FnOnce(&mut ResultMembers<'_>) -> serde_json::Result<()>,
) -> Encoded {
    let mut out = Vec::with_capacity(RESULT_CAPACITY);
    let written = (|| -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut out, id)?;
        out.extend_from_slice(br#","result":"#);
        let start = out.len();
        serde_json::to_writer(&mut out, body)?;
        if out.get(start) != Some(&b'{') || out.last() != Some(&b'}') {
            return Err(<serde_json::Error as serde::ser::Error>::custom(
                "the result is not an object",
            ));
        }
        out.pop();
        let mut members = ResultMembers {
            any: out.len() > start + 1,
            out: &mut out,
        };
        more(&mut members)?;
        out.extend_from_slice(b"}}");
        Ok(())
    })();
    match written {
        Ok(()) => out,
        Err(e) => unencodable(id, &e),
    }
}

/// The members [`encode_result_with`] adds to a result object.
pub(crate) struct ResultMembers<'a> {
    out: &'a mut Vec<u8>,
    /// The object has a member already: the next one follows a comma.
    any: bool,
}

impl ResultMembers<'_> {
    /// Adds `"name":value`. `name` is written as it is: a protocol member name, nothing to
    /// escape.
    pub(crate) fn add<V: Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &V,
    ) -> serde_json::Result<()> {
        debug_assert!(!name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
        if std::mem::replace(&mut self.any, true) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
        serde_json::to_writer(&mut *self.out, value)
    }
}

/// Encodes an error response; `id` is `None` (JSON `null`) when the request's id was unreadable.
pub fn encode_error(id: Option<&RequestId>, error: &McpError) -> Encoded {
    serde_json::to_vec(&ErrorEnvelope {
        jsonrpc: "2.0",
        id,
        error,
    })
    .expect("an error object always serializes")
}

#[derive(Serialize)]
struct RequestEnvelope<'a, T> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: T,
}

/// Encodes a request (server to client, session era).
pub fn encode_request<T: Serialize>(id: &RequestId, method: &str, params: T) -> Encoded {
    serde_json::to_vec(&RequestEnvelope {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
    .expect("request params always serialize")
}

/// Encodes a notification whose params may fail to serialize (user data): `None` then.
pub fn try_encode_notification<T: Serialize>(method: &str, params: T) -> Option<Encoded> {
    serde_json::to_vec(&NotificationEnvelope {
        jsonrpc: "2.0",
        method,
        params,
    })
    .ok()
}

/// Encodes a notification.
pub fn encode_notification<T: Serialize>(method: &str, params: T) -> Encoded {
    try_encode_notification(method, params).expect("notification params always serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What `encode_result_with` replaced: the body flattened into a wrapper with its own
    /// members after the body's.
    #[derive(Serialize)]
    struct Flattened<'a, T> {
        #[serde(flatten)]
        body: &'a T,
        #[serde(rename = "resultType")]
        result_type: &'static str,
        #[serde(rename = "ttlMs", skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        #[serde(rename = "_meta")]
        meta: Value,
    }

    #[test]
    fn a_result_with_members_is_what_flattening_wrote() {
        let id = RequestId::Number(7);
        let meta = serde_json::json!({"io.modelcontextprotocol/serverInfo": {"name": "s"}});
        let bodies = [
            serde_json::json!({"content": [{"type": "text", "text": "5\n\"q\""}], "isError": false}),
            serde_json::json!({}),
            serde_json::json!({"nested": {"a": [1, {}]}}),
        ];
        for body in &bodies {
            for ttl_ms in [None, Some(60_000)] {
                let spliced = encode_result_with(&id, body, |m| {
                    m.add("resultType", "complete")?;
                    if let Some(ttl) = ttl_ms {
                        m.add("ttlMs", &ttl)?;
                    }
                    m.add("_meta", &meta)
                });
                let flattened = encode_result(
                    &id,
                    Flattened {
                        body,
                        result_type: "complete",
                        ttl_ms,
                        meta: meta.clone(),
                    },
                );
                assert_eq!(
                    String::from_utf8(spliced).unwrap(),
                    String::from_utf8(flattened).unwrap()
                );
            }
        }
        // Nothing added: the body as it is.
        assert_eq!(
            encode_result_with(&id, &bodies[1], |_| Ok(())),
            encode_result(&id, &bodies[1])
        );
        // A body that is not an object cannot take members: an internal error, as flattening
        // it was.
        let refused: Value = serde_json::from_slice(&encode_result_with(&id, &[1, 2], |m| {
            m.add("resultType", "complete")
        }))
        .unwrap();
        assert_eq!(refused["id"], 7);
        assert_eq!(refused["error"]["code"], -32603);
    }

    fn code(text: &str) -> i32 {
        decode(text).unwrap_err().error.code.0
    }

    #[test]
    fn an_unreadable_string_id_is_named_as_such() {
        let e = decode(r#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#).unwrap_err();
        assert_eq!(e.error.code.0, -32600);
        assert!(
            e.error.message.contains("`id` is not a readable string"),
            "{}",
            e.error.message
        );
        assert!(!e.error.message.contains("column"), "{}", e.error.message);
        let e = decode(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#).unwrap_err();
        assert_eq!(
            e.error.message,
            "Invalid request: `id` must be a string or an integer"
        );
    }

    #[test]
    fn decodes_requests_notifications_and_responses() {
        let Incoming::Request(r) = decode(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.id, RequestId::Number(7));
        assert_eq!(r.method, "ping");
        let Incoming::Request(r) =
            decode(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":1}}"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.id, RequestId::String("a".into()));
        assert_eq!(r.params.unwrap().get(), r#"{"k":1}"#);
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Incoming::Notification(_)
        ));
        assert!(matches!(
            decode(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            Incoming::Response(ClientResponse { outcome: Ok(_), .. })
        ));
    }

    #[test]
    fn rejects_bad_envelopes_with_the_right_code() {
        assert_eq!(code("{not json"), -32700);
        assert_eq!(code(""), -32700);
        assert_eq!(code("42"), -32600);
        assert_eq!(code(r#"{"id":1,"method":"ping"}"#), -32600);
        assert_eq!(code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), -32600);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            -32600
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            -32600
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#),
            -32600
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#),
            -32600
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), -32600);
    }

    #[test]
    fn keeps_the_id_when_the_rest_is_bad() {
        let err = decode(r#"{"jsonrpc":"2.0","id":9,"method":"x","params":"s"}"#).unwrap_err();
        assert_eq!(err.id, Some(RequestId::Number(9)));
        assert!(!err.notification);
        let err = decode(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#)
            .unwrap_err();
        assert!(
            err.notification,
            "malformed notifications are recognised, to be dropped"
        );
    }

    #[test]
    fn encodes_ids_as_they_came() {
        let out = encode_result(&RequestId::String("x".into()), serde_json::json!({}));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x","result":{}}"#
        );
        let out = encode_error(None, &McpError::new(ErrorCode::PARSE_ERROR, "bad"));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
    }
}
