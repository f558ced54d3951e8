//! What the fuzz targets share: the JSON-RPC output oracle, a strict reference reader of
//! object members, a runtime to finish requests on, and the switch for known findings.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

thread_local! {
    static RT: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

/// Runs a future to completion on one current-thread runtime per fuzzing thread (tool
/// tasks and timers included).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    RT.with(|rt| {
        let mut rt = rt.borrow_mut();
        let rt = rt.get_or_insert_with(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime")
        });
        rt.block_on(f)
    })
}

/// The members of a JSON-RPC 2.0 message.
pub const ENVELOPE_MEMBERS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// The members of a JSON object in order, duplicates kept: the strict reference the envelope
/// decoder is compared with (serde_json's `Value` keeps only the last duplicate).
#[derive(Debug, Default)]
pub struct Members(pub Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Members {
    /// Reads `text` as one JSON object, or `None`.
    pub fn of(text: &str) -> Option<Members> {
        serde_json::from_str(text).ok()
    }

    /// The values of every member named exactly `key`.
    pub fn all(&self, key: &str) -> Vec<&RawValue> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| &**v)
            .collect()
    }

    /// The value of the only member named `key` (`None` when absent or duplicated).
    pub fn one(&self, key: &str) -> Option<&RawValue> {
        match self.all(key).as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// Like [`all`](Self::all), leaving out `null` values (the decoder reads an optional
    /// member that is `null` as absent, as serde does).
    pub fn present(&self, key: &str) -> Vec<&RawValue> {
        self.all(key)
            .into_iter()
            .filter(|r| r.get() != "null")
            .collect()
    }

    /// Whether a member of the JSON-RPC envelope appears twice (unknown members are ignored
    /// by the decoder, duplicated or not).
    pub fn has_duplicates(&self) -> bool {
        let mut seen = HashSet::new();
        self.0
            .iter()
            .filter(|(k, _)| ENVELOPE_MEMBERS.contains(&k.as_str()))
            .any(|(k, _)| !seen.insert(k.as_str()))
    }

    /// The value of `key` parsed, when it is there once.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.one(key)
            .and_then(|r| serde_json::from_str(r.get()).ok())
    }
}

/// What a strict reader makes of one message, to compare with what the server did.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// A well-formed request: at most one response, under this id.
    Request(Value),
    /// A notification (a `method`, no `id`): never a response.
    Notification,
    /// Anything else: at most one response, whose id (if not null) is one the message holds.
    Other(Vec<Value>),
}

/// Classifies one message (not a batch) the way JSON-RPC 2.0 reads it.
pub fn expect_of(text: &str) -> Expect {
    let Some(m) = Members::of(text) else {
        return Expect::Other(Vec::new());
    };
    let ids: Vec<Value> = m
        .all("id")
        .iter()
        .filter_map(|r| serde_json::from_str(r.get()).ok())
        .collect();
    let methods = m.all("method");
    let has_method = methods.iter().any(|r| r.get().starts_with('"'));
    // A string JSON's grammar accepts but Unicode does not (a lone surrogate escape such as
    // `"\ud800"`) cannot be read, so the server cannot tell a notification from a request:
    // it answers a parse error under id null, as JSON-RPC says.
    if methods
        .iter()
        .any(|r| serde_json::from_str::<String>(r.get()).is_err() && r.get().starts_with('"'))
    {
        return Expect::Other(ids);
    }
    // With a duplicated member the decoder cannot tell what the message is (serde refuses
    // it whole), so it answers -32600 under id null, as JSON-RPC says for an invalid request.
    if m.all("id").is_empty()
        && has_method
        && m.all("result").is_empty()
        && m.all("error").is_empty()
        && !m.has_duplicates()
    {
        return Expect::Notification;
    }
    let well_formed = !m.has_duplicates()
        && m.value("jsonrpc") == Some(Value::from("2.0"))
        && m.value("method").is_some_and(|v| v.is_string())
        && m.value("id")
            .is_some_and(|id| id.is_string() || id.is_i64() || id.is_u64())
        && m.one("params")
            .is_none_or(|p| p.get().starts_with(['{', '[']))
        && m.all("result").is_empty()
        && m.all("error").is_empty();
    if well_formed {
        Expect::Request(m.value("id").expect("checked"))
    } else {
        Expect::Other(ids)
    }
}

/// Asserts that `bytes` is one JSON-RPC 2.0 response object and returns it.
pub fn check_response(bytes: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "response is not JSON ({e}): {:?}",
            String::from_utf8_lossy(bytes)
        )
    });
    check_response_value(&v);
    v
}

/// Asserts that `v` is a JSON-RPC 2.0 response object.
pub fn check_response_value(v: &Value) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("response is not an object: {v}"));
    assert_eq!(
        obj.get("jsonrpc"),
        Some(&Value::from("2.0")),
        "jsonrpc in {v}"
    );
    let id = obj
        .get("id")
        .unwrap_or_else(|| panic!("response without id: {v}"));
    assert!(
        id.is_null() || id.is_string() || id.is_i64() || id.is_u64(),
        "bad id in {v}"
    );
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => {}
        (None, Some(e)) => {
            assert!(e["code"].is_i64(), "error without an integer code: {v}");
            assert!(e["message"].is_string(), "error without a message: {v}");
        }
        _ => panic!("response needs exactly one of result and error: {v}"),
    }
    for key in obj.keys() {
        assert!(
            matches!(key.as_str(), "jsonrpc" | "id" | "result" | "error"),
            "unexpected member {key:?} in {v}"
        );
    }
}

/// Asserts that a message the server sent on its own is a JSON-RPC notification or request.
pub fn check_outbound(bytes: &[u8]) {
    let v: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "outbound message is not JSON ({e}): {:?}",
            String::from_utf8_lossy(bytes)
        )
    });
    assert_eq!(v["jsonrpc"], "2.0", "jsonrpc in {v}");
    assert!(
        v["method"].is_string(),
        "outbound message without method: {v}"
    );
    if let Some(p) = v.get("params") {
        assert!(p.is_object() || p.is_array(), "params in {v}");
    }
}

/// Asserts that a response fits what was sent.
pub fn check_fits(expect: &Expect, response: &Value, text: &str) {
    let id = &response["id"];
    match expect {
        Expect::Notification => panic!("a notification was answered: {text:?} -> {response}"),
        Expect::Request(want) => assert_eq!(
            id, want,
            "answered under another id: {text:?} -> {response}"
        ),
        Expect::Other(ids) => assert!(
            id.is_null() || ids.contains(id),
            "answered under an id the message does not hold: {text:?} -> {response}"
        ),
    }
}
