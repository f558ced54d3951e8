//! The bad-input corpus (`tests/bad_input/cases.json`) and the four ways it runs: stdio and
//! Streamable HTTP, each in the session era (after `initialize` at 2025-11-25) and in 2026-07-28
//! (per-request `_meta`, no handshake). See `tests/bad_input.rs` for the file's format.
//!
//! Every case goes out on a connection (a stdio process, an HTTP session or, for 2026-07-28,
//! the server's stateless endpoint) that the way keeps for the whole run, and is followed by a
//! valid call on the same connection: the case passes when the server answered the case as
//! expected *and* then answered the probe.

use std::fmt;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::Proc;
use super::http::stateless_meta;

/// How long one response may take (huge inputs included).
const TIMEOUT: Duration = Duration::from_secs(20);

/// HTTP header fields, in order (repeats allowed).
type Headers = Vec<(String, String)>;

/// A transport and an era: one of the four ways a case runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Way {
    pub http: bool,
    pub stateless: bool,
}

impl Way {
    pub const ALL: [Way; 4] = [
        Way {
            http: false,
            stateless: false,
        },
        Way {
            http: false,
            stateless: true,
        },
        Way {
            http: true,
            stateless: false,
        },
        Way {
            http: true,
            stateless: true,
        },
    ];

    fn transport(self) -> &'static str {
        if self.http { "http" } else { "stdio" }
    }

    fn era(self) -> &'static str {
        if self.stateless { "2026" } else { "session" }
    }

    /// The selectors that name this way, most specific first: `stdio/session`, `stdio`,
    /// `session`, `*`.
    fn selectors(self) -> [String; 4] {
        [
            format!("{}/{}", self.transport(), self.era()),
            self.transport().to_owned(),
            self.era().to_owned(),
            "*".to_owned(),
        ]
    }

    fn is_selector(key: &str) -> bool {
        Way::ALL
            .iter()
            .any(|w| w.selectors().iter().any(|s| s == key))
    }
}

impl fmt::Display for Way {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.transport(), self.era())
    }
}

/// One entry of the corpus.
pub struct Case {
    pub name: String,
    pub server: String,
    raw: Value,
}

impl Case {
    /// Reads and checks the corpus file.
    pub fn load(path: &std::path::Path) -> Vec<Case> {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let file: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        let cases: Vec<Case> = file["cases"]
            .as_array()
            .expect("a `cases` array")
            .iter()
            .map(|raw| Case {
                name: raw["name"]
                    .as_str()
                    .expect("every case has a name")
                    .to_owned(),
                server: raw["server"].as_str().unwrap_or("quickstart").to_owned(),
                raw: raw.clone(),
            })
            .collect();
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            panic!("two cases are named {:?}", w[0]);
        }
        const KNOWN: &[&str] = &[
            "name",
            "note",
            "server",
            "ways",
            "send",
            "headers",
            "add_headers",
            "chunked",
            "expect",
            "pending",
        ];
        for case in &cases {
            for key in case.raw.as_object().expect("a case is an object").keys() {
                assert!(
                    KNOWN.contains(&key.as_str()),
                    "case {:?}: unknown member {key:?}",
                    case.name
                );
            }
            assert!(
                case.raw["note"].as_str().is_some_and(|n| !n.is_empty()),
                "case {:?} has no note (why its outcome is the expected one)",
                case.name
            );
            for way in Way::ALL.into_iter().filter(|w| case.applies(*w)) {
                let _ = case.expectation(way);
            }
        }
        cases
    }

    /// Whether the case runs this way (`ways` lists selectors; all four when absent).
    pub fn applies(&self, way: Way) -> bool {
        match self.raw.get("ways") {
            None => true,
            Some(ways) => ways
                .as_array()
                .unwrap_or_else(|| panic!("case {:?}: `ways` must be an array", self.name))
                .iter()
                .any(|s| {
                    way.selectors()
                        .iter()
                        .any(|w| Some(w.as_str()) == s.as_str())
                }),
        }
    }

    /// A member for this way: a plain value, or an object whose selector keys (`stdio/session`,
    /// `http`, `2026`, …) override it, the most specific first; the other keys are the default.
    fn by_way(&self, member: &str, way: Way) -> Option<Value> {
        let value = self.raw.get(member)?;
        let Some(map) = value.as_object() else {
            return Some(value.clone());
        };
        if let Some(v) = way.selectors().iter().find_map(|s| map.get(s.as_str())) {
            return Some(v.clone());
        }
        let rest: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !Way::is_selector(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (!rest.is_empty()).then_some(Value::Object(rest))
    }

    /// What the server must do with the case this way.
    pub fn expectation(&self, way: Way) -> Expect {
        let value = self
            .by_way("expect", way)
            .unwrap_or_else(|| panic!("case {:?} expects nothing for {way}", self.name));
        Expect::parse(&value).unwrap_or_else(|e| panic!("case {:?}, {way}: {e}", self.name))
    }

    /// Why the case is known to fail this way (a runtime bug still open), if it is.
    pub fn pending(&self, way: Way) -> Option<String> {
        self.by_way("pending", way)
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    /// The message bytes for this way: `send` is a string or a list of parts (strings,
    /// `{"repeat": s, "times": n}`, `{"hex": "c328"}`, `{"fill": c, "to": total}`), and
    /// `{{meta}}` in a string stands for the era's `_meta` object.
    pub fn bytes(&self, way: Way) -> Vec<u8> {
        let meta = if way.stateless {
            stateless_meta().to_string()
        } else {
            "{}".to_owned()
        };
        let parts = match &self.raw["send"] {
            Value::String(s) => vec![Value::String(s.clone())],
            Value::Array(parts) => parts.clone(),
            other => panic!("case {:?}: bad `send` {other}", self.name),
        };
        let mut out = Vec::new();
        let mut fill = None;
        for part in &parts {
            match part {
                Value::String(s) => out.extend_from_slice(s.replace("{{meta}}", &meta).as_bytes()),
                Value::Object(p) if p.contains_key("repeat") => {
                    let unit = p["repeat"].as_str().expect("`repeat` is a string");
                    let times = p["times"].as_u64().expect("`times` is a count") as usize;
                    out.extend_from_slice(unit.repeat(times).as_bytes());
                }
                Value::Object(p) if p.contains_key("hex") => {
                    out.extend(hex(p["hex"].as_str().expect("`hex` is a string")));
                }
                Value::Object(p) if p.contains_key("fill") => {
                    assert!(fill.is_none(), "case {:?}: one `fill` at most", self.name);
                    let byte = p["fill"]
                        .as_str()
                        .expect("`fill` is one character")
                        .as_bytes()[0];
                    let to = p["to"].as_u64().expect("`to` is a length") as usize;
                    fill = Some((out.len(), byte, to));
                }
                other => panic!("case {:?}: bad part {other}", self.name),
            }
        }
        if let Some((at, byte, to)) = fill {
            let n = to.checked_sub(out.len()).unwrap_or_else(|| {
                panic!(
                    "case {:?}: the message is already longer than {to}",
                    self.name
                )
            });
            out.splice(at..at, std::iter::repeat_n(byte, n));
        }
        out
    }

    /// Header changes for HTTP: `headers` sets (or, with `null`, drops) one header each;
    /// `add_headers` (pairs) adds more, after the rest, repeats included.
    fn header_changes(&self) -> (Vec<(String, Option<String>)>, Headers) {
        let set = self.raw["headers"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned)))
                    .collect()
            })
            .unwrap_or_default();
        let add = self.raw["add_headers"]
            .as_array()
            .map(|pairs| {
                pairs
                    .iter()
                    .map(|p| {
                        (
                            p[0].as_str().expect("header name").to_owned(),
                            p[1].as_str().expect("header value").to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        (set, add)
    }
}

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).expect("hex"))
        .collect()
}

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
    /// A result that contains this (every member of an object, recursively).
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

    fn parse(v: &Value) -> Result<Expect, String> {
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

fn brief(v: &Value) -> String {
    let text = v.to_string();
    shorten(&text)
}

fn shorten(text: &str) -> String {
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

fn show(messages: &[Vec<u8>]) -> String {
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

/// A server and the connection a way sends its cases on.
pub enum Conn {
    Stdio {
        proc: Proc,
        stateless: bool,
        probes: u64,
    },
    Http {
        server: HttpProc,
        session: Option<String>,
        probes: u64,
    },
}

/// The example a case names, with what it needs to start (the ticket desk wants a database).
fn server_env(server: &str) -> Vec<(String, String)> {
    match server {
        "tickets" => {
            let dir = scratch_dir();
            vec![(
                "TICKETS_DB".to_owned(),
                dir.join("tickets.sqlite3").display().to_string(),
            )]
        }
        _ => Vec::new(),
    }
}

/// The scratch directories made so far (removed by [`remove_scratch`]).
static SCRATCH: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A fresh directory for one server's files, under cargo's scratch directory for integration
/// tests, named after this process (runs of the test in parallel keep apart).
fn scratch_dir() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "bad-input-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    SCRATCH.lock().unwrap().push(dir.clone());
    dir
}

/// Removes the scratch directories (once their servers are gone).
pub fn remove_scratch() {
    for dir in SCRATCH.lock().unwrap().drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

impl Conn {
    /// Starts `server` and opens the way's connection (for the session era, `initialize`).
    pub fn open(server: &str, way: Way) -> Conn {
        let env = server_env(server);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        if way.http {
            let server = HttpProc::start(server, &env);
            let session = (!way.stateless).then(|| server.open_session());
            Conn::Http {
                server,
                session,
                probes: 0,
            }
        } else {
            let mut proc = Proc::spawn(server, &[], &env);
            if !way.stateless {
                let init = proc.initialize();
                assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
            }
            Conn::Stdio {
                proc,
                stateless: way.stateless,
                probes: 0,
            }
        }
    }

    /// Sends a case and then a probe; returns what answered the case, and whether the probe
    /// succeeded (`Err` says how it did not).
    pub fn run(&mut self, case: &Case, way: Way) -> (Outcome, Result<(), String>) {
        let bytes = case.bytes(way);
        let wants_response = case.expectation(way).wants_response();
        match self {
            Conn::Stdio {
                proc,
                stateless,
                probes,
            } => {
                *probes += 1;
                let probe_id = format!("probe-{probes}");
                if let Err(e) = proc.send_bytes_line(&bytes) {
                    let outcome = Outcome {
                        status: None,
                        messages: Vec::new(),
                    };
                    return (outcome, Err(format!("cannot write the case: {e}")));
                }
                proc.send_line(&probe(&probe_id, *stateless, &case.server).to_string());
                // The probe's answer may overtake the case's (a handler that awaits): read
                // until both are in.
                let mut messages = Vec::new();
                let mut verdict = None;
                let deadline = Instant::now() + TIMEOUT;
                while verdict.is_none() || (wants_response && messages.is_empty()) {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let Some(line) = proc.next_line(left) else {
                        let e = match verdict {
                            Some(_) => "no answer to the case in time".into(),
                            None => "no answer to the probe (server gone or stuck)".into(),
                        };
                        return (
                            Outcome {
                                status: None,
                                messages,
                            },
                            Err(e),
                        );
                    };
                    let is_probe = serde_json::from_str::<Value>(&line)
                        .is_ok_and(|v| v["id"] == probe_id.as_str());
                    if is_probe {
                        verdict = Some(probe_ok(&line));
                    } else {
                        messages.push(line.into_bytes());
                    }
                }
                (
                    Outcome {
                        status: None,
                        messages,
                    },
                    verdict.expect("the probe was answered"),
                )
            }
            Conn::Http {
                server,
                session,
                probes,
            } => {
                *probes += 1;
                let probe_id = format!("probe-{probes}");
                let (set, add) = case.header_changes();
                let mut headers = base_headers(session.as_deref(), &bytes);
                for (name, value) in set {
                    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                    if let Some(v) = value {
                        headers.push((name, v));
                    }
                }
                headers.extend(add);
                let chunked = case.raw["chunked"] == true;
                let outcome = match server.post(&headers, &bytes, chunked) {
                    Ok((status, messages)) => Outcome {
                        status: Some(status),
                        messages,
                    },
                    Err(e) => {
                        let outcome = Outcome {
                            status: None,
                            messages: Vec::new(),
                        };
                        return (outcome, Err(format!("no HTTP response to the case: {e}")));
                    }
                };
                let body = probe(&probe_id, session.is_none(), &case.server);
                let body = body.to_string().into_bytes();
                let headers = base_headers(session.as_deref(), &body);
                let verdict = match server.post(&headers, &body, false) {
                    Ok((200, messages)) if messages.len() == 1 => {
                        probe_ok(&String::from_utf8_lossy(&messages[0]))
                    }
                    Ok((status, messages)) => {
                        Err(format!("probe got HTTP {status}: {}", show(&messages)))
                    }
                    Err(e) => Err(format!("no HTTP response to the probe: {e}")),
                };
                (outcome, verdict)
            }
        }
    }

    /// After the last case: a probe, and nothing else on stdout (a late answer to the last
    /// case would otherwise go unseen; earlier ones show up as extra messages of the next case).
    pub fn finish(&mut self) -> Result<(), String> {
        let Conn::Stdio {
            proc,
            stateless,
            probes,
        } = self
        else {
            return Ok(());
        };
        *probes += 1;
        let id = format!("probe-{probes}");
        // `tools/list`, which every example answers.
        proc.send_line(&probe(&id, *stateless, "any").to_string());
        let mut stray = Vec::new();
        loop {
            let Some(line) = proc.next_line(TIMEOUT) else {
                return Err("no answer to the final probe".into());
            };
            if serde_json::from_str::<Value>(&line).is_ok_and(|v| v["id"] == id.as_str()) {
                break;
            }
            stray.push(line.into_bytes());
        }
        match stray.as_slice() {
            [] => Ok(()),
            m => Err(format!("messages nobody asked for: {}", show(m))),
        }
    }

    /// The server's stderr so far.
    pub fn log(&mut self) -> String {
        match self {
            Conn::Stdio { proc, .. } => proc.stderr_text(),
            Conn::Http { server, .. } => server.proc.stderr_text(),
        }
    }
}

/// The valid call after every case: `tools/call add` on the quickstart, `tools/list` elsewhere.
fn probe(id: &str, stateless: bool, server: &str) -> Value {
    let mut params = match server {
        "quickstart" => json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        _ => json!({}),
    };
    if stateless {
        params["_meta"] = stateless_meta();
    }
    let method = if server == "quickstart" {
        "tools/call"
    } else {
        "tools/list"
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn probe_ok(line: &str) -> Result<(), String> {
    let v: Value =
        serde_json::from_str(line).map_err(|e| format!("probe answer is not JSON: {e}"))?;
    let result = &v["result"];
    if result["structuredContent"]["result"] == 5 || result["tools"].is_array() {
        Ok(())
    } else {
        Err(format!("probe failed: {}", brief(&v)))
    }
}

/// The headers a well-behaved client sends with `body`: the session's, or for 2026-07-28 the
/// version and the `Mcp-Method`/`Mcp-Name` mirrors of what the body says (when it says it).
fn base_headers(session: Option<&str>, body: &[u8]) -> Headers {
    let mut h = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        (
            "Accept".to_owned(),
            "application/json, text/event-stream".to_owned(),
        ),
    ];
    match session {
        Some(id) => {
            h.push(("Mcp-Session-Id".to_owned(), id.to_owned()));
            h.push(("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned()));
        }
        None => {
            h.push(("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()));
            if let Some((method, name)) = method_and_name(body) {
                h.push(("Mcp-Method".to_owned(), header_safe(&method)));
                if let Some(name) = name {
                    h.push(("Mcp-Name".to_owned(), header_safe(&name)));
                }
            }
        }
    }
    h
}

/// The body's `method` and the value `Mcp-Name` mirrors (`params.name` or `params.uri`), read
/// without building a `Value` (bodies of the corpus nest deeper than its recursion limit, or
/// hold numbers no double holds).
fn method_and_name(body: &[u8]) -> Option<(String, Option<String>)> {
    use serde::Deserialize;
    use serde_json::value::RawValue;
    #[derive(Deserialize)]
    struct Message<'a> {
        method: String,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<&'a RawValue>,
        #[serde(borrow)]
        uri: Option<&'a RawValue>,
    }
    let text = std::str::from_utf8(body).ok()?;
    let msg: Message<'_> = serde_json::from_str(text).ok()?;
    let key = match msg.method.as_str() {
        "tools/call" | "prompts/get" => msg.params.as_ref().and_then(|p| p.name),
        "resources/read" => msg.params.as_ref().and_then(|p| p.uri),
        _ => None,
    };
    let name = key.map(|raw| {
        serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| raw.get().to_owned())
    });
    Some((msg.method, name))
}

/// A header value as the spec's clients send it: plain when it is safe ASCII, else
/// `=?base64?…?=`.
fn header_safe(text: &str) -> String {
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.starts_with("=?base64?");
    if plain {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", base64(text.as_bytes()))
    }
}

/// Standard Base64 with padding (the test crate has no Base64 dependency).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// An example serving HTTP on an ephemeral loopback port (with environment variables, which
/// [`super::http::HttpServer`] does not take).
pub struct HttpProc {
    pub proc: Proc,
    pub port: u16,
}

impl HttpProc {
    fn start(name: &str, env: &[(&str, &str)]) -> HttpProc {
        let proc = Proc::spawn(name, &["--http", "127.0.0.1:0"], env);
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = proc
                .stderr
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("{name} did not start serving HTTP: {e}"));
            let port = line
                .split("serving MCP on http://")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| p.trim().parse().ok());
            if let Some(port) = port {
                return HttpProc { proc, port };
            }
        }
    }

    fn open_session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bad-input", "version": "1"}}})
        .to_string();
        let headers = base_headers(Some(""), b"")
            .into_iter()
            .filter(|(n, _)| n != "Mcp-Session-Id" && n != "MCP-Protocol-Version")
            .collect::<Vec<_>>();
        let reply = self
            .exchange(&headers, init.as_bytes(), false)
            .expect("initialize");
        assert_eq!(reply.status, 200, "initialize");
        let id = reply
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("mcp-session-id"))
            .map(|(_, v)| v.clone())
            .expect("a session id");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let reply = self
            .exchange(&base_headers(Some(&id), b""), note.as_bytes(), false)
            .expect("notifications/initialized");
        assert_eq!(reply.status, 202, "notifications/initialized");
        id
    }

    /// POSTs `body` to `/mcp`; returns the status and the JSON-RPC messages of the response
    /// (its JSON body, or the data of its SSE events).
    fn post(
        &self,
        headers: &[(String, String)],
        body: &[u8],
        chunked: bool,
    ) -> Result<(u16, Vec<Vec<u8>>), String> {
        let HttpReply {
            status,
            headers: head,
            body,
        } = self.exchange(headers, body, chunked)?;
        let sse = head.iter().any(|(n, v)| {
            n.eq_ignore_ascii_case("content-type") && v.contains("text/event-stream")
        });
        let messages = if sse {
            String::from_utf8_lossy(&body)
                .split("\n\n")
                .filter_map(|event| {
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|d| d.strip_prefix(' ').unwrap_or(d))
                        .collect();
                    (!data.is_empty() && !data.concat().trim().is_empty())
                        .then(|| data.join("\n").into_bytes())
                })
                .collect()
        } else if body.iter().all(u8::is_ascii_whitespace) {
            Vec::new()
        } else {
            vec![body]
        };
        Ok((status, messages))
    }

    /// One request on a new connection. The body is written on a thread, so a server that
    /// answers (413) before reading it all is heard instead of deadlocking the writer.
    fn exchange(
        &self,
        headers: &[(String, String)],
        body: &[u8],
        chunked: bool,
    ) -> Result<HttpReply, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).ok();
        let mut head = "POST /mcp HTTP/1.1\r\n".to_owned();
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        } else {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        let mut wire = head.into_bytes();
        if chunked {
            for chunk in body.chunks(64 * 1024) {
                wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                wire.extend_from_slice(chunk);
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend_from_slice(b"0\r\n\r\n");
        } else {
            wire.extend_from_slice(body);
        }
        let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
        let write = std::thread::spawn(move || {
            // The server may close early (413): a reset write is not the test's failure.
            let _ = writer.write_all(&wire);
            let _ = writer.flush();
        });
        stream.set_read_timeout(Some(TIMEOUT)).ok();
        let mut raw = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset && !raw.is_empty() => break,
                Err(e) => return Err(format!("reading the response: {e}")),
            }
        }
        let _ = stream.shutdown(std::net::Shutdown::Both);
        let _ = write.join();
        parse_response(&raw)
    }
}

/// A whole HTTP response.
struct HttpReply {
    status: u16,
    headers: Headers,
    body: Vec<u8>,
}

fn parse_response(raw: &[u8]) -> Result<HttpReply, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no response head in {} bytes", raw.len()))?;
    let text = String::from_utf8_lossy(&raw[..end]);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("bad status line")?;
    let headers: Headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        while let Some(i) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = std::str::from_utf8(&rest[..i]).unwrap_or("");
            let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| format!("bad chunk size {size:?}"))?;
            rest = &rest[i + 2..];
            if size == 0 || rest.len() < size {
                out.extend_from_slice(&rest[..size.min(rest.len())]);
                break;
            }
            out.extend_from_slice(&rest[..size]);
            rest = rest.get(size + 2..).unwrap_or(&[]);
        }
        body = out;
    }
    Ok(HttpReply {
        status,
        headers,
        body,
    })
}

impl Proc {
    /// Writes `bytes` and a newline to stdin; an error (the server closed stdin) is returned.
    pub fn send_bytes_line(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin closed"))?;
        stdin.write_all(bytes)?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// The next raw stdout line, waiting at most `wait`.
    pub fn next_line(&mut self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }
}
