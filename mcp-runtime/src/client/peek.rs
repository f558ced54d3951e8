//! A message from the server, read once and only as far as routing it needs. An answer's
//! result is kept as its members, each the JSON it came as: whoever wants a value builds one
//! from them, the era's rules read the one member they look at (`resultType`), and a proxy
//! passes them on without ever building them.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::error::ClientError;

/// A result's members, in key order, each the JSON it came as.
pub(crate) type Members = BTreeMap<String, Box<RawValue>>;

/// A request's result as the server sent it.
#[derive(Debug)]
pub(crate) enum Received {
    /// An object (every MCP result is one): its members.
    Members(Members),
    /// Anything else, as it came.
    Other(Box<RawValue>),
}

impl Received {
    /// The result built into a value.
    pub(crate) fn to_value(&self) -> Result<Value, ClientError> {
        let unreadable = |e: serde_json::Error| {
            ClientError::protocol(format!("a result that could not be read: {e}"))
        };
        match self {
            Received::Members(members) => members
                .iter()
                .map(|(k, v)| {
                    Ok((
                        k.clone(),
                        serde_json::from_str(v.get()).map_err(unreadable)?,
                    ))
                })
                .collect::<Result<serde_json::Map<_, _>, _>>()
                .map(Value::Object),
            Received::Other(raw) => serde_json::from_str(raw.get()).map_err(unreadable),
        }
    }

    /// A result built here (a test, an empty answer a link stands in for).
    pub(crate) fn of(value: &Value) -> Received {
        match value {
            Value::Object(map) => {
                Received::Members(map.iter().map(|(k, v)| (k.clone(), to_raw(v))).collect())
            }
            other => Received::Other(to_raw(other)),
        }
    }

    /// Its `resultType`, when it has one that is a string.
    pub(crate) fn result_type(&self) -> Option<String> {
        let Received::Members(members) = self else {
            return None;
        };
        serde_json::from_str(members.get("resultType")?.get()).ok()
    }
}

impl<'de> Deserialize<'de> for Received {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ReceivedVisitor)
    }
}

/// An object's members are kept as they came; anything else is read as a value and written
/// back (results that are not objects are not MCP's, and rare).
struct ReceivedVisitor;

impl ReceivedVisitor {
    fn other<E: de::Error>(value: Value) -> Result<Received, E> {
        serde_json::value::to_raw_value(&value)
            .map(Received::Other)
            .map_err(E::custom)
    }
}

impl<'de> Visitor<'de> for ReceivedVisitor {
    type Value = Received;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Received, A::Error> {
        let mut members = Members::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value::<Box<RawValue>>()?;
            members.insert(key, value);
        }
        Ok(Received::Members(members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Received, A::Error> {
        Self::other(Value::deserialize(SeqAccessDeserializer::new(seq))?)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Received, E> {
        Self::other(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Received, E> {
        Self::other(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Received, E> {
        Self::other(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Received, E> {
        Self::other(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Received, E> {
        Self::other(Value::from(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Received, E> {
        Self::other(Value::Null)
    }
}

/// `value` as JSON text.
pub(crate) fn to_raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("a Value serializes")
}

/// One message from the server, read.
#[derive(Debug)]
pub(crate) enum Read {
    /// An answer (no `method`, an `id`): the id as sent, its result or its error.
    Answer {
        id: Value,
        result: Option<Received>,
        error: Option<Box<RawValue>>,
    },
    /// Anything else (a request, a notification, a message with no `id`): what routes it (its
    /// `id`, `method` and `params`) built into a value; a batch, built whole.
    Other(Value),
}

impl Read {
    /// Whether it is, or holds (a batch), the answer to request `id`.
    pub(crate) fn answers(&self, id: i64) -> bool {
        fn answers(msg: &Value, id: i64) -> bool {
            match msg {
                Value::Array(items) => items.iter().any(|m| answers(m, id)),
                m => m.get("method").is_none() && m.get("id").and_then(Value::as_i64) == Some(id),
            }
        }
        match self {
            Read::Answer { id: named, .. } => named.as_i64() == Some(id),
            Read::Other(msg) => answers(msg, id),
        }
    }
}

/// The members of one message that say what it is, its result read as `R`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "R: Deserialize<'de>"))]
struct Peek<'a, R> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    result: Option<R>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

impl<R> Peek<'_, R> {
    /// The message read: an answer (an `id`, and no `method` that is a string: the router
    /// takes a message whose `method` is not one as an answer too), its result made a
    /// [`Received`] by `received`; else a request or notification, as the members that route
    /// it (the router reads no other of those), built.
    fn read(self, received: impl FnOnce(R) -> Received) -> Result<Read, serde_json::Error> {
        let named = self
            .method
            .is_some_and(|m| m.get().trim_start().starts_with('"'));
        if !named && let Some(id) = self.id {
            return Ok(Read::Answer {
                id: serde_json::from_str(id.get())?,
                result: self.result.map(received),
                error: self.error.map(ToOwned::to_owned),
            });
        }
        let mut msg = serde_json::Map::new();
        for (key, member) in [
            ("id", self.id),
            ("method", self.method),
            ("params", self.params),
        ] {
            if let Some(member) = member {
                msg.insert(key.to_owned(), serde_json::from_str(member.get())?);
            }
        }
        Ok(Read::Other(Value::Object(msg)))
    }
}

/// A member that is there is `Some`, even when it is `null` (as `Value::get` sees it: a
/// `"result": null` is an answer, an `"id": null` an id that names nothing).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Reads one message (or batch) the server sent, once: an answer without building its result,
/// a request or notification as far as routing it needs, a batch whole. `Err` for text that is
/// not JSON.
pub(crate) fn read(text: &str) -> Result<Read, serde_json::Error> {
    if text.trim_start().starts_with('{') {
        match serde_json::from_str::<Peek<'_, Received>>(text) {
            Ok(p) => return p.read(|r| r),
            // A result that is not an object and cannot be built (nested past serde_json's
            // limit) is an answer all the same: kept as it came, it fails when built.
            Err(_) => {
                if let Ok(p) = serde_json::from_str::<Peek<'_, &RawValue>>(text) {
                    return p.read(|r| Received::Other(r.to_owned()));
                }
            }
        }
    }
    serde_json::from_str(text).map(Read::Other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(text: &str) -> (Value, Option<Value>, Option<String>) {
        match read(text).unwrap() {
            Read::Answer { id, result, error } => (
                id,
                result.map(|r| r.to_value().unwrap()),
                error.map(|e| e.get().to_owned()),
            ),
            Read::Other(v) => panic!("not an answer: {v}"),
        }
    }

    #[test]
    fn an_answer_is_read_without_building_its_result() {
        let text = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"5"}],"resultType":"complete"}}"#;
        let Read::Answer {
            result: Some(Received::Members(m)),
            ..
        } = read(text).unwrap()
        else {
            panic!("members expected")
        };
        assert_eq!(m["content"].get(), r#"[{"type":"text","text":"5"}]"#);
        assert_eq!(
            Received::Members(m).result_type().as_deref(),
            Some("complete")
        );
    }

    #[test]
    fn members_that_are_null_are_there() {
        assert_eq!(
            answer(r#"{"id":null,"result":null}"#),
            (Value::Null, Some(Value::Null), None)
        );
        assert_eq!(
            answer(r#"{"id":"7","error":{"code":1}}"#),
            (json!("7"), None, Some(r#"{"code":1}"#.to_owned()))
        );
    }

    #[test]
    fn a_result_too_deep_to_build_is_an_answer_that_fails_when_built() {
        for result in [
            "[".repeat(500) + &"]".repeat(500),
            format!("{{\"x\":{}{}}}", "[".repeat(500), "]".repeat(500)),
        ] {
            let text = format!(r#"{{"id":1,"result":{result}}}"#);
            let Ok(Read::Answer {
                result: Some(r), ..
            }) = read(&text)
            else {
                panic!("not read as an answer: {}", &text[..40])
            };
            let e = r.to_value().unwrap_err().to_string();
            assert!(e.contains("recursion limit"), "{e}");
        }
    }

    #[test]
    fn results_that_are_not_objects_come_back_as_they_were() {
        for r in [
            "5",
            "-3",
            "1.5",
            "\"x\"",
            "true",
            "[1,[2,{\"a\":3}]]",
            "null",
        ] {
            let (_, got, _) = answer(&format!(r#"{{"id":1,"result":{r}}}"#));
            assert_eq!(got, Some(serde_json::from_str::<Value>(r).unwrap()), "{r}");
        }
    }

    #[test]
    fn requests_notifications_batches_and_junk_are_not_answers() {
        for text in [
            r#"{"id":1,"method":"ping"}"#,
            r#"{"method":"notifications/progress","params":{}}"#,
            r#"[{"id":1,"result":{}}]"#,
            r#"{"result":{}}"#,
            "3",
        ] {
            assert!(matches!(read(text), Ok(Read::Other(_))), "{text}");
        }
        assert!(read("{not json").is_err());
        assert!(read(r#"{"id":1,"result":{"a":}}"#).is_err());
    }

    /// Issue #27's `client_router` target: `"method": 5` with an id and a result is an answer
    /// (the router names no method that is not a string); read as a request, its result was
    /// lost and the request it answered failed.
    #[test]
    fn a_method_that_is_not_a_string_makes_no_request() {
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":2,"method":5,"result":null}"#),
            (json!(2), Some(Value::Null), None)
        );
    }

    #[test]
    fn a_request_or_notification_is_read_as_what_routes_it() {
        let request = r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":[1]},"extra":1}"#;
        let Ok(Read::Other(v)) = read(request) else {
            panic!("a request is not an answer")
        };
        assert_eq!(
            v,
            json!({"id": "a", "method": "ping", "params": {"x": [1]}})
        );
        let Ok(Read::Other(v)) = read(r#"{"method":"notifications/progress"}"#) else {
            panic!("a notification is not an answer")
        };
        assert_eq!(v, json!({"method": "notifications/progress"}));
        assert!(read(r#"{"method":"x","params":{"a":}}"#).is_err());
    }

    #[test]
    fn a_message_answers_the_request_it_names() {
        assert!(read(r#"{"id":7,"result":{}}"#).unwrap().answers(7));
        assert!(!read(r#"{"id":8,"result":{}}"#).unwrap().answers(7));
        assert!(!read(r#"{"id":7,"method":"ping"}"#).unwrap().answers(7));
        assert!(
            read(r#"[{"method":"x"},{"id":7,"error":{}}]"#)
                .unwrap()
                .answers(7)
        );
    }
}
