//! The connection each way keeps (a stdio process, an HTTP session, the stateless endpoint),
//! the probe after every case, and the headers a well-behaved client sends.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use super::expect::Outcome;
use super::expect::{brief, show};
use super::wire::HttpProc;
use super::{Case, Headers, TIMEOUT, Way};
use crate::support::Proc;
use crate::support::http::stateless_meta;

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
pub(crate) fn base_headers(session: Option<&str>, body: &[u8]) -> Headers {
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
