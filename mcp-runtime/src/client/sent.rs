//! A request as it is written: its params borrowed, never copied; the 2026-07-28 `_meta`
//! merged in as they are written, from members serialized once; and one member that may pass
//! as the JSON text it came as (a proxy's tool arguments, never built into a `Value`).

use std::cmp::Ordering;
use std::iter::Peekable;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// A member of a request's params kept as the JSON text it came as: its name, and the text.
pub(crate) type RawMember<'a> = Option<(&'static str, &'a RawValue)>;

/// A JSON-RPC request or notification as sent.
#[derive(serde::Serialize)]
pub(super) struct Message<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<i64>,
    pub(super) jsonrpc: &'static str,
    pub(super) method: &'a str,
    #[serde(skip_serializing_if = "SentParams::is_absent")]
    pub(super) params: SentParams<'a>,
}

/// The `_meta` members every 2026-07-28 request carries that do not change over a client's
/// life (the version, the client's info and its capabilities), each serialized once.
pub(crate) struct EraMeta {
    members: Vec<(&'static str, Box<RawValue>)>,
}

/// The `_meta` member that carries the level a 2026-07-28 server logs at.
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

impl EraMeta {
    pub(crate) fn new(client_info: &Value, capabilities: &Value) -> EraMeta {
        let version = Value::from(ProtocolVersion::V2026_07_28.as_str());
        // Sorted by key: they are merged with the request's own as they are written.
        let members = [
            ("io.modelcontextprotocol/clientCapabilities", capabilities),
            ("io.modelcontextprotocol/clientInfo", client_info),
            ("io.modelcontextprotocol/protocolVersion", &version),
        ];
        EraMeta {
            members: members
                .into_iter()
                .map(|(key, value)| {
                    let text =
                        serde_json::value::to_raw_value(value).expect("a Value always serializes");
                    (key, text)
                })
                .collect(),
        }
    }

    /// The members as a map, with the log level when one is set (for the few requests built
    /// as a `Value`: a listen stream's, the era probe's).
    pub(crate) fn to_map(&self, level: Option<&str>) -> Map<String, Value> {
        let mut meta: Map<String, Value> = self
            .members
            .iter()
            .map(|(key, text)| {
                let value = serde_json::from_str(text.get()).expect("written by serde_json");
                ((*key).to_owned(), value)
            })
            .collect();
        if let Some(level) = level {
            meta.insert(LOG_LEVEL.into(), level.into());
        }
        meta
    }
}

/// A request's params as sent: `params` (an object, or null for none); with `era`, the
/// era's `_meta` under the request's own (whose members win); with `raw`, one more member,
/// written as the text it came as.
pub(super) struct SentParams<'a> {
    pub(super) params: &'a Value,
    pub(super) raw: RawMember<'a>,
    /// The era's members and the log level the client asked for.
    pub(super) era: Option<(&'a EraMeta, Option<&'a str>)>,
}

impl SentParams<'_> {
    fn is_absent(&self) -> bool {
        self.params.is_null() && self.era.is_none() && self.raw.is_none()
    }
}

impl Serialize for SentParams<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.era.is_none() && self.raw.is_none() {
            return self.params.serialize(s);
        }
        let empty = Map::new();
        let own = self.params.as_object().unwrap_or(&empty);
        let meta = Meta {
            era: self.era,
            own: own.get("_meta"),
        };
        // What is added: `_meta`, and the raw member.
        let mut added: [Option<(&str, Either<&Meta<'_>, &RawValue>)>; 2] = [None, None];
        if self.era.is_some() || own.contains_key("_meta") {
            added[0] = Some(("_meta", Either::Left(&meta)));
        }
        if let Some((name, text)) = self.raw {
            added[1] = Some((name, Either::Right(text)));
        }
        added.sort_by(|a, b| a.as_ref().map(|a| a.0).cmp(&b.as_ref().map(|b| b.0)));
        let own = own.iter().map(|(key, value)| (key.as_str(), value));
        let own =
            own.filter(|(key, _)| *key != "_meta" && self.raw.is_none_or(|(name, _)| name != *key));
        let mut out = s.serialize_map(None)?;
        for (key, value) in Merge::new(own, added.into_iter().flatten()) {
            out.serialize_entry(key, &value)?;
        }
        out.end()
    }
}

/// The `_meta` sent: the era's members under the request's own `_meta` (whose members
/// win); without the era, the request's own as it is.
struct Meta<'a> {
    era: Option<(&'a EraMeta, Option<&'a str>)>,
    own: Option<&'a Value>,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some((era, level)) = self.era else {
            return self.own.unwrap_or(&Value::Null).serialize(s);
        };
        let members = era.members.iter().map(|(key, text)| (*key, &**text));
        let era = Merge::new(members, level.map(|level| (LOG_LEVEL, level)));
        let own = self.own.and_then(Value::as_object).into_iter().flatten();
        let mut out = s.serialize_map(None)?;
        for (key, value) in Merge::new(era, own.map(|(key, value)| (key.as_str(), value))) {
            out.serialize_entry(key, &value)?;
        }
        out.end()
    }
}

/// Two runs of members sorted by key as one sorted run (the order a `Map` keeps, so that a
/// request reads the same whichever way it was made); a key in both is the right one's.
struct Merge<L: Iterator, R: Iterator> {
    left: Peekable<L>,
    right: Peekable<R>,
}

impl<L: Iterator, R: Iterator> Merge<L, R> {
    fn new(left: L, right: impl IntoIterator<IntoIter = R>) -> Merge<L, R> {
        Merge {
            left: left.peekable(),
            right: right.into_iter().peekable(),
        }
    }
}

impl<'k, A, B, L, R> Iterator for Merge<L, R>
where
    L: Iterator<Item = (&'k str, A)>,
    R: Iterator<Item = (&'k str, B)>,
{
    type Item = (&'k str, Either<A, B>);

    fn next(&mut self) -> Option<Self::Item> {
        let order = match (self.left.peek(), self.right.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((l, _)), Some((r, _))) => l.cmp(r),
        };
        if order == Ordering::Less {
            return self.left.next().map(|(key, a)| (key, Either::Left(a)));
        }
        if order == Ordering::Equal {
            self.left.next();
        }
        self.right.next().map(|(key, b)| (key, Either::Right(b)))
    }
}

/// A member's value from one run or the other.
enum Either<A, B> {
    Left(A),
    Right(B),
}

impl<A: Serialize, B: Serialize> Serialize for Either<A, B> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Either::Left(a) => a.serialize(s),
            Either::Right(b) => b.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(
        params: &Value,
        raw: RawMember<'_>,
        era: Option<(&EraMeta, Option<&str>)>,
    ) -> String {
        let msg = Message {
            id: Some(7),
            jsonrpc: "2.0",
            method: "tools/call",
            params: SentParams { params, raw, era },
        };
        serde_json::to_string(&msg).unwrap()
    }

    /// What the message is as a `json!` object: the era's `_meta` under the params' own, the
    /// raw member in place of a member of its name.
    fn built(params: &Value, raw: RawMember<'_>, era: Option<(&EraMeta, Option<&str>)>) -> String {
        let mut expected = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"});
        let mut sent = params.clone();
        if let Some((era, level)) = era {
            let mut meta = era.to_map(level);
            if let Some(Value::Object(own)) = sent.get("_meta") {
                meta.extend(own.clone());
            }
            if sent.is_null() {
                sent = json!({});
            }
            sent["_meta"] = Value::Object(meta);
        }
        if let Some((name, text)) = raw {
            if sent.is_null() {
                sent = json!({});
            }
            sent[name] = serde_json::from_str(text.get()).unwrap();
        }
        if !sent.is_null() {
            expected["params"] = sent;
        }
        expected.to_string()
    }

    /// Written from borrowed params, the era's `_meta` and a raw member merged in as they are
    /// written, a message is the text the `json!` object it replaced gives: the same members
    /// in the same (sorted) order, `_meta` where it sorts, the params' own `_meta` members
    /// winning over the era's.
    #[test]
    fn a_message_is_written_as_the_object_it_replaced() {
        let era = EraMeta::new(&json!({"name": "c", "version": "1"}), &json!({"roots": {}}));
        let arguments = RawValue::from_string(r#"{"a":2,"b":3}"#.into()).unwrap();
        let cases = [
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            json!({"_meta": {"progressToken": "p-1"}, "name": "add", "Z": 1, "_": 2, "a": [1]}),
            json!({"_meta": {
                "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
                LOG_LEVEL: "error",
                "zz": 1,
            }, "name": "add"}),
            json!({"_meta": 5, "name": "add"}),
            json!({}),
            Value::Null,
        ];
        for params in &cases {
            for raw in [None, Some(("arguments", &*arguments))] {
                for era in [None, Some((&era, None)), Some((&era, Some("info")))] {
                    if params.get("_meta").is_some_and(|m| !m.is_object()) && era.is_some() {
                        continue; // below
                    }
                    assert_eq!(
                        written(params, raw, era),
                        built(params, raw, era),
                        "{params} with {raw:?}, {}",
                        era.is_some()
                    );
                }
            }
        }
        // A `_meta` that is not an object gives way to the era's.
        let params = json!({"_meta": 5, "name": "add"});
        assert_eq!(
            written(&params, None, Some((&era, None))),
            built(&json!({"name": "add"}), None, Some((&era, None)))
        );
    }

    #[test]
    fn a_raw_member_is_written_as_the_text_it_came_as() {
        let arguments = RawValue::from_string(r#"{ "b": 2,"a" : 1 }"#.into()).unwrap();
        let params = json!({"name": "add", "arguments": {"x": 1}, "task": {"ttl": 5}});
        assert_eq!(
            written(&params, Some(("arguments", &arguments)), None),
            r#"{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{ "b": 2,"a" : 1 },"name":"add","task":{"ttl":5}}}"#
        );
    }

    #[test]
    fn the_era_meta_is_the_version_the_client_and_its_capabilities() {
        let era = EraMeta::new(&json!({"name": "c", "version": "1"}), &json!({"roots": {}}));
        assert_eq!(
            Value::Object(era.to_map(Some("debug"))),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
                LOG_LEVEL: "debug",
            })
        );
    }
}
