//! The hostile-server corpus for the client (issue #27 §1), as `tests/bad_input/` is for the
//! server: every behaviour in `tests/hostile/*.json` (one file each; the format is in
//! `tests/hostile/README.md`) is played by one scriptable peer (`mcp_integration::hostile`) on
//! each transport it applies to: stdio (the `hostile_peer` binary as the client's child),
//! Streamable HTTP and HTTP+SSE (a loopback listener in this process writing raw HTTP bytes).
//! The peer answers like a well-behaved server except for the one request the case is about.
//!
//! Each run checks that the client's call ends with the expected outcome (a `ClientError` kind,
//! or success where ignoring the server's nonsense is right) within its deadline plus a slack,
//! that the client's heap stayed under the case's bound while the peer offered far more, that
//! no request carrying the client's `Authorization` or custom header reached another origin,
//! and that the next request succeeds: on the same connection when it is still healthy,
//! otherwise (the case kills the connection) the same client fails fast and a new one works.
//!
//! Every run has its own OS thread and current-thread tokio runtime, so all of the client's
//! allocations for that run happen on that thread: a counting global allocator keeps a heap
//! figure and its peak per thread, which is the client's memory for that run alone even while
//! other runs go on beside it. A watchdog reports a run that does not end as hung, rather than
//! letting it stall the test.
//!
//! `HOSTILE_CASE=name` runs the cases whose name contains `name`; `HOSTILE_VERBOSE=1` prints
//! every run's outcome, time and memory; `HOSTILE_JOBS` (default 4 per transport) runs that many
//! at once; `HOSTILE_SLACK_MS` (default 1500) is the time allowed past a deadline.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_integration::hostile::Script;
use mcp_integration::hostile::http::{HttpPeer, Transport as HttpTransport};
use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::{
    Client, ClientBuilder, ClientError, ElicitResult, ProtocolChoice, SampledMessage, Stderr,
};
use mcp_runtime::protocol::Role;
use serde_json::{Map, Value, json};

// ---- The client's memory: a heap figure per thread ----

struct Counting;

thread_local! {
    static HEAP: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) {
    let _ = HEAP.try_with(|heap| {
        let now = heap.get() + delta;
        heap.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to `System` unchanged; the bookkeeping only touches
// const-initialised thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// This thread's heap now; its peak starts again from here.
fn heap_mark() -> isize {
    let now = HEAP.with(Cell::get);
    PEAK.with(|p| p.set(now));
    now
}

fn heap_peak() -> isize {
    PEAK.with(Cell::get)
}

const MIB: f64 = 1024.0 * 1024.0;

// ---- The corpus ----

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hostile");
const PEER: &str = env!("CARGO_BIN_EXE_hostile_peer");
/// The client's limits in every run: small, so that a case that sends more than they allow
/// costs little time and memory (the defaults are 16 MiB, 100,000 items, 32 MiB and 16).
const MAX_MESSAGE: usize = 1 << 20;
const MAX_LIST_ITEMS: usize = 10_000;
const MAX_LIST_BYTES: usize = 4 << 20;
const MAX_SERVER_REQUESTS: usize = 8;
/// The client's timers in a case that does not expect a timeout (see [`Plan::request_timeout`]).
const ROOMY: Duration = Duration::from_secs(10);
/// What the client sends on every HTTP request, and must never send to another origin.
const AUTHORIZATION: &str = "Bearer hostile-corpus-secret";
const CUSTOM: (&str, &str) = ("X-Hostile-Custom", "hostile-corpus-custom");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
    Sse,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
        }
    }
}

/// What the client does in a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Connect,
    Ping,
    ListTools,
    CallTool,
    CallToolWithProgress,
    /// `tools/call` with a 4 MiB argument (a server that stops reading must not block it).
    CallBig,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum After {
    /// The same client's next request succeeds.
    Ok,
    /// The connection is dead: the same client's next request fails fast (not a timeout), and
    /// a new client works.
    Closed,
    /// The connection is wedged in a way the client cannot tell from a slow server (a stdio
    /// server that trickles forever or stopped reading): a new client works.
    New,
}

/// How the client answers the server's own requests (elicitation, sampling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asks {
    Answer,
    /// The handlers never return.
    Hang,
}

/// One case on one transport, ready to run.
#[derive(Clone, Debug)]
struct Plan {
    name: String,
    transport: Transport,
    script: Value,
    protocol: ProtocolChoice,
    op: Op,
    expect: Vec<String>,
    says: Option<String>,
    after: After,
    after_within: Duration,
    /// The case's deadline (`timeout_ms`).
    timeout: Duration,
    /// The client's timers: the case's own when it expects a timeout, [`ROOMY`] otherwise.
    request_timeout: Duration,
    connect_timeout: Duration,
    probe: Duration,
    budget: Duration,
    max_heap: f64,
    asks: Asks,
    other_untouched: bool,
    pending: Option<String>,
}

fn load() -> Vec<(String, Map<String, Value>)> {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(DIR).expect("tests/hostile exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
        let Value::Object(map) = value else {
            panic!("{}: not an object", path.display());
        };
        cases.push((name, map));
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

/// Every key a case may have (`tests/hostile/README.md`).
const KEYS: &[&str] = &[
    "note",
    "ways",
    "protocol",
    "op",
    "on",
    "nth",
    "as",
    "head",
    "to",
    "steps",
    "expect",
    "says",
    "after",
    "after_within_ms",
    "timeout_ms",
    "budget_ms",
    "probe_ms",
    "connect_timeout_ms",
    "timed",
    "max_heap_mib",
    "asks",
    "other_origin",
    "stdio",
    "http",
    "sse",
    "pending",
];

fn slack() -> Duration {
    let ms = std::env::var("HOSTILE_SLACK_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    Duration::from_millis(ms)
}

/// The case as `transport` sees it (`None` when it does not apply there): the transport's
/// own object (`"stdio": {…}`) replaces the keys it names.
fn plan(
    name: &str,
    case: &Map<String, Value>,
    transport: Transport,
) -> Result<Option<Plan>, String> {
    let t = transport.name();
    if let Some(ways) = case.get("ways").and_then(Value::as_array)
        && !ways.iter().any(|w| w.as_str() == Some(t))
    {
        return Ok(None);
    }
    if !case.contains_key("note") {
        return Err("no `note` (why the outcome is right)".into());
    }
    let mut c = case.clone();
    if let Some(Value::Object(over)) = case.get(t) {
        for (k, v) in over {
            c.insert(k.clone(), v.clone());
        }
    }
    // A misspelt key would be ignored and the case would test something else.
    let overrides = ["stdio", "http", "sse"]
        .iter()
        .filter_map(|t| case.get(*t).and_then(Value::as_object));
    for key in case.keys().chain(overrides.flat_map(|o| o.keys())) {
        if !KEYS.contains(&key.as_str()) {
            return Err(format!("unknown key `{key}`"));
        }
    }
    let str_of = |key: &str| c.get(key).and_then(Value::as_str);
    let ms_of = |key: &str, default: u64| {
        Duration::from_millis(c.get(key).and_then(Value::as_u64).unwrap_or(default))
    };
    let protocol = match str_of("protocol").unwrap_or("session") {
        "session" => ProtocolChoice::Session(ProtocolVersion::V2025_11_25),
        "stateless" => ProtocolChoice::Stateless,
        "auto" => ProtocolChoice::Auto,
        other => return Err(format!("unknown protocol {other}")),
    };
    let on = str_of("on");
    let op = match str_of("op").or(on) {
        None | Some("ping") => Op::Ping,
        Some("connect" | "initialize" | "server/discover" | "GET") => Op::Connect,
        Some("list_tools" | "tools/list") => Op::ListTools,
        Some("call_tool" | "tools/call") => Op::CallTool,
        Some("call_tool_with_progress") => Op::CallToolWithProgress,
        Some("call_big") => Op::CallBig,
        Some(other) => return Err(format!("unknown op {other}")),
    };
    let expect = match c.get("expect") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => return Err("no `expect`".into()),
    };
    let after = match str_of("after").unwrap_or("ok") {
        "ok" => After::Ok,
        "closed" => After::Closed,
        "new" => After::New,
        other => return Err(format!("unknown after {other}")),
    };
    let timeout = ms_of("timeout_ms", 500);
    let probe = ms_of("probe_ms", 300);
    let default_budget = match op {
        Op::Connect => match protocol {
            ProtocolChoice::Stateless => timeout,
            ProtocolChoice::Auto => probe.max(timeout) + timeout * 2,
            _ => timeout * 2,
        },
        _ => timeout,
    };
    // The client's timers are what a case expecting a timeout (or marked `timed`) is about; in
    // the others a
    // timer only decides how long a loaded machine may take to deliver a prompt answer, so it
    // gets room (two CI runs failed when a 500 ms timer fired before the peer's answer or
    // close, at 3-16 ms when idle, reached the client). The deadline check (`budget`) still
    // holds each run to the case's own time.
    let about_timers = expect.iter().any(|w| matches("Timeout", w))
        || c.get("timed").and_then(Value::as_bool) == Some(true);
    let roomy = |t: Duration| if about_timers { t } else { t.max(ROOMY) };
    let connect_timeout = match op {
        Op::Connect => roomy(ms_of(
            "connect_timeout_ms",
            default_budget.as_millis() as u64,
        )),
        _ => ROOMY,
    };
    let pending = match c.get("pending") {
        Some(Value::String(why)) => Some(why.clone()),
        Some(Value::Object(by)) => by.get(t).and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    let script = Value::Object(c.clone());
    Script::from_json(&script)?;
    Ok(Some(Plan {
        name: name.to_owned(),
        transport,
        script,
        protocol,
        op,
        expect,
        says: str_of("says").map(str::to_owned),
        after,
        after_within: ms_of("after_within_ms", 0),
        timeout,
        request_timeout: roomy(timeout),
        connect_timeout,
        probe: roomy(probe),
        budget: c
            .get("budget_ms")
            .and_then(Value::as_u64)
            .map(Duration::from_millis)
            .unwrap_or(default_budget),
        max_heap: c.get("max_heap_mib").and_then(Value::as_f64).unwrap_or(8.0),
        asks: match str_of("asks") {
            Some("hang") => Asks::Hang,
            _ => Asks::Answer,
        },
        other_untouched: c.get("other_origin").and_then(Value::as_str) == Some("untouched"),
        pending,
    }))
}

// ---- Running one case ----

/// What a run measured (printed with `HOSTILE_VERBOSE`).
struct Report {
    outcome: String,
    elapsed: Duration,
    heap_mib: f64,
    offered: u64,
}

/// The peers of one HTTP run: the one under test and another origin.
struct HttpPeers {
    peer: HttpPeer,
    other: HttpPeer,
}

fn http_transport(t: Transport) -> HttpTransport {
    if t == Transport::Sse {
        HttpTransport::Legacy
    } else {
        HttpTransport::Streamable
    }
}

fn start_http(t: Transport, script: Script) -> Result<HttpPeers, String> {
    let peer = HttpPeer::start(script, http_transport(t)).map_err(|e| e.to_string())?;
    let other = HttpPeer::start(Script::healthy(), http_transport(t)).map_err(|e| e.to_string())?;
    peer.set_other(other.origin());
    Ok(HttpPeers { peer, other })
}

fn builder(p: &Plan) -> ClientBuilder {
    let mut b = Client::builder()
        .info("hostile-corpus", "1.0.0")
        .protocol(p.protocol)
        .request_timeout(p.request_timeout)
        .connect_timeout(p.connect_timeout)
        .probe_timeout(p.probe)
        .max_message_bytes(MAX_MESSAGE)
        .max_list_items(MAX_LIST_ITEMS)
        .max_list_bytes(MAX_LIST_BYTES)
        .max_server_requests(MAX_SERVER_REQUESTS);
    match p.asks {
        Asks::Answer => {
            b = b
                .on_elicitation(|_req| async { Ok(ElicitResult::decline()) })
                .on_sampling(|_params| async {
                    Ok(SampledMessage {
                        role: Role::Assistant,
                        content: json!({"type": "text", "text": "no"}),
                        model: "none".into(),
                        stop_reason: None,
                    })
                });
        }
        Asks::Hang => {
            b = b
                .on_elicitation(|_req| std::future::pending())
                .on_sampling(|_params| std::future::pending());
        }
    }
    if p.transport != Transport::Stdio {
        b = b
            .header("Authorization", AUTHORIZATION)
            .header(CUSTOM.0, CUSTOM.1);
    }
    b
}

async fn connect(
    p: &Plan,
    script: &Value,
    http: Option<&HttpPeers>,
) -> Result<Client, ClientError> {
    let b = builder(p);
    match (p.transport, http) {
        (Transport::Stdio, _) | (_, None) => {
            let mut command = tokio::process::Command::new(PEER);
            command.arg(script.to_string());
            b.stderr(Stderr::Capture).spawn(command).await
        }
        (Transport::Http, Some(h)) => b.connect(&h.peer.url()).await,
        (Transport::Sse, Some(h)) => b.connect_sse(&h.peer.url()).await,
    }
}

/// A handshake that is not what the case is about (the peer answers it well): tried three
/// times, so that a loaded machine missing the short deadline once is not a failure.
async fn handshake(
    p: &Plan,
    script: &Value,
    http: Option<&HttpPeers>,
) -> Result<Client, ClientError> {
    let mut tries = 0;
    loop {
        match connect(p, script, http).await {
            Err(ClientError::Timeout(_)) if tries < 2 => tries += 1,
            other => return other,
        }
    }
}

/// `big`: the arguments of [`Op::CallBig`], made before the clock and the heap count start.
async fn op(client: &Client, op: Op, big: &Value) -> Result<(), ClientError> {
    match op {
        Op::Connect | Op::Ping => client.ping().await,
        Op::ListTools => client.list_tools().await.map(drop),
        Op::CallTool => client.call_tool("echo", json!({})).await.map(drop),
        Op::CallToolWithProgress => client
            .call_tool_with_progress("echo", json!({}), |_| {})
            .await
            .map(drop),
        Op::CallBig => client.call_tool("echo", big).await.map(drop),
    }
}

fn kind(outcome: &Result<(), ClientError>) -> String {
    match outcome {
        Ok(()) => "ok".into(),
        Err(ClientError::Rpc(e)) => format!("Rpc {}", e.code.0),
        Err(ClientError::Status { status, .. }) => format!("Status {status}"),
        Err(e) => {
            let debug = format!("{e:?}");
            debug
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_owned()
        }
    }
}

/// Whether `got` (`"Status 500"`) is what `want` names (`"Status"` or `"Status 500"`).
fn matches(got: &str, want: &str) -> bool {
    got == want || got.starts_with(&format!("{want} "))
}

fn describe(outcome: &Result<(), ClientError>) -> String {
    match outcome {
        Ok(()) => "ok".into(),
        Err(e) => {
            let text = e.to_string();
            let clipped: String = text.chars().take(200).collect();
            format!("{} ({clipped})", kind(outcome))
        }
    }
}

/// Runs a case on a thread and runtime of its own; a run that does not end is reported hung.
fn run_watched(plan: &Plan) -> Result<Report, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = plan.clone();
    std::thread::Builder::new()
        .name(format!("{} [{}]", plan.name, plan.transport.name()))
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let result = runtime.block_on(run(&p));
            let _ = tx.send(result);
        })
        .expect("a thread");
    let limit = plan.budget * 2
        + plan.after_within
        + plan.request_timeout * 4
        + slack() * 2
        + Duration::from_secs(10);
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| Err(format!("hung: the run did not end within {limit:?}")))
}

async fn run(p: &Plan) -> Result<Report, String> {
    let script = Script::from_json(&p.script)?;
    let http = match p.transport {
        Transport::Stdio => None,
        t => Some(start_http(t, script)?),
    };
    let hung_after = p.budget + slack() + Duration::from_secs(5);
    let big = match p.op {
        Op::CallBig => json!({ "blob": "x".repeat(4 << 20) }),
        _ => Value::Null,
    };
    let base = heap_mark();
    let mut started = Instant::now();
    let (client, outcome) = if p.op == Op::Connect {
        match tokio::time::timeout(hung_after, connect(p, &p.script, http.as_ref())).await {
            Ok(Ok(client)) => (Some(client), Ok(())),
            Ok(Err(e)) => (None, Err(e)),
            Err(_) => {
                return Err(format!(
                    "hung: connecting did not end within {hung_after:?}"
                ));
            }
        }
    } else {
        let client = handshake(p, &p.script, http.as_ref())
            .await
            .map_err(|e| format!("the handshake before the case failed: {e}"))?;
        started = Instant::now();
        match tokio::time::timeout(hung_after, op(&client, p.op, &big)).await {
            Ok(outcome) => (Some(client), outcome),
            Err(_) => {
                return Err(format!(
                    "hung: {:?} did not end within {hung_after:?}",
                    p.op
                ));
            }
        }
    };
    let elapsed = started.elapsed();
    let heap_mib = (heap_peak() - base) as f64 / MIB;
    let offered = http.as_ref().map_or(0, |h| h.peer.written());
    let report = Report {
        outcome: describe(&outcome),
        elapsed,
        heap_mib,
        offered,
    };
    let mut problems = Vec::new();
    let got = kind(&outcome);
    if !p.expect.iter().any(|w| matches(&got, w)) {
        problems.push(format!("expected {:?}, got {}", p.expect, report.outcome));
    }
    if let (Some(says), Err(e)) = (&p.says, &outcome)
        && !e.to_string().to_lowercase().contains(&says.to_lowercase())
    {
        problems.push(format!("the error does not say {says:?}: {e}"));
    }
    if elapsed > p.budget + slack() {
        problems.push(format!(
            "took {} ms, past its deadline of {} ms (+{} ms slack)",
            elapsed.as_millis(),
            p.budget.as_millis(),
            slack().as_millis()
        ));
    }
    if heap_mib > p.max_heap {
        problems.push(format!(
            "the client's heap grew by {heap_mib:.1} MiB (bound {} MiB; the peer wrote {:.1} MiB)",
            p.max_heap,
            offered as f64 / MIB
        ));
    }
    // The next request.
    let next = match (&client, p.after) {
        (Some(client), After::Ok) => next_request(client, p.after_within).await,
        (Some(client), After::Closed) => {
            let t = Instant::now();
            let limit = p.timeout + slack();
            match tokio::time::timeout(limit, client.ping()).await {
                Ok(Err(ClientError::Timeout(_))) => Err(
                    "the dead connection's next request timed out instead of failing at once"
                        .into(),
                ),
                Ok(Err(_)) if t.elapsed() <= limit => fresh_client(p).await,
                Ok(Err(_)) => Err(format!(
                    "the dead connection's next request took {} ms to fail",
                    t.elapsed().as_millis()
                )),
                Ok(Ok(())) => {
                    Err("the connection was expected dead, but the next request succeeded".into())
                }
                Err(_) => Err(format!(
                    "the dead connection's next request did not fail within {limit:?}"
                )),
            }
        }
        (None, _) | (Some(_), After::New) => fresh_client(p).await,
    };
    if let Err(e) = next {
        problems.push(e);
    }
    if let Some(h) = &http {
        let seen = h.other.seen();
        if let Some(leak) = seen.iter().find(|s| {
            s.header("authorization").is_some()
                || s.header(&CUSTOM.0.to_ascii_lowercase()).is_some()
        }) {
            problems.push(format!(
                "the client sent its Authorization or custom header to another origin: {} {}",
                leak.method, leak.path
            ));
        } else if p.other_untouched && !seen.is_empty() {
            problems.push(format!(
                "the client sent {} request(s) to another origin (first {} {})",
                seen.len(),
                seen[0].method,
                seen[0].path
            ));
        }
    }
    drop(client);
    if problems.is_empty() {
        Ok(report)
    } else {
        Err(format!(
            "{} (outcome: {})",
            problems.join("; "),
            report.outcome
        ))
    }
}

/// The same client's next request succeeds (retried within `within`, for a peer that first
/// finishes what it was doing).
async fn next_request(client: &Client, within: Duration) -> Result<(), String> {
    let started = Instant::now();
    loop {
        match client.ping().await {
            Ok(()) => return Ok(()),
            Err(e) if started.elapsed() >= within => {
                return Err(format!(
                    "the next request on the same connection failed: {e}"
                ));
            }
            Err(_) => {}
        }
    }
}

/// A new client, on a well-behaved peer of the same transport, connects and is answered.
async fn fresh_client(p: &Plan) -> Result<(), String> {
    let healthy = json!({});
    let http = match p.transport {
        Transport::Stdio => None,
        t => Some(start_http(t, Script::healthy())?),
    };
    let client = handshake(p, &healthy, http.as_ref())
        .await
        .map_err(|e| format!("a new client on a healthy peer could not connect: {e}"))?;
    client
        .ping()
        .await
        .map_err(|e| format!("a new client on a healthy peer was not answered: {e}"))
}

// ---- The runs ----

fn run_transport(transport: Transport) {
    let cases = load();
    let filter = std::env::var("HOSTILE_CASE").ok();
    let verbose = std::env::var_os("HOSTILE_VERBOSE").is_some();
    let mut plans = Vec::new();
    let mut broken = Vec::new();
    for (name, case) in &cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        match plan(name, case, transport) {
            Ok(Some(p)) => plans.push(p),
            Ok(None) => {}
            Err(e) => broken.push(format!("{name}: {e}")),
        }
    }
    assert!(broken.is_empty(), "unreadable cases: {broken:#?}");
    let jobs = std::env::var("HOSTILE_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4usize);
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(plan) = plans.get(i) else { return };
                    let result = run_watched(plan);
                    if verbose {
                        let line = match &result {
                            Ok(r) => format!(
                                "{} [{}]: {} in {} ms, heap +{:.2} MiB, peer wrote {:.2} MiB\n",
                                plan.name,
                                transport.name(),
                                r.outcome,
                                r.elapsed.as_millis(),
                                r.heap_mib,
                                r.offered as f64 / MIB
                            ),
                            Err(e) => format!("{} [{}]: FAILED {e}\n", plan.name, transport.name()),
                        };
                        let _ = std::io::stderr().write_all(line.as_bytes());
                    }
                    results.lock().unwrap().push((i, result));
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let (mut failed, mut known, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
    for (i, result) in &results {
        let plan = &plans[*i];
        match (result, &plan.pending) {
            (Err(e), None) => failed.push(format!("{}: {e}", plan.name)),
            (Err(e), Some(why)) => known.push(format!("{} (pending: {why}): {e}", plan.name)),
            (Ok(_), Some(why)) => fixed.push(format!(
                "{} passes but is marked pending ({why}): remove the mark",
                plan.name
            )),
            (Ok(_), None) => {}
        }
    }
    failed.sort();
    known.sort();
    fixed.sort();
    let mut report = format!(
        "hostile corpus [{}]: {} runs, {} passed, {} failed, {} known failures (pending), {:.1} s\n",
        transport.name(),
        results.len(),
        results.iter().filter(|(_, r)| r.is_ok()).count(),
        failed.len(),
        known.len(),
        started.elapsed().as_secs_f64()
    );
    for k in &known {
        report.push_str(&format!("  PENDING {k}\n"));
    }
    for f in &fixed {
        report.push_str(&format!("  FIXED {f}\n"));
    }
    for f in &failed {
        report.push_str(&format!("  FAILED {f}\n"));
    }
    // Past the harness's capture: the summary and the pending cases show on every run.
    let _ = std::io::stderr().write_all(report.as_bytes());
    assert!(
        failed.is_empty() && fixed.is_empty(),
        "{} run(s) failed and {} pending run(s) now pass (see above)",
        failed.len(),
        fixed.len()
    );
}

#[test]
fn the_corpus_has_fifty_behaviours_and_every_transport_plays_most() {
    let cases = load();
    assert!(
        cases.len() >= 50,
        "issue #27 asks for at least 50 behaviours, there are {}",
        cases.len()
    );
    for t in [Transport::Stdio, Transport::Http, Transport::Sse] {
        let runs = cases
            .iter()
            .filter(|(name, c)| plan(name, c, t).ok().flatten().is_some())
            .count();
        assert!(runs >= 30, "only {runs} behaviours run on {}", t.name());
    }
    assert!(Path::new(DIR).join("README.md").exists());
}

#[test]
fn stdio() {
    run_transport(Transport::Stdio);
}

#[test]
fn streamable_http() {
    run_transport(Transport::Http);
}

#[test]
fn http_sse() {
    run_transport(Transport::Sse);
}
