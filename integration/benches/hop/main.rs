//! The proxy hop on loopback (issue 29 §4): `cargo bench -p mcp-integration --bench hop`.
//!
//! A measurement, not a test: it prints numbers and asserts nothing about them. In one run it
//! drives the framework's `add` tool (the server of benches/stdio.rs and benches/http.rs) four
//! ways, in both protocol eras (the session era and 2026-07-28, as the driver speaks them):
//!
//! - `stdio`: the driver → the upstream over stdio, alone;
//! - `http`: the driver → the upstream over Streamable HTTP, alone;
//! - `http>bridge>stdio`: the driver → `mcp-bridge serve --http ADDR -- UPSTREAM` over HTTP →
//!   the stdio upstream (a stdio server exposed over HTTP);
//! - `stdio>bridge>http`: the driver → `mcp-bridge connect URL` over stdio → the HTTP upstream
//!   (a remote server exposed over stdio).
//!
//! The driver keeps N `tools/call add {a:2,b:3}` in flight (1 and 32; `HOP_IN_FLIGHT=32` for
//! one of them): over stdio pipelined on one pipe as benches/stdio.rs does, over HTTP one
//! keep-alive connection and thread per request in flight as benches/http.rs does. It warms up
//! for `BENCH_WARMUP_SECS` (0.5), then measures for `BENCH_SECS` (3): calls/s, p50 and p99 of
//! send → answer, every answer checked, and the CPU time per call of the upstream and of the
//! bridge, each from its threads' `/proc/PID/task/*/schedstat` at both ends of the window (see
//! `common`). The bridge's CPU per call is what the hop adds to the servers' work; the added
//! p50 is the hop's p50 less the upstream's own (over the upstream's transport, and over the
//! transport the driver speaks to the bridge). `BENCH_ROUNDS` (3) rounds run one after the
//! other, each with every configuration; the summary gives each figure's median over them.
//! `HOP_PATHS` and `HOP_ERAS` (comma-separated names, as printed) run only some of them (to
//! profile one: `perf record -g -p PID` on the bridge while it runs), and `HOP_BRIDGE_PREFIX`
//! runs the bridge under a command (`valgrind --tool=callgrind`: instructions per call do not
//! move with the machine's load, as time does).
//!
//! The binary plays every part: `--serve-stdio` and `--serve-http` are the upstream (the
//! latter prints `PORT n`), and with `HOP_ROLE=bridge` it is examples/bridge (compiled in, in
//! the bench profile, with its own command line), which speaks to the upstream in the era it
//! probes (2026-07-28: the upstream serves it).

#[allow(dead_code)]
#[path = "../../../examples/bridge/src/main.rs"]
mod bridge;
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod http_load;
mod stdio_load;

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::{CpuSample, CpuUse, or_unknown};
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

/// What every correct `add(2, 3)` answer contains.
pub(crate) const EXPECTED: &[u8] = br#""structuredContent":{"result":5}"#;

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("--serve-stdio") => return serve_stdio(),
        Some("--serve-http") => return serve_http(),
        _ => {}
    }
    if std::env::var_os("HOP_ROLE").is_some_and(|r| r == "bridge") {
        std::process::exit(match bridge::main() {
            std::process::ExitCode::SUCCESS => 0,
            _ => 2,
        });
    }
    drive();
}

// ---------------------------------------------------------------------------------------------
// The upstream.

fn upstream() -> mcp_runtime::Server {
    mcp_runtime::Server::builder()
        .name("bench")
        .version("0")
        .build()
        .expect("the server builds")
}

fn serve_stdio() {
    if let Err(e) = upstream().run(mcp_runtime::Transport::Stdio) {
        eprintln!("stdio upstream: {e}");
        std::process::exit(1);
    }
}

fn serve_http() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            println!("PORT {}", listener.local_addr().unwrap().port());
            let config = mcp_runtime::transport::HttpConfig::default();
            mcp_runtime::transport::serve_http_on(upstream(), listener, config)
                .await
                .expect("serve");
        });
}

// ---------------------------------------------------------------------------------------------
// What the drivers share.

/// The protocol era the driver speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize`, then calls in the session (2025-06-18 over stdio, 2025-11-25 over HTTP).
    Session,
    /// 2026-07-28: no handshake; `_meta` (and over HTTP the `Mcp-*` headers) on every call.
    Stateless,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Session => "session",
            Era::Stateless => "2026-07-28",
        }
    }
}

/// The warm-up and the measurement window.
#[derive(Clone, Copy)]
pub(crate) struct Window {
    pub warmup: Duration,
    pub secs: Duration,
}

/// What one load measured.
pub(crate) struct Load {
    calls: usize,
    per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    mismatches: usize,
    /// The CPU each process of `pids` used in the window.
    cpu: Vec<Option<CpuUse>>,
}

impl Load {
    pub(crate) fn new(
        mut latencies_ns: Vec<u64>,
        mismatches: usize,
        elapsed: Duration,
        cpu: Vec<Option<CpuUse>>,
    ) -> Load {
        latencies_ns.sort_unstable();
        let pct = |p: usize| {
            let n = latencies_ns.len();
            if n == 0 {
                return f64::NAN;
            }
            latencies_ns[(n * p / 100).min(n - 1)] as f64 / 1e3
        };
        Load {
            calls: latencies_ns.len(),
            per_sec: latencies_ns.len() as f64 / elapsed.as_secs_f64(),
            p50_us: pct(50),
            p99_us: pct(99),
            mismatches,
            cpu,
        }
    }

    /// CPU µs per call of the `i`th process sampled.
    fn cpu_us(&self, i: usize) -> Option<f64> {
        self.cpu
            .get(i)
            .copied()
            .flatten()
            .and_then(|c| c.us_per_call(self.calls))
    }
}

/// Runs `during`, with the CPU of each of `pids` sampled before and after.
pub(crate) fn around<T>(pids: &[u32], during: impl FnOnce() -> T) -> (T, Vec<Option<CpuUse>>) {
    let start: Vec<_> = pids.iter().map(|&p| CpuSample::take(p)).collect();
    let result = during();
    let cpu = pids
        .iter()
        .zip(start)
        .map(|(&pid, start)| {
            let end = CpuSample::take(pid)?;
            let used = end.since(&start?);
            used.warn_if_incomplete(&format!("process {pid}"));
            Some(used)
        })
        .collect();
    (result, cpu)
}

// ---------------------------------------------------------------------------------------------
// The four paths.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// The driver → the upstream, over stdio.
    Stdio,
    /// The driver → the upstream, over HTTP.
    Http,
    /// The driver → `mcp-bridge serve` over HTTP → the upstream over stdio.
    HttpBridgeStdio,
    /// The driver → `mcp-bridge connect` over stdio → the upstream over HTTP.
    StdioBridgeHttp,
}

const PATHS: [Path; 4] = [
    Path::Stdio,
    Path::Http,
    Path::HttpBridgeStdio,
    Path::StdioBridgeHttp,
];

impl Path {
    fn name(self) -> &'static str {
        match self {
            Path::Stdio => "stdio",
            Path::Http => "http",
            Path::HttpBridgeStdio => "http>bridge>stdio",
            Path::StdioBridgeHttp => "stdio>bridge>http",
        }
    }

    /// For a hop: the upstream alone (over the upstream's transport), and the upstream
    /// served natively on the transport the driver speaks to the bridge.
    fn baselines(self) -> Option<(Path, Path)> {
        match self {
            Path::HttpBridgeStdio => Some((Path::Stdio, Path::Http)),
            Path::StdioBridgeHttp => Some((Path::Http, Path::Stdio)),
            Path::Stdio | Path::Http => None,
        }
    }
}

/// One configuration's figures.
struct Outcome {
    load: Load,
    /// CPU µs per call of the upstream, and of the bridge (hops only).
    upstream_cpu: Option<f64>,
    bridge_cpu: Option<f64>,
    /// The bridge's peak resident memory (hops only), KiB.
    bridge_peak_kib: Option<u64>,
}

fn command(exe: &std::path::Path) -> Command {
    let mut c = Command::new(exe);
    c.env("RUST_LOG", "warn").env_remove("HOP_ROLE");
    c
}

/// The bridge: this binary with `HOP_ROLE=bridge`, under the command `HOP_BRIDGE_PREFIX`
/// gives (a profiler: `valgrind --tool=callgrind`), if any.
fn bridge_command(exe: &std::path::Path) -> Command {
    let prefix = std::env::var("HOP_BRIDGE_PREFIX").unwrap_or_default();
    let mut prefix = prefix.split_whitespace();
    let mut c = match prefix.next() {
        Some(program) => {
            let mut c = Command::new(program);
            c.args(prefix).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    c.env("RUST_LOG", "warn").env("HOP_ROLE", "bridge");
    c
}

/// Starts the HTTP upstream; returns it and its port.
fn start_http_upstream(exe: &std::path::Path) -> (Killed, u16) {
    let mut child = command(exe)
        .arg("--serve-http")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the HTTP upstream starts");
    let port = http_load::read_port(child.stdout.take().unwrap());
    (Killed(child), port)
}

/// A child killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Closes nothing itself: the caller has dropped the child's stdin. Waits up to 10 s for
/// it to exit, then kills it.
fn finish(mut child: Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            _ => {
                eprintln!("{what}: still running 10 s after its stdin closed; killing it");
                let _ = child.kill();
                let _ = child.wait();
                return;
            }
        }
    }
}

/// The processes `pid`'s threads started.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn measure(
    exe: &std::path::Path,
    path: Path,
    era: Era,
    in_flight: usize,
    window: Window,
) -> Outcome {
    let piped = |c: &mut Command| {
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts")
    };
    match path {
        Path::Stdio => {
            let mut child = piped(command(exe).arg("--serve-stdio"));
            let pid = child.id();
            let (load, stdin) = stdio_load::load(&mut child, era, in_flight, window, &[pid]);
            drop(stdin);
            finish(child, "the stdio upstream");
            Outcome {
                upstream_cpu: load.cpu_us(0),
                bridge_cpu: None,
                bridge_peak_kib: None,
                load,
            }
        }
        Path::Http => {
            let (upstream, port) = start_http_upstream(exe);
            let load = http_load::load(port, era, in_flight, window, &[upstream.0.id()]);
            Outcome {
                upstream_cpu: load.cpu_us(0),
                bridge_cpu: None,
                bridge_peak_kib: None,
                load,
            }
        }
        Path::HttpBridgeStdio => {
            let port = free_port();
            let bridge = bridge_command(exe)
                .args(["serve", "--http", &format!("127.0.0.1:{port}"), "--"])
                .arg(exe)
                .arg("--serve-stdio")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("the bridge starts");
            let bridge = Killed(bridge);
            assert!(
                http_load::wait_listening(port, Duration::from_secs(30)),
                "the bridge never listened on {port}"
            );
            let upstream = children(bridge.0.id());
            let [upstream] = upstream[..] else {
                panic!("the bridge should have one child, has {upstream:?}");
            };
            let load = http_load::load(port, era, in_flight, window, &[upstream, bridge.0.id()]);
            let bridge_peak_kib = peak_kib(bridge.0.id());
            drop(bridge);
            Outcome {
                upstream_cpu: load.cpu_us(0),
                bridge_cpu: load.cpu_us(1),
                bridge_peak_kib,
                load,
            }
        }
        Path::StdioBridgeHttp => {
            let (upstream, port) = start_http_upstream(exe);
            let mut bridge = piped(
                bridge_command(exe)
                    .arg("connect")
                    .arg(format!("http://127.0.0.1:{port}/mcp")),
            );
            let pids = [upstream.0.id(), bridge.id()];
            let (load, stdin) = stdio_load::load(&mut bridge, era, in_flight, window, &pids);
            let bridge_peak_kib = peak_kib(bridge.id());
            drop(stdin);
            finish(bridge, "the bridge");
            drop(upstream);
            Outcome {
                upstream_cpu: load.cpu_us(0),
                bridge_cpu: load.cpu_us(1),
                bridge_peak_kib,
                load,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The driver.

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(default)
}

/// Whether `name` is in the comma-separated list `var` (everything, without it).
fn chosen(var: &str, name: &str) -> bool {
    std::env::var(var).map_or(true, |v| v.split(',').any(|n| n.trim() == name))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// One configuration of one round.
struct Row {
    round: usize,
    era: Era,
    in_flight: usize,
    path: Path,
    outcome: Outcome,
}

fn drive() {
    let window = Window {
        warmup: Duration::from_secs_f64(env_f64("BENCH_WARMUP_SECS", 0.5)),
        secs: Duration::from_secs_f64(env_f64("BENCH_SECS", 3.0)),
    };
    let rounds = env_f64("BENCH_ROUNDS", 3.0) as usize;
    let in_flights: Vec<usize> = std::env::var("HOP_IN_FLIGHT")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![1, 32]);
    let exe = std::env::current_exe().expect("current_exe");
    println!(
        "proxy hop benchmark: {rounds} round(s) (BENCH_ROUNDS), {:?} per configuration after \
         {:?} of warm-up (BENCH_SECS, BENCH_WARMUP_SECS), in flight {in_flights:?} (HOP_IN_FLIGHT)",
        window.secs, window.warmup
    );
    println!(
        "cpu: µs of CPU per call in the window; up = the upstream, bridge = mcp-bridge (what the \
         hop adds)"
    );
    let mut rows = Vec::new();
    for round in 1..=rounds {
        println!();
        println!("round {round}, load average {}", load_average());
        print_header();
        for era in [Era::Session, Era::Stateless] {
            if !chosen("HOP_ERAS", era.name()) {
                continue;
            }
            for &in_flight in &in_flights {
                for path in PATHS.into_iter().filter(|p| chosen("HOP_PATHS", p.name())) {
                    let outcome = measure(&exe, path, era, in_flight, window);
                    let row = Row {
                        round,
                        era,
                        in_flight,
                        path,
                        outcome,
                    };
                    print_row(&row);
                    rows.push(row);
                }
            }
        }
        println!("load average after round {round}: {}", load_average());
    }
    summary(&rows, &in_flights);
}

fn print_header() {
    println!(
        "{:<10} {:>4} {:<18} {:>9} {:>9} {:>9} {:>8} {:>10} {:>10} {:>8}",
        "era",
        "n",
        "path",
        "calls/s",
        "p50_us",
        "p99_us",
        "up_cpu",
        "bridge_cpu",
        "bridge_mem",
        "mismatch"
    );
}

fn print_row(r: &Row) {
    let o = &r.outcome;
    println!(
        "{:<10} {:>4} {:<18} {:>9.0} {:>9.1} {:>9.1} {:>8} {:>10} {:>10} {:>8}",
        r.era.name(),
        r.in_flight,
        r.path.name(),
        o.load.per_sec,
        o.load.p50_us,
        o.load.p99_us,
        or_unknown(o.upstream_cpu, 2),
        or_unknown(o.bridge_cpu, 2),
        o.bridge_peak_kib
            .map_or_else(|| "-".to_owned(), |k| format!("{:.1}M", k as f64 / 1024.0)),
        o.load.mismatches
    );
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Each figure's median over the rounds, and the hops against their baselines (each round's
/// difference or ratio, then the median of those).
fn summary(rows: &[Row], in_flights: &[usize]) {
    let find = |round: usize, era: Era, n: usize, path: Path| {
        rows.iter()
            .find(|r| r.round == round && r.era == era && r.in_flight == n && r.path == path)
            .map(|r| &r.outcome)
    };
    let rounds = rows.iter().map(|r| r.round).max().unwrap_or(0);
    // The median over the rounds of `f` on (hop, baseline).
    let over = |era, n, path, f: &dyn Fn(&Outcome) -> Option<f64>| {
        median(
            (1..=rounds)
                .filter_map(|round| find(round, era, n, path).and_then(f))
                .collect(),
        )
    };
    let against = |era, n, path, base, f: &dyn Fn(&Outcome, &Outcome) -> Option<f64>| {
        median(
            (1..=rounds)
                .filter_map(|round| f(find(round, era, n, path)?, find(round, era, n, base)?))
                .collect(),
        )
    };
    println!();
    println!("median of {rounds} round(s):");
    println!(
        "{:<10} {:>4} {:<18} {:>9} {:>9} {:>9} {:>8} {:>10} {:>11} {:>10} {:>11} {:>10}",
        "era",
        "n",
        "path",
        "calls/s",
        "p50_us",
        "p99_us",
        "up_cpu",
        "bridge_cpu",
        "+p50_alone",
        "p50/alone",
        "+p50_native",
        "+cpu_total"
    );
    let mismatches: usize = rows.iter().map(|r| r.outcome.load.mismatches).sum();
    for era in [Era::Session, Era::Stateless] {
        for &n in in_flights {
            for path in PATHS {
                if !rows
                    .iter()
                    .any(|r| r.era == era && r.in_flight == n && r.path == path)
                {
                    continue;
                }
                let stat = |f: fn(&Outcome) -> f64| over(era, n, path, &|o| Some(f(o)));
                let mut line = format!(
                    "{:<10} {:>4} {:<18} {:>9} {:>9} {:>9} {:>8} {:>10}",
                    era.name(),
                    n,
                    path.name(),
                    or_unknown(stat(|o| o.load.per_sec), 0),
                    or_unknown(stat(|o| o.load.p50_us), 1),
                    or_unknown(stat(|o| o.load.p99_us), 1),
                    or_unknown(over(era, n, path, &|o| o.upstream_cpu), 2),
                    or_unknown(over(era, n, path, &|o| o.bridge_cpu), 2),
                );
                if let Some((alone, native)) = path.baselines() {
                    let p50 = |h: &Outcome, b: &Outcome| Some(h.load.p50_us - b.load.p50_us);
                    let ratio = |h: &Outcome, b: &Outcome| Some(h.load.p50_us / b.load.p50_us);
                    // Both processes' CPU per call on the hop, less the upstream's alone.
                    let total = |h: &Outcome, b: &Outcome| {
                        Some(h.upstream_cpu? + h.bridge_cpu? - b.upstream_cpu?)
                    };
                    line += &format!(
                        " {:>11} {:>10} {:>11} {:>10}",
                        or_unknown(against(era, n, path, alone, &p50), 1),
                        or_unknown(against(era, n, path, alone, &ratio), 2),
                        or_unknown(against(era, n, path, native, &p50), 1),
                        or_unknown(against(era, n, path, alone, &total), 2),
                    );
                }
                println!("{line}");
            }
        }
    }
    println!(
        "+p50_alone: the hop's p50 less the upstream's over its own transport (same round); \
         p50/alone: their ratio; +p50_native: less the upstream's served on the driver's \
         transport; +cpu_total: upstream + bridge CPU per call on the hop, less the upstream's \
         alone"
    );
    println!("goals (issue 29 §4, at 32 in flight): bridge_cpu <= 30 us/call, p50/alone <= 2");
    if mismatches > 0 {
        println!("WARNING: {mismatches} answers were wrong or missing (see above)");
    }
}
