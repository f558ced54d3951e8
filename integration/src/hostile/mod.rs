//! The hostile peer of the client corpus (`tests/hostile.rs`, cases in `tests/hostile/`): one
//! scriptable MCP server that answers like a well-behaved one, except for the one request its
//! [`Script`] is about, which gets the script's steps instead (a huge or endless body, bytes one
//! at a time, a wrong id, invalid UTF-8, a redirect, an exit halfway through a line, …).
//!
//! It plays the same script on three transports: stdio ([`stdio::serve`], run by the
//! `hostile_peer` binary as a child of the client), Streamable HTTP and HTTP+SSE
//! ([`http::HttpPeer`], on a loopback listener in the test's process). The HTTP side writes raw
//! bytes on plain sockets, so it can send what a well-behaved HTTP server never would. It is
//! written with std and blocking threads only: a peer stuck writing to a client that stopped
//! reading blocks its own thread, never the client's runtime.
//!
//! The script format is documented in `tests/hostile/README.md`.

pub mod http;
mod play;
pub mod stdio;

use std::time::Duration;

use serde_json::{Map, Value, json};

/// What the peer does: which request it answers badly, and how.
#[derive(Clone, Debug)]
pub struct Script {
    /// The method of the request the steps answer (`"GET"`: the HTTP GET stream); `None`: a
    /// well-behaved peer.
    on: Option<String>,
    /// Which occurrence of that request (1: the first; 0: every one).
    nth: usize,
    steps: Vec<Step>,
    /// Streamable HTTP: how the body carries the steps' frames.
    body: Body,
    /// HTTP: the response head before the steps.
    head: Head,
    /// HTTP+SSE: the steps answer the `POST` itself (default: on the SSE stream).
    to_post: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    /// JSON when the steps make one frame and write nothing outside it, SSE otherwise.
    Auto,
    Json,
    Sse,
    /// The bytes as they are (any content type the head names).
    Plain,
}

#[derive(Clone, Debug)]
enum Head {
    /// `200` with the body's content type, chunked.
    Default,
    /// No head: the steps write the whole response, status line included.
    None,
    Custom {
        status: u16,
        headers: Vec<(String, Option<String>)>,
        /// No `Content-Length` or chunking: the body ends when the connection closes.
        until_close: bool,
    },
}

/// One thing the peer does; `times` repeats it.
#[derive(Clone, Debug)]
struct Step {
    what: What,
    times: u64,
}

#[derive(Clone, Debug)]
enum What {
    /// One whole message: a JSON template.
    Msg(Value),
    /// One whole message of these bytes (which need not be JSON, or UTF-8).
    Line(Vec<Part>),
    /// The well-behaved answer to this request.
    Healthy,
    /// Starts a message and writes these bytes into it.
    Open(Vec<Part>),
    /// Ends the message an `open` started.
    End,
    /// stdio: bytes to stderr (HTTP: nothing).
    Stderr(Vec<Part>),
    /// Bytes as they are, outside any message framing (but inside the HTTP body).
    Raw(Vec<Part>),
    /// [`Raw`](What::Raw), again and again until the client stops reading (or 1 GiB).
    Endless(Vec<Part>),
    /// A whole message, framing included, one byte at a time.
    Trickle(Vec<Part>, Duration),
    /// [`Raw`](What::Raw), one byte at a time.
    TrickleRaw(Vec<Part>, Duration),
    Sleep(Duration),
    /// Nothing more for this request; the connection stays open.
    Hang,
    /// stdio: exit; HTTP: close the connection (or, on HTTP+SSE, the stream).
    Close,
    /// Stop reading what the client sends (stdio: stdin; HTTP: the request body).
    Stall,
}

/// Bytes, some of them generated.
#[derive(Clone, Debug)]
enum Part {
    /// Text; `$id`, `$self`, `$other` and `$progressToken` are replaced.
    Text(String),
    Bytes(Vec<u8>),
    /// A JSON template, filled as a `msg` is, as text.
    Json(Value),
    Repeat(Vec<Part>, u64),
}

/// What the steps of one request may refer to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ctx {
    /// The request (its `id`, `params`).
    pub(crate) request: Value,
    /// This peer's origin (`http://127.0.0.1:port`), on HTTP.
    pub(crate) own: String,
    /// Another origin (a second peer), on HTTP.
    pub(crate) other: String,
}

impl Ctx {
    fn id(&self) -> Value {
        self.request.get("id").cloned().unwrap_or(Value::Null)
    }

    fn fill_text(&self, text: &str) -> String {
        let token = self
            .request
            .pointer("/params/_meta/progressToken")
            .cloned()
            .unwrap_or(Value::Null);
        let id = self.id();
        // `$id%N`: the id modulo N (cursors that cycle).
        let mut text = text.to_owned();
        while let Some(at) = text.find("$id%") {
            let digits: String = text[at + 4..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let n: i64 = digits.parse().unwrap_or(1).max(1);
            let value = id.as_i64().unwrap_or(0).rem_euclid(n);
            text.replace_range(at..at + 4 + digits.len(), &value.to_string());
        }
        text.replace("$progressToken", &token.to_string())
            .replace("$id", &id.to_string())
            .replace("$self", &self.own)
            .replace("$other", &self.other)
    }

    /// A message template with its placeholders filled: the strings `"$id"` and
    /// `"$progressToken"` become the request's values, `"$id+N"` its id plus N, and `$self` and
    /// `$other` inside strings the origins.
    fn fill(&self, template: &Value) -> Value {
        match template {
            Value::String(s) if s == "$id" => self.id(),
            Value::String(s) if s == "$progressToken" => self
                .request
                .pointer("/params/_meta/progressToken")
                .cloned()
                .unwrap_or(Value::Null),
            Value::String(s) if s.starts_with("$id+") => {
                let n: i64 = s["$id+".len()..].parse().unwrap_or(0);
                json!(self.id().as_i64().unwrap_or(0) + n)
            }
            Value::String(s) => {
                Value::String(s.replace("$self", &self.own).replace("$other", &self.other))
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.fill(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.fill(v)))
                    .collect::<Map<_, _>>(),
            ),
            other => other.clone(),
        }
    }
}

impl Script {
    /// A peer that answers everything well.
    pub fn healthy() -> Script {
        Script {
            on: None,
            nth: 1,
            steps: Vec::new(),
            body: Body::Auto,
            head: Head::Default,
            to_post: false,
        }
    }

    /// Reads a script: `{"on": method, "nth": n, "steps": [...], "as": "json"|"sse"|"plain",
    /// "head": {...}|"none", "to": "stream"|"post"}` (other keys are ignored).
    pub fn from_json(v: &Value) -> Result<Script, String> {
        let mut script = Script::healthy();
        script.on = v.get("on").and_then(Value::as_str).map(str::to_owned);
        script.nth = match v.get("nth") {
            Some(Value::String(s)) if s == "every" => 0,
            Some(n) => n
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or("`nth` is a count from 1, or \"every\"")? as usize,
            None => 1,
        };
        if let Some(steps) = v.get("steps") {
            let steps = steps.as_array().ok_or("`steps` is not a list")?;
            script.steps = steps.iter().map(step).collect::<Result<_, _>>()?;
        }
        script.body = match v.get("as").and_then(Value::as_str) {
            None => Body::Auto,
            Some("json") => Body::Json,
            Some("sse") => Body::Sse,
            Some("plain") => Body::Plain,
            Some(other) => return Err(format!("unknown `as`: {other}")),
        };
        script.head = match v.get("head") {
            None => Head::Default,
            Some(Value::String(s)) if s == "none" => Head::None,
            Some(Value::Object(h)) => Head::Custom {
                status: h.get("status").and_then(Value::as_u64).unwrap_or(200) as u16,
                headers: match h.get("headers") {
                    // A `null` value leaves out a header the peer would add (`Content-Type`).
                    Some(Value::Object(hs)) => hs
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned)))
                        .collect(),
                    _ => Vec::new(),
                },
                until_close: h.get("framing").and_then(Value::as_str) == Some("close"),
            },
            Some(other) => return Err(format!("a bad `head`: {other}")),
        };
        script.to_post = v.get("to").and_then(Value::as_str) == Some("post");
        Ok(script)
    }

    /// Counts `method` and says whether this is the request the steps answer.
    fn is_target(
        &self,
        counts: &mut std::collections::HashMap<String, usize>,
        method: &str,
    ) -> bool {
        let seen = counts.entry(method.to_owned()).or_default();
        *seen += 1;
        self.on.as_deref() == Some(method) && (self.nth == 0 || *seen == self.nth)
    }

    /// Whether the steps start by no longer reading from the client.
    fn stalls(&self) -> bool {
        matches!(self.steps.first().map(|s| &s.what), Some(What::Stall))
    }

    /// Streamable HTTP: the body framing the steps get.
    fn body(&self) -> Body {
        if self.body != Body::Auto {
            return self.body;
        }
        // Bytes written after an `open` are inside its message.
        let (mut frames, mut outside, mut open) = (0, false, false);
        for s in &self.steps {
            match s.what {
                What::Msg(_) | What::Line(_) | What::Healthy | What::Trickle(..) => {
                    frames += s.times
                }
                What::Open(_) => {
                    frames += s.times;
                    open = true;
                }
                What::Raw(_) | What::Endless(_) | What::TrickleRaw(..) if !open => outside = true,
                _ => {}
            }
        }
        if frames == 1 && !outside {
            Body::Json
        } else {
            Body::Sse
        }
    }
}

fn step(v: &Value) -> Result<Step, String> {
    let times = v.get("times").and_then(Value::as_u64).unwrap_or(1);
    let ms = |key: &str| Duration::from_millis(v.get(key).and_then(Value::as_u64).unwrap_or(0));
    let what = if let Some(m) = v.get("msg") {
        What::Msg(m.clone())
    } else if let Some(r) = v.get("answer") {
        What::Msg(json!({"jsonrpc": "2.0", "id": "$id", "result": r}))
    } else if let Some(e) = v.get("error") {
        What::Msg(json!({"jsonrpc": "2.0", "id": "$id", "error": e}))
    } else if v.get("healthy").is_some() {
        What::Healthy
    } else if let Some(p) = v.get("line") {
        What::Line(parts(p)?)
    } else if let Some(p) = v.get("open") {
        What::Open(parts(p)?)
    } else if v.get("end").is_some() {
        What::End
    } else if let Some(p) = v.get("stderr") {
        What::Stderr(parts(p)?)
    } else if let Some(p) = v.get("raw") {
        What::Raw(parts(p)?)
    } else if let Some(p) = v.get("endless") {
        What::Endless(parts(p)?)
    } else if let Some(p) = v.get("trickle") {
        What::Trickle(parts(p)?, ms("every_ms"))
    } else if let Some(p) = v.get("trickle_raw") {
        What::TrickleRaw(parts(p)?, ms("every_ms"))
    } else if v.get("sleep_ms").is_some() {
        What::Sleep(ms("sleep_ms"))
    } else if v.get("hang").is_some() {
        What::Hang
    } else if v.get("close").is_some() {
        What::Close
    } else if v.get("stall").is_some() {
        What::Stall
    } else {
        return Err(format!("an unknown step: {v}"));
    };
    Ok(Step { what, times })
}

fn parts(v: &Value) -> Result<Vec<Part>, String> {
    match v {
        Value::String(s) => Ok(vec![Part::Text(s.clone())]),
        Value::Array(items) => items.iter().map(part).collect(),
        other => Ok(vec![part(other)?]),
    }
}

fn part(v: &Value) -> Result<Part, String> {
    match v {
        Value::String(s) => Ok(Part::Text(s.clone())),
        Value::Object(o) if o.contains_key("hex") => {
            let hex = o["hex"].as_str().ok_or("`hex` is not a string")?;
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|e| format!("bad hex {hex:?}: {e}"))?;
            Ok(Part::Bytes(bytes))
        }
        Value::Object(o) if o.contains_key("repeat") => Ok(Part::Repeat(
            parts(&o["repeat"])?,
            o.get("times").and_then(Value::as_u64).unwrap_or(1),
        )),
        Value::Object(o) if o.contains_key("json") => Ok(Part::Json(o["json"].clone())),
        other => Err(format!("a bad byte part: {other}")),
    }
}

/// The well-behaved answer to a client message (`None` for notifications and answers).
pub(crate) fn healthy_answer(msg: &Value) -> Option<Value> {
    let id = msg.get("id")?.clone();
    let method = msg.get("method")?.as_str()?;
    let result = match method {
        "initialize" => json!({
            "protocolVersion": msg
                .pointer("/params/protocolVersion")
                .cloned()
                .unwrap_or(json!("2025-11-25")),
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "hostile-peer", "version": "1.0.0"},
        }),
        "server/discover" => json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile-peer", "version": "1.0.0"}},
        }),
        "ping" => json!({}),
        "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
        _ => {
            return Some(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("no method {method}")},
            }));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
