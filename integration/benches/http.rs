//! Throughput and latency of the Streamable HTTP transport: `cargo bench -p mcp-integration --bench http`.
//!
//! A measurement, not a test: it prints numbers and asserts nothing about them. The binary plays
//! three roles, picked by its first argument:
//!
//! - `--serve-mcp`: the framework serving one tool (`add`) over HTTP on a free loopback port,
//!   with default settings (sessions on);
//! - `--serve-mcp-jwt PORT ISSUER`: the same on `PORT`, as an OAuth resource server
//!   (`Auth::jwt(ISSUER, http://127.0.0.1:PORT/mcp)`): every request's JWT is verified, the
//!   issuer's keys cached after the first;
//! - `--serve-raw`: the ceiling — a bare hyper server that answers every POST with the same bytes
//!   the MCP server sends (the request's id echoed, found by a byte scan), no MCP work;
//! - `--serve-floor`: the same hyper server answering with the least a JSON-RPC server built on
//!   serde_json does (`common/floor.rs`: the body and the call's arguments decoded, the result
//!   encoded, no MCP work), reported as `floor`, and `mcp/floor` beside `mcp/raw`;
//! - no argument (or cargo's `--bench`): the driver.
//!
//! For 1 and 32 concurrent sessions (one keep-alive connection each, one request in flight per
//! session), the driver opens the sessions (`initialize` + `notifications/initialized`), warms
//! up, then for `BENCH_SECS` (default 3) sends `tools/call add {a:2,b:3}` back to back and checks
//! each answer. It reports calls/s, the server's CPU time per call (from
//! `/proc/PID/task/*/schedstat` at both ends of the window, see `common`) and p50/p99 latency
//! for both servers, and the MCP server's memory per idle session: the marginal cost, resident
//! memory after 10,000 sessions less that after the first 1,000, over the 9,000 between (one
//! server, one connection); and beside it the whole rise from no session to 1,000 over 1,000,
//! which also carries the one-time costs of the first sessions (allocator arenas, tables'
//! first growth). With authorization it runs the real authorization server of
//! tests/auth (oidc-provider, installed by tests/auth/setup.sh) for one client-credentials token,
//! and compares `mcp+jwt` with `mcp` (skipped, with a message, when Node or npm is missing).
//! `BENCH_ERA=2026-07-28` drives 2026-07-28 calls instead (no `initialize`; `_meta` and the
//! `Mcp-*` headers on every request).

mod common;
#[path = "common/floor.rs"]
mod floor;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::{CpuUse, or_unknown};
use mcp_runtime::prelude::*;

/// Add two numbers.
#[tool]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

const EXPECTED: &[u8] = br#""structuredContent":{"result":5}"#;
const RAW_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
const RAW_TAIL: &[u8] =
    br#","result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5}}}"#;

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("--serve-mcp") => serve_mcp(),
        Some("--serve-mcp-jwt") => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            serve_mcp_jwt(args[0].parse().expect("PORT"), &args[1]);
        }
        Some("--serve-raw") => serve_hyper(|body| {
            let id = raw_id(body).unwrap_or(b"null");
            let mut out = Vec::with_capacity(RAW_HEAD.len() + id.len() + RAW_TAIL.len());
            out.extend_from_slice(RAW_HEAD);
            out.extend_from_slice(id);
            out.extend_from_slice(RAW_TAIL);
            Some(out)
        }),
        Some("--serve-floor") => serve_hyper(|body| {
            let mut out = Vec::with_capacity(256);
            floor::answer(body, &mut out).then_some(out)
        }),
        _ => drive(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn serve_mcp() {
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("PORT {}", listener.local_addr().unwrap().port());
        let server = mcp_runtime::Server::builder()
            .name("bench")
            .version("0")
            .build()
            .unwrap();
        let config = mcp_runtime::transport::HttpConfig::default();
        mcp_runtime::transport::serve_http_on(server, listener, config)
            .await
            .expect("serve");
    });
}

fn serve_mcp_jwt(port: u16, issuer: &str) {
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind");
        println!("PORT {port}");
        let server = mcp_runtime::Server::builder()
            .name("bench")
            .version("0")
            .build()
            .unwrap();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let config = mcp_runtime::transport::HttpConfig::default()
            .auth(mcp_runtime::auth::Auth::jwt(issuer, resource));
        mcp_runtime::transport::serve_http_on(server, listener, config)
            .await
            .expect("serve");
    });
}

/// A bare hyper server on a free port, answering each POST with what `respond` makes of its
/// body (202 and no body for `None`).
fn serve_hyper(respond: fn(&[u8]) -> Option<Vec<u8>>) {
    use http_body_util::{BodyExt, Full};
    use hyper::service::service_fn;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        println!("PORT {}", listener.local_addr().unwrap().port());
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let body = req
                        .into_body()
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    let Some(out) = respond(&body) else {
                        let mut response = hyper::Response::new(Full::new(bytes::Bytes::new()));
                        *response.status_mut() = hyper::StatusCode::ACCEPTED;
                        return Ok(response);
                    };
                    let mut response = hyper::Response::new(Full::new(bytes::Bytes::from(out)));
                    response
                        .headers_mut()
                        .insert("content-type", "application/json".parse().unwrap());
                    Ok::<_, std::convert::Infallible>(response)
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

fn raw_id(body: &[u8]) -> Option<&[u8]> {
    let start = body.windows(5).position(|w| w == b"\"id\":")? + 5;
    let rest = &body[start..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}')?;
    Some(rest[..end].trim_ascii())
}

// ---------------------------------------------------------------------------------------------
// The driver.

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(flag: &str) -> Server {
        Server::start_with(flag, &[])
    }

    fn start_with(flag: &str, args: &[&str]) -> Server {
        let exe = std::env::current_exe().expect("current_exe");
        let mut child = Command::new(exe)
            .arg(flag)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("port line");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .expect("PORT n");
        Server { child, port }
    }

    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    stream: BufReader<TcpStream>,
    port: u16,
    session: Option<String>,
    /// `Authorization: Bearer …` on every request, when the server wants it.
    token: Option<Arc<str>>,
    /// The 2026-07-28 headers on every request (`BENCH_ERA`); the idle-session figure opens
    /// session-era sessions whatever the era.
    stateless: bool,
    buf: Vec<u8>,
}

impl Conn {
    fn open(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).unwrap();
        Conn {
            stream: BufReader::new(stream),
            port,
            session: None,
            token: None,
            stateless: stateless(),
            buf: Vec::new(),
        }
    }

    /// POSTs `body`; returns the response body (and keeps any session id it was given).
    fn post(&mut self, body: &str) -> Vec<u8> {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        if let Some(t) = &self.token {
            req.push_str("Authorization: Bearer ");
            req.push_str(t);
            req.push_str("\r\n");
        }
        if let Some(s) = &self.session {
            req.push_str("Mcp-Session-Id: ");
            req.push_str(s);
            req.push_str("\r\n");
        }
        if self.stateless {
            req.push_str(STATELESS_HEADERS);
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream
            .get_mut()
            .write_all(req.as_bytes())
            .expect("write");
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            self.stream.read_line(&mut line).expect("read");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            } else if lower.starts_with("mcp-session-id:") {
                self.session = Some(l["mcp-session-id:".len()..].trim().to_owned());
            }
        }
        self.buf.resize(length, 0);
        self.stream.read_exact(&mut self.buf).expect("body");
        self.buf.clone()
    }

    fn initialize(&mut self) {
        let answer = self.post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#);
        // (The raw and floor responders open no session and answer no handshake: the first
        // answers everything with the call's result, the second with an empty result.)
        let has = |needle: &[u8]| answer.windows(needle.len()).any(|w| w == needle);
        if self.session.is_none() && !has(EXPECTED) && !has(br#""result":{}"#) {
            eprintln!(
                "initialize opened no session: {}",
                String::from_utf8_lossy(&answer[..answer.len().min(400)])
            );
        }
        self.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

struct Stats {
    calls: usize,
    per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    mismatches: usize,
    /// The server's CPU time in the window.
    cpu: Option<CpuUse>,
}

impl Stats {
    /// The server's CPU time per call in the window, µs.
    fn cpu_us(&self) -> Option<f64> {
        self.cpu.and_then(|c| c.us_per_call(self.calls))
    }
}

/// `BENCH_ERA=2026-07-28`: the driver sends 2026-07-28 requests (no session, `_meta` and
/// the `Mcp-*` headers on every call) instead of session-era ones.
fn stateless() -> bool {
    std::env::var("BENCH_ERA").as_deref() == Ok("2026-07-28")
}

const STATELESS_HEADERS: &str =
    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n";

/// One `tools/call add {a:2,b:3}` in the era the bench drives.
fn call_body(id: u64) -> String {
    if stateless() {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
        )
    } else {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
        )
    }
}

fn load(
    server: &Server,
    token: Option<Arc<str>>,
    sessions: usize,
    warmup: Duration,
    secs: Duration,
) -> Stats {
    let port = server.port;
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..sessions)
        .map(|_| {
            let (stop, measuring, token) = (stop.clone(), measuring.clone(), token.clone());
            thread::spawn(move || {
                let mut conn = Conn::open(port);
                conn.token = token;
                if !stateless() {
                    conn.initialize();
                }
                let mut latencies = Vec::new();
                let mut mismatches = 0;
                let mut id = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    let body = call_body(id);
                    id += 1;
                    let start = Instant::now();
                    let response = conn.post(&body);
                    let took = start.elapsed();
                    if measuring.load(Ordering::Relaxed) {
                        latencies.push(took);
                        if !response.windows(EXPECTED.len()).any(|w| w == EXPECTED) {
                            if mismatches == 0 {
                                eprintln!(
                                    "first mismatch: {}",
                                    String::from_utf8_lossy(&response[..response.len().min(400)])
                                );
                            }
                            mismatches += 1;
                        }
                    }
                }
                (latencies, mismatches)
            })
        })
        .collect();
    thread::sleep(warmup);
    let (elapsed, cpu) = CpuUse::around(server.child.id(), || {
        measuring.store(true, Ordering::Relaxed);
        let start = Instant::now();
        thread::sleep(secs);
        measuring.store(false, Ordering::Relaxed);
        start.elapsed()
    });
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    let mut mismatches = 0;
    for w in workers {
        let (l, m) = w.join().expect("worker");
        all.extend(l);
        mismatches += m;
    }
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    Stats {
        calls: all.len(),
        per_sec: all.len() as f64 / elapsed.as_secs_f64(),
        p50_us: pct(0.5),
        p99_us: pct(0.99),
        mismatches,
        cpu,
    }
}

/// One line of the results table.
fn print_row(name: &str, sessions: usize, s: &Stats) {
    println!(
        "{name:<7} {sessions:>8} {:>10.0} {:>12} {:>8.1} {:>8.1} {:>9}",
        s.per_sec,
        or_unknown(s.cpu_us(), 2),
        s.p50_us,
        s.p99_us,
        s.mismatches
    );
}

/// The server's resident memory (KiB) before any session, then after opening sessions on one
/// connection up to each of `counts` (ascending, cumulative); `None` without `/proc`.
fn idle_session_rss(server: &Server, counts: &[usize]) -> Option<Vec<u64>> {
    let mut rss = vec![server.rss_kib()?];
    let mut conn = Conn::open(server.port);
    conn.stateless = false;
    let mut open = 0;
    for &count in counts {
        for _ in open..count {
            conn.session = None;
            conn.initialize();
        }
        open = count;
        thread::sleep(Duration::from_millis(200));
        rss.push(server.rss_kib()?);
    }
    Some(rss)
}

/// Prints the memory per idle session: the marginal figure from 1,000 to 10,000 sessions, and
/// the whole rise over the first 1,000.
fn idle_session_figures() {
    let server = Server::start("--serve-mcp");
    let Some(rss) = idle_session_rss(&server, &[1_000, 10_000]) else {
        println!("mcp memory per idle session: unavailable (no /proc)");
        return;
    };
    let (none, first, all) = (rss[0], rss[1], rss[2]);
    let kib = |from: u64, to: u64, sessions: f64| (to as f64 - from as f64) / sessions;
    println!(
        "mcp memory per idle session (RSS(10,000) − RSS(1,000)) / 9,000: {:.2} KiB",
        kib(first, all, 9_000.0)
    );
    println!(
        "mcp memory per idle session (1,000 sessions) (RSS(1,000) − RSS(0)) / 1,000, with one-time costs: {:.2} KiB",
        kib(none, first, 1_000.0)
    );
    println!("mcp RSS with 0 / 1,000 / 10,000 idle sessions: {none} / {first} / {all} KiB");
}

fn secs(name: &str, default: f64) -> Duration {
    Duration::from_secs_f64(
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|s: &f64| *s > 0.0)
            .unwrap_or(default),
    )
}

fn drive() {
    let (warmup, measure) = (secs("BENCH_WARMUP_SECS", 0.5), secs("BENCH_SECS", 3.0));
    println!("http transport benchmark: {measure:?} per configuration after {warmup:?} of warm-up");
    if stateless() {
        println!(
            "era: 2026-07-28 (BENCH_ERA), no sessions: `_meta` and Mcp-* headers on every call"
        );
    }
    println!(
        "{:<7} {:>8} {:>10} {:>12} {:>8} {:>8} {:>9}",
        "server", "sessions", "calls/s", "cpu_us/call", "p50_us", "p99_us", "mismatch"
    );
    let mut rates = Vec::new();
    for sessions in [1, 32] {
        for (name, flag) in [
            ("mcp", "--serve-mcp"),
            ("floor", "--serve-floor"),
            ("raw", "--serve-raw"),
        ] {
            let server = Server::start(flag);
            let s = load(&server, None, sessions, warmup, measure);
            if let Some(cpu) = s.cpu {
                cpu.warn_if_incomplete(name);
            }
            print_row(name, sessions, &s);
            rates.push((name, sessions, s.per_sec, s.cpu_us()));
        }
    }
    for sessions in [1, 32] {
        let get = |n: &str| rates.iter().find(|r| r.0 == n && r.1 == sessions);
        let (Some(m), Some(r)) = (get("mcp"), get("raw")) else {
            continue;
        };
        let cpu = m.3.zip(r.3).map(|(m, r)| m / r);
        println!(
            "mcp/raw at {sessions:>2} sessions: {:.2} calls/s, {} CPU/call",
            m.2 / r.2,
            or_unknown(cpu, 2)
        );
        if let Some(f) = get("floor") {
            let ratio =
                |a: Option<f64>, b: Option<f64>| or_unknown(a.zip(b).map(|(a, b)| a / b), 2);
            println!(
                "serde_json's floor at {sessions:>2} sessions: floor/raw {} CPU/call, mcp/floor {}",
                ratio(f.3, r.3),
                ratio(m.3, f.3)
            );
        }
    }
    jwt_figures(warmup, measure);
    idle_session_figures();
}

/// The authorization server of tests/auth (oidc-provider), for one real token.
struct Issuer {
    child: Child,
    port: u16,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_issuer(resource: &str) -> Result<Issuer, String> {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let setup = Command::new("bash")
        .arg(root.join("tests/auth/setup.sh"))
        .stderr(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !setup.status.success() {
        return Err("tests/auth/setup.sh failed (needs npm)".into());
    }
    let node = String::from_utf8_lossy(&setup.stdout).trim().to_owned();
    let mut child = Command::new(node)
        .arg(root.join(".interop/auth/as.mjs"))
        .env("PORT", "0")
        .env("RESOURCE", resource)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let port = line
        .rsplit(':')
        .next()
        .and_then(|p| p.trim().trim_end_matches("\"}").parse().ok())
        .ok_or_else(|| format!("the issuer said {line:?}"))?;
    Ok(Issuer { child, port })
}

/// A client-credentials token from the issuer for `resource`.
fn token(issuer: &Issuer, resource: &str) -> Result<String, String> {
    let body = format!(
        "grant_type=client_credentials&scope=mcp&resource={}",
        resource.replace(':', "%3A").replace('/', "%2F")
    );
    let mut stream = TcpStream::connect(("127.0.0.1", issuer.port)).map_err(|e| e.to_string())?;
    // mcp-test:test-secret, the client tests/auth/as.mjs registers.
    let req = format!(
        "POST /token HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Basic bWNwLXRlc3Q6dGVzdC1zZWNyZXQ=\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        issuer.port,
        body.len()
    );
    stream
        .write_all(req.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    let start = answer
        .find("\"access_token\":\"")
        .ok_or_else(|| format!("no token in {answer:?}"))?
        + "\"access_token\":\"".len();
    let end = answer[start..].find('"').ok_or("a cut token")? + start;
    Ok(answer[start..end].to_owned())
}

/// tools/call with JWT validation on (`mcp+jwt`) against the same server without (`mcp`).
fn jwt_figures(warmup: Duration, measure: Duration) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let issuer = match start_issuer(&resource) {
        Ok(i) => i,
        Err(e) => return println!("mcp+jwt: skipped ({e})"),
    };
    let token: Arc<str> = match self::token(&issuer, &resource) {
        Ok(t) => t.into(),
        Err(e) => return println!("mcp+jwt: skipped (no token: {e})"),
    };
    let issuer_url = format!("http://127.0.0.1:{}", issuer.port);
    for sessions in [1, 32] {
        let mut rows = Vec::new();
        for (name, auth) in [("mcp", false), ("mcp+jwt", true)] {
            let server = if auth {
                Server::start_with("--serve-mcp-jwt", &[&port.to_string(), &issuer_url])
            } else {
                Server::start("--serve-mcp")
            };
            let s = load(
                &server,
                auth.then(|| token.clone()),
                sessions,
                warmup,
                measure,
            );
            print_row(name, sessions, &s);
            rows.push(s);
        }
        let cpu = rows[1].cpu_us().zip(rows[0].cpu_us()).map(|(j, m)| j - m);
        println!(
            "jwt cost at {sessions:>2} sessions: {:.2}x calls/s, {} us more CPU per call",
            rows[1].per_sec / rows[0].per_sec,
            or_unknown(cpu, 2)
        );
    }
}
