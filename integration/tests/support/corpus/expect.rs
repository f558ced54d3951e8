//! What a case must produce, and the check of what the server did.

use std::fmt;

use serde_json::Value;

/// What a case must produce.
#[derive(Debug)]
pub struct Expect {
    /// HTTP statuses allowed (HTTP ways only; any when empty).
    status: Vec<u64>,
    kind: Kind,
    /// The response's `id`, when the case pins it.
    id: Option<Value>,
    /// An upper bound on the response's size.
    max_bytes: Option<usize>,
}

#[derive(Debug)]
enum Kind {
    /// No JSON-RPC response at all (on HTTP: an empty body).
    None,
    /// A JSON-RPC error with one of these codes, whose `data` contains this (if given).
    Error(Vec<i64>, Option<Value>),
    /// A result (not a tool error) that contains this (every member of an object,
    /// recursively).
    Result(Value),
    /// A tool result with `isError: true`.
    ToolError,
    /// On HTTP, only the status is checked (the body may be anything or nothing).
    StatusOnly,
}

fn one_or_many(v: &Value) -> Result<Vec<u64>, String> {
    match v {
        Value::Number(_) => v.as_u64().map(|n| vec![n]).ok_or("not a count".into()),
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_u64().ok_or("not a count".into()))
            .collect(),
        _ => Err(format!("expected a number or a list, got {v}")),
    }
}

fn codes(v: &Value) -> Result<Vec<i64>, String> {
    match v {
        Value::Number(_) => v.as_i64().map(|n| vec![n]).ok_or("not a code".into()),
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_i64().ok_or("not a code".into()))
            .collect(),
        _ => Err(format!("expected a code or a list of codes, got {v}")),
    }
}

impl Expect {
    /// Whether the case is answered (on stdio, an answer may come after the probe's).
    pub fn wants_response(&self) -> bool {
        !matches!(self.kind, Kind::None | Kind::StatusOnly)
    }

    pub(crate) fn parse(v: &Value) -> Result<Expect, String> {
        let map = v.as_object().ok_or("an expectation is an object")?;
        for key in map.keys() {
            if ![
                "status",
                "error",
                "data",
                "result",
                "isError",
                "none",
                "id",
                "max_bytes",
            ]
            .contains(&key.as_str())
            {
                return Err(format!("unknown expectation member {key:?}"));
            }
        }
        let status = map
            .get("status")
            .map(one_or_many)
            .transpose()?
            .unwrap_or_default();
        let kinds = ["error", "result", "isError", "none"]
            .iter()
            .filter(|k| map.contains_key(**k))
            .count();
        if kinds > 1 {
            return Err("at most one of error/result/isError/none".into());
        }
        let kind = if let Some(c) = map.get("error") {
            Kind::Error(codes(c)?, map.get("data").cloned())
        } else if let Some(r) = map.get("result") {
            Kind::Result(r.clone())
        } else if map.contains_key("isError") {
            Kind::ToolError
        } else if map.contains_key("none") {
            Kind::None
        } else if !status.is_empty() {
            Kind::StatusOnly
        } else {
            return Err("expects nothing".into());
        };
        Ok(Expect {
            status,
            kind,
            id: map.get("id").cloned(),
            max_bytes: map
                .get("max_bytes")
                .map(|m| m.as_u64().ok_or("max_bytes is a count"))
                .transpose()?
                .map(|n| n as usize),
        })
    }

    /// Checks what the server did: its HTTP status (on HTTP) and the JSON-RPC messages it
    /// answered the case with (before the probe's answer).
    pub fn check(
        &self,
        http: bool,
        status: Option<u16>,
        messages: &[Vec<u8>],
    ) -> Result<(), String> {
        if http && !self.status.is_empty() {
            let got = status.unwrap_or(0) as u64;
            if !self.status.contains(&got) {
                return Err(format!("HTTP status {got}, expected {:?}", self.status));
            }
        }
        if matches!(self.kind, Kind::StatusOnly) {
            if !http {
                return Err("a status-only expectation on stdio".into());
            }
            return Ok(());
        }
        if let Kind::None = self.kind {
            return match messages {
                [] => Ok(()),
                _ => Err(format!("expected no response, got {}", show(messages))),
            };
        }
        let [message] = messages else {
            return Err(format!(
                "expected one response, got {}: {}",
                messages.len(),
                show(messages)
            ));
        };
        if let Some(max) = self.max_bytes
            && message.len() > max
        {
            return Err(format!(
                "response of {} bytes, at most {max} expected",
                message.len()
            ));
        }
        let v: Value = serde_json::from_slice(message)
            .map_err(|e| format!("response is not JSON ({e}): {}", show(messages)))?;
        if v["jsonrpc"] != "2.0" {
            return Err(format!("not a JSON-RPC response: {v}"));
        }
        if let Some(id) = &self.id
            && &v["id"] != id
        {
            return Err(format!("response id {}, expected {id}", v["id"]));
        }
        match &self.kind {
            Kind::Error(codes, data) => {
                let code = v["error"]["code"]
                    .as_i64()
                    .ok_or_else(|| format!("expected error {codes:?}, got {}", brief(&v)))?;
                if !codes.contains(&code) {
                    return Err(format!("error {code}, expected {codes:?}: {}", brief(&v)));
                }
                if let Some(data) = data
                    && !contains(&v["error"]["data"], data)
                {
                    return Err(format!("error data lacks {data}: {}", brief(&v)));
                }
            }
            Kind::Result(want) => {
                if v.get("result").is_none() {
                    return Err(format!("expected a result, got {}", brief(&v)));
                }
                // A tool error is its own outcome (`isError`), not the success asked for.
                if v["result"]["isError"] == true {
                    return Err(format!(
                        "expected a result, got a tool error: {}",
                        brief(&v)
                    ));
                }
                if !contains(&v["result"], want) {
                    return Err(format!("result lacks {want}: {}", brief(&v)));
                }
            }
            Kind::ToolError => {
                if v["result"]["isError"] != true {
                    return Err(format!(
                        "expected a tool result with isError, got {}",
                        brief(&v)
                    ));
                }
            }
            Kind::None | Kind::StatusOnly => unreachable!(),
        }
        Ok(())
    }
}

/// Whether `have` has everything `want` has (objects member by member, arrays element by
/// element in any order, the rest equal).
fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv))),
        // Every element wanted is contained in some element the server sent.
        (Value::Array(h), Value::Array(w)) => {
            w.iter().all(|wv| h.iter().any(|hv| contains(hv, wv)))
        }
        _ => have == want,
    }
}

pub(crate) fn brief(v: &Value) -> String {
    let text = v.to_string();
    shorten(&text)
}

pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 400;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

pub(crate) fn show(messages: &[Vec<u8>]) -> String {
    messages
        .iter()
        .map(|m| shorten(&String::from_utf8_lossy(m)))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// What a case did this way: the status (HTTP) and the messages that answered it.
pub struct Outcome {
    pub status: Option<u16>,
    pub messages: Vec<Vec<u8>>,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(status) = self.status {
            write!(f, "HTTP {status} ")?;
        }
        match self.messages.as_slice() {
            [] => write!(f, "(no message)"),
            m => write!(f, "{}", show(m)),
        }
    }
}
