//! Throughput and latency of the stdio transport: `cargo bench -p mcp-integration --bench stdio`.
//!
//! This is a measurement, not a test: it prints numbers and never asserts on them. The binary
//! plays four roles, picked by its first argument, so nothing else needs building:
//!
//! - `--serve-mcp`: a real MCP server over stdio (one tool, `add`) built with the framework;
//! - `--serve-mcp-layer`: the same with one pass-through middleware layer
//!   (`middleware::from_fn(|req, next| next.run(req))`), reported as `mcp+mw` and as a ratio
//!   of the server without;
//! - `--serve-floor`: the least a JSON-RPC server built on serde_json does (`common/floor.rs`:
//!   the message and the call's arguments decoded, the result encoded, no MCP work), with the
//!   raw responder's reads and batched writes; reported as `floor`, and `mcp/floor` beside
//!   `mcp/raw`;
//! - `--serve-raw`: the ceiling — reads newline-delimited JSON-RPC and answers every request with
//!   a fixed, pre-built line carrying the request's id (no JSON parsing, no MCP work);
//! - no argument (or cargo's `--bench`): the driver, which re-executes itself as each server.
//!
//! For each server and each concurrency (1 and 32 requests in flight) the driver spawns the
//! child, does the `initialize` handshake (none with `BENCH_ERA=2026-07-28`, whose calls carry
//! the version and capabilities in their `_meta` instead), warms up, then for `BENCH_SECS`
//! seconds (default 3; warm-up `BENCH_WARMUP_SECS`, default 0.5) keeps exactly N `tools/call`
//! requests in flight: a writer thread sends a new request for each response the reader
//! thread receives. It reports
//! calls/s and the p50/p99 latency from send to receive, the child's CPU time per call (from
//! `/proc/PID/task/*/schedstat` at both ends of the window, see `common`), its peak memory
//! (VmHWM) and, for the MCP server, its start-up time (spawn to `initialize` response, median
//! of 5).

mod common;
#[path = "common/floor.rs"]
mod floor;

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
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

/// What every correct `add(2, 3)` response contains.
const EXPECTED: &[u8] = br#""structuredContent":{"result":5}"#;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// The request, split around its id.
const CALL_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
const CALL_TAIL: &[u8] =
    br#","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;
/// The same call in the 2026-07-28 era: no handshake, the version and the client's
/// capabilities in every request's `_meta`.
const CALL_TAIL_2026: &[u8] = br#","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":2,"b":3}}}"#;

/// `BENCH_ERA=2026-07-28`: 2026-07-28 calls, without the `initialize` handshake.
fn stateless() -> bool {
    std::env::var("BENCH_ERA").as_deref() == Ok("2026-07-28")
}

/// The raw responder's answer, split around the id: the same bytes the MCP server sends.
const RAW_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
const RAW_TAIL: &[u8] =
    br#","result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5}}}"#;

/// Request ids start here (0 is the handshake's).
const FIRST_ID: u64 = 1;

fn main() {
    // cargo's bench runner passes `--bench` (and maybe a filter); only our own flags matter.
    match std::env::args().nth(1).as_deref() {
        Some("--serve-mcp") => serve_mcp(false),
        Some("--serve-mcp-layer") => serve_mcp(true),
        Some("--serve-raw") => serve_raw(),
        Some("--serve-floor") => serve_floor(),
        _ => drive(),
    }
}

// ---------------------------------------------------------------------------------------------
// The servers.

/// `layer`: with one pass-through middleware layer (what a layer costs on its own).
fn serve_mcp(layer: bool) {
    let mut builder = mcp_runtime::Server::builder().name("bench").version("0");
    if layer {
        builder = builder.middleware(mcp_runtime::middleware::from_fn(
            |req: mcp_runtime::middleware::McpRequest, next: mcp_runtime::middleware::Next| {
                next.run(req)
            },
        ));
    }
    let server = builder.build().unwrap();
    if let Err(e) = server.run(mcp_runtime::Transport::Stdio) {
        eprintln!("mcp server: {e}");
        std::process::exit(1);
    }
}

fn serve_raw() {
    serve_lines(|line, out| {
        // Notifications (no id) get no answer.
        let Some(id) = raw_id(line) else {
            return Ok(());
        };
        out.write_all(RAW_HEAD)?;
        out.write_all(id)?;
        out.write_all(RAW_TAIL)?;
        out.write_all(b"\n")
    });
}

fn serve_floor() {
    serve_lines(|line, out| {
        if floor::answer(line, out) {
            out.write_all(b"\n")?;
        }
        Ok(())
    });
}

/// Reads lines from stdin and lets `respond` write their answers, flushing whenever the next
/// read would block.
fn serve_lines(
    mut respond: impl FnMut(&[u8], &mut BufWriter<io::StdoutLock<'_>>) -> io::Result<()>,
) {
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin());
    // `BufWriter` over the line-buffered stdout: a flush of whole lines is one `write`.
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("server: {e}");
                break;
            }
        }
        if respond(&line, &mut out).is_err() {
            return;
        }
        // Flush when the next read would block.
        if input.buffer().is_empty() && out.flush().is_err() {
            return;
        }
    }
    let _ = out.flush();
}

/// The bytes of the `"id":` value (up to the next `,` or `}`), found by a plain scan.
fn raw_id(line: &[u8]) -> Option<&[u8]> {
    let start = find(line, b"\"id\":")? + 5;
    let rest = &line[start..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}')?;
    Some(rest[..end].trim_ascii())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------
// The driver.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Mcp,
    /// The same server with one pass-through middleware layer.
    Layer,
    /// serde_json's floor: decode and encode, no MCP work.
    Floor,
    Raw,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Mcp => "mcp",
            Kind::Layer => "mcp+mw",
            Kind::Floor => "floor",
            Kind::Raw => "raw",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            Kind::Mcp => "--serve-mcp",
            Kind::Layer => "--serve-mcp-layer",
            Kind::Floor => "--serve-floor",
            Kind::Raw => "--serve-raw",
        }
    }
}

struct Outcome {
    kind: Kind,
    in_flight: usize,
    calls: usize,
    per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
    mismatches: usize,
    peak_kib: Option<u64>,
    /// The server's CPU time per call in the window, µs.
    cpu_us: Option<f64>,
}

fn env_secs(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(default)
}

fn drive() {
    let secs = env_secs("BENCH_SECS", 3.0);
    let warmup = env_secs("BENCH_WARMUP_SECS", 0.5);
    let exe = std::env::current_exe().expect("current_exe");
    println!(
        "stdio transport benchmark: {secs} s per configuration after {warmup} s of warm-up \
         (BENCH_SECS, BENCH_WARMUP_SECS)"
    );
    if stateless() {
        println!("era: 2026-07-28 (BENCH_ERA): no handshake, `_meta` on every call");
    }

    let startups: Vec<Duration> = (0..5).map(|_| startup_time(&exe)).collect();
    let startup_median = median(&startups);
    println!(
        "mcp start-up (spawn -> initialize response), 5 spawns: median {:.2} ms (all: {})",
        ms(startup_median),
        startups
            .iter()
            .map(|d| format!("{:.2}", ms(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let mut outcomes = Vec::new();
    for in_flight in [1, 32] {
        for kind in [Kind::Mcp, Kind::Layer, Kind::Floor, Kind::Raw] {
            let o = run(
                &exe,
                kind,
                in_flight,
                Duration::from_secs_f64(warmup),
                Duration::from_secs_f64(secs),
            );
            println!(
                "  {} inflight={:<2} {:>9.0} calls/s  {:>6} us CPU/call  p50 {:>7.1} us  p99 {:>7.1} us  ({} calls)",
                kind.name(),
                in_flight,
                o.per_sec,
                or_unknown(o.cpu_us, 2),
                o.p50_us,
                o.p99_us,
                o.calls
            );
            outcomes.push(o);
        }
    }

    println!();
    println!(
        "{:<7} {:>8} {:>10} {:>12} {:>8} {:>8} {:>9} {:>10} {:>10}",
        "server",
        "inflight",
        "calls/s",
        "cpu_us/call",
        "p50_us",
        "p99_us",
        "max_us",
        "peak_mem",
        "mismatch"
    );
    for o in &outcomes {
        let peak = o.peak_kib.map_or_else(
            || "?".to_owned(),
            |k| format!("{:.1} MiB", k as f64 / 1024.0),
        );
        println!(
            "{:<7} {:>8} {:>10.0} {:>12} {:>8.1} {:>8.1} {:>9.0} {:>10} {:>10}",
            o.kind.name(),
            o.in_flight,
            o.per_sec,
            or_unknown(o.cpu_us, 2),
            o.p50_us,
            o.p99_us,
            o.max_us,
            peak,
            o.mismatches
        );
    }
    println!();
    for in_flight in [1, 32] {
        let get = |k: Kind| {
            outcomes
                .iter()
                .find(|o| o.kind == k && o.in_flight == in_flight)
        };
        if let (Some(m), Some(r)) = (get(Kind::Mcp), get(Kind::Raw)) {
            let cpu = m.cpu_us.zip(r.cpu_us).map(|(m, r)| m / r);
            println!(
                "mcp/raw at {in_flight:>2} in flight: {:.2} calls/s, {} CPU/call",
                m.per_sec / r.per_sec,
                or_unknown(cpu, 2)
            );
        }
        if let (Some(m), Some(f), Some(r)) = (get(Kind::Mcp), get(Kind::Floor), get(Kind::Raw)) {
            let ratio =
                |a: Option<f64>, b: Option<f64>| or_unknown(a.zip(b).map(|(a, b)| a / b), 2);
            println!(
                "serde_json's floor at {in_flight:>2} in flight: floor/raw {} CPU/call, mcp/floor {}",
                ratio(f.cpu_us, r.cpu_us),
                ratio(m.cpu_us, f.cpu_us)
            );
        }
        if let (Some(m), Some(l)) = (get(Kind::Mcp), get(Kind::Layer)) {
            let cpu = l.cpu_us.zip(m.cpu_us).map(|(l, m)| l / m);
            println!(
                "one pass-through middleware layer at {in_flight:>2} in flight: {} CPU/call of the server without",
                or_unknown(cpu, 2)
            );
        }
    }
    println!("mcp start-up: {:.2} ms (median of 5)", ms(startup_median));
    let bad: usize = outcomes.iter().map(|o| o.mismatches).sum();
    if bad > 0 {
        println!(
            "WARNING: {bad} responses did not contain {}",
            String::from_utf8_lossy(EXPECTED)
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn spawn(exe: &std::path::Path, kind: Kind) -> (Child, ChildStdin, ChildStdout) {
    let mut child = Command::new(exe)
        .arg(kind.flag())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the server");
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    (child, stdin, stdout)
}

/// Closes nothing itself: the caller has dropped stdin. Waits up to 10 s, then kills.
fn finish(mut child: Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    eprintln!("{what}: exited with {status}");
                }
                return;
            }
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                eprintln!("{what}: still running 10 s after its stdin closed; killing it");
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
            Err(e) => {
                eprintln!("{what}: wait failed: {e}");
                return;
            }
        }
    }
}

/// Sends `initialize`, waits for its response, sends `notifications/initialized`.
fn handshake(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>) {
    writeln!(stdin, "{INITIALIZE}").expect("send initialize");
    stdin.flush().expect("flush");
    let mut line = String::new();
    stdout
        .read_line(&mut line)
        .expect("read the initialize response");
    assert!(
        line.contains("\"result\""),
        "bad initialize response: {line}"
    );
    writeln!(stdin, "{INITIALIZED}").expect("send initialized");
    stdin.flush().expect("flush");
}

fn startup_time(exe: &std::path::Path) -> Duration {
    let start = Instant::now();
    let (child, mut stdin, stdout) = spawn(exe, Kind::Mcp);
    writeln!(stdin, "{INITIALIZE}").expect("send initialize");
    stdin.flush().expect("flush");
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    stdout
        .read_line(&mut line)
        .expect("read the initialize response");
    let elapsed = start.elapsed();
    assert!(
        line.contains("\"result\""),
        "bad initialize response: {line}"
    );
    drop(stdin);
    finish(child, "mcp server (start-up)");
    elapsed
}

fn peak_memory_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Send times of the requests in flight, by id.
type SendTimes = Arc<Mutex<HashMap<u64, Instant>>>;

fn run(
    exe: &std::path::Path,
    kind: Kind,
    in_flight: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    let (child, mut stdin, stdout) = spawn(exe, kind);
    let mut stdout = BufReader::with_capacity(64 * 1024, stdout);
    if !stateless() {
        handshake(&mut stdin, &mut stdout);
    }

    let sent_at: SendTimes = Arc::new(Mutex::new(HashMap::with_capacity(in_flight * 2)));
    // The reader grants the writer one request per response received, a batch per read.
    let (credit_tx, credit_rx) = mpsc::channel::<usize>();

    let writer = {
        let sent_at = sent_at.clone();
        thread::Builder::new()
            .name("bench-writer".into())
            .spawn(move || write_requests(stdin, in_flight, credit_rx, sent_at))
            .expect("spawn the writer")
    };

    let start = Instant::now();
    let window = (start + warmup, start + warmup + measure);
    let reader = {
        let sent_at = sent_at.clone();
        thread::Builder::new()
            .name("bench-reader".into())
            .spawn(move || read_responses(stdout, in_flight, credit_tx, sent_at, window))
            .expect("spawn the reader")
    };

    // The server's CPU time over the window in which the reader counts responses.
    thread::sleep(window.0.saturating_duration_since(Instant::now()));
    let ((), cpu) = CpuUse::around(child.id(), || {
        thread::sleep(window.1.saturating_duration_since(Instant::now()));
    });
    if let Some(cpu) = cpu {
        cpu.warn_if_incomplete(kind.name());
    }

    let stats = reader.join().expect("reader thread");
    let stdin = writer.join().expect("writer thread");
    let peak_kib = peak_memory_kib(child.id());
    drop(stdin);
    finish(child, kind.flag());

    let mut lat = stats.latencies_ns;
    lat.sort_unstable();
    let pct = |p: usize| -> f64 {
        if lat.is_empty() {
            return f64::NAN;
        }
        lat[(lat.len() * p / 100).min(lat.len() - 1)] as f64 / 1e3
    };
    let elapsed = measure.as_secs_f64();
    Outcome {
        kind,
        in_flight,
        calls: lat.len(),
        per_sec: lat.len() as f64 / elapsed,
        p50_us: pct(50),
        p99_us: pct(99),
        max_us: lat.last().map_or(f64::NAN, |&n| n as f64 / 1e3),
        mismatches: stats.mismatches,
        peak_kib,
        cpu_us: cpu.and_then(|c| c.us_per_call(lat.len())),
    }
}

/// Sends `in_flight` requests, then one more per credit, batching whatever credits are ready
/// into one write. Returns stdin (still open) once the reader stops granting credits.
fn write_requests(
    stdin: ChildStdin,
    in_flight: usize,
    credits: mpsc::Receiver<usize>,
    sent_at: SendTimes,
) -> ChildStdin {
    let mut out = BufWriter::with_capacity(64 * 1024, stdin);
    let mut next_id = FIRST_ID;
    let tail = if stateless() {
        CALL_TAIL_2026
    } else {
        CALL_TAIL
    };
    let mut send = |n: usize, out: &mut BufWriter<ChildStdin>| -> io::Result<()> {
        let now = Instant::now();
        {
            let mut map = sent_at.lock().unwrap();
            for id in next_id..next_id + n as u64 {
                map.insert(id, now);
            }
        }
        for _ in 0..n {
            out.write_all(CALL_HEAD)?;
            write!(out, "{next_id}")?;
            out.write_all(tail)?;
            out.write_all(b"\n")?;
            next_id += 1;
        }
        out.flush()
    };
    if let Err(e) = send(in_flight, &mut out) {
        eprintln!("writer: {e}");
    }
    while let Ok(mut n) = credits.recv() {
        while let Ok(more) = credits.try_recv() {
            n += more;
        }
        if let Err(e) = send(n, &mut out) {
            eprintln!("writer: {e}");
            break;
        }
    }
    out.into_inner()
        .map_err(|e| e.into_error())
        .expect("flush stdin")
}

struct ReadStats {
    latencies_ns: Vec<u64>,
    mismatches: usize,
}

/// Reads responses until every request the writer was allowed to send has been answered.
/// Credits stop at the end of the measurement window, so exactly `in_flight + credits` requests
/// are ever sent.
fn read_responses(
    mut stdout: BufReader<ChildStdout>,
    in_flight: usize,
    credits: mpsc::Sender<usize>,
    sent_at: SendTimes,
    (from, to): (Instant, Instant),
) -> ReadStats {
    let mut latencies_ns = Vec::with_capacity(1 << 20);
    let mut mismatches = 0usize;
    let mut granted = 0usize;
    let mut received = 0usize;
    let mut granting = true;
    let mut pending: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut ids: Vec<u64> = Vec::with_capacity(1024);
    let mut unmatched = 0usize;
    while received < in_flight + granted {
        let n = match stdout.read(&mut chunk) {
            Ok(0) => {
                eprintln!(
                    "reader: the server closed its stdout with {} responses missing",
                    in_flight + granted - received
                );
                break;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("reader: {e}");
                break;
            }
        };
        let now = Instant::now();
        pending.extend_from_slice(&chunk[..n]);
        ids.clear();
        let mut consumed = 0;
        while let Some(len) = pending[consumed..].iter().position(|&b| b == b'\n') {
            let line = &pending[consumed..consumed + len];
            consumed += len + 1;
            let Some(id) = response_id(line) else {
                // Counted as an answer all the same, so the run cannot wait for it forever.
                mismatches += 1;
                unmatched += 1;
                eprintln!(
                    "reader: a response without a numeric id: {}",
                    String::from_utf8_lossy(line)
                );
                continue;
            };
            ids.push(id);
            if find(line, EXPECTED).is_none() {
                mismatches += 1;
                if mismatches <= 5 {
                    eprintln!("reader: wrong answer: {}", String::from_utf8_lossy(line));
                }
            }
        }
        pending.drain(..consumed);
        received += ids.len() + unmatched;
        unmatched = 0;
        if ids.is_empty() {
            continue;
        }
        let in_window = now >= from && now <= to;
        {
            let mut map = sent_at.lock().unwrap();
            for id in &ids {
                match map.remove(id) {
                    Some(sent) if in_window => latencies_ns.push((now - sent).as_nanos() as u64),
                    Some(_) => {}
                    None => {
                        mismatches += 1;
                        eprintln!("reader: a response to id {id}, which is not in flight");
                    }
                }
            }
        }
        if granting {
            if now <= to {
                granted += ids.len();
                let _ = credits.send(ids.len());
            } else {
                granting = false;
            }
        }
    }
    drop(credits);
    ReadStats {
        latencies_ns,
        mismatches,
    }
}

/// The numeric `"id":` of a response line.
fn response_id(line: &[u8]) -> Option<u64> {
    let digits = raw_id(line)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}
