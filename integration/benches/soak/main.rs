//! Load, soak and slow-client runs against the quickstart over Streamable HTTP:
//! `cargo bench -p mcp-integration --bench soak [-- SCENARIO…]`.
//!
//! A measurement, not a test: it prints figures (memory, CPU time per call, rates, how long the
//! server took to drop an abusive connection, whether a control client kept being answered) and
//! asserts nothing about them. Scenarios, each against a fresh server; these run by default:
//!
//! - `idle-sessions`: opens `SOAK_SESSIONS` (10,000) session-era sessions, then `SOAK_OVER`
//!   (100) more past the cap; memory per session, what happens at the cap, memory after DELETE;
//! - `calls`: `SOAK_CALLS` (1,000,000) `tools/call add` over `SOAK_CALL_SESSIONS` (100)
//!   sessions, resident memory sampled every `SOAK_SAMPLE_EVERY` (100,000) calls;
//!   `calls-stateless`: the same in the 2026-07-28 era (no sessions);
//! - `slow-sse`: `SOAK_SSE_CLIENTS` (1,000) session GET streams read one byte a second for
//!   `SOAK_HOLD_SECS` (20);
//! - `slow-legacy`: HTTP+SSE (2024-11-05) clients that never read their stream:
//!   `SOAK_LEGACY_CLIENTS` (100) posting `SOAK_LEGACY_POSTS` (1,000) `tools/list` each, then
//!   `SOAK_LEGACY_SLEEP_CLIENTS` (10) posting `SOAK_LEGACY_SLEEP_POSTS` (40,000)
//!   `tools/call sleep {ms:1}` each;
//! - `slowloris`: `SOAK_SLOWLORIS` (300) connections each that send nothing, send headers one
//!   byte a second, or send a body one byte a second, for up to `SOAK_SLOW_LIMIT_SECS` (45,
//!   past the server's 30 s body timeout);
//! - `disconnect`: `SOAK_DISCONNECTS` (1,100) clients of each kind that leave mid-response;
//! - `listens`: `SOAK_LISTENS` (1,024) + `SOAK_LISTENS_OVER` (8) 2026-07-28
//!   `subscriptions/listen` streams from one client.
//!
//! Run only when named (an hour at full size):
//!
//! - `idle-hour`: opens `SOAK_SESSIONS` (10,000) sessions as `idle-sessions` does and holds
//!   them for `SOAK_IDLE_HOLD_SECS` (3,600), each sending a `ping` every `SOAK_IDLE_PING_SECS`
//!   (300; the server ends a session after 30 min without a request), the sessions' pings
//!   spread evenly over that interval; the server's memory, threads and descriptors sampled
//!   every `SOAK_IDLE_SAMPLE_SECS` (60); the slope of its memory over the hold (least
//!   squares, KiB per hour), the pings that failed, and whether every session still answers.
//!
//! `SOAK_SMOKE=1` makes every size tiny (all default scenarios in ~20 s, `idle-hour` in ~5 s;
//! `scripts/test-all` runs the defaults with `cargo test -p mcp-integration --bench soak`, in
//! the test profile, asserting nothing about the figures).
//!
//! Each abuse runs `SOAK_ROUNDS` (2) times against one server: memory the first round leaves and
//! the second does not grow is the allocator's, not a leak.
//!
//! The server is this binary re-executed with `SOAK_ROLE=quickstart`: `examples/quickstart.rs`
//! compiled in, in the bench profile (release), serving on `127.0.0.1:0`. `SOAK_SERVER=PATH`
//! runs another program with `--http 127.0.0.1:0` instead. See RELIABILITY.md.

// `CpuUse::around` is the other benches' way in; this one samples by hand.
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
// Its tools register themselves; its (private) `main` is unused.
#[allow(dead_code)]
#[path = "../../../examples/quickstart.rs"]
mod quickstart;

mod abuse;
mod client;
mod disconnect;
mod idle_hour;
mod listens;
mod load;
mod probe;
mod server;
mod slowloris;

use std::time::Duration;

const SCENARIOS: [&str; 8] = [
    "idle-sessions",
    "calls",
    "calls-stateless",
    "slow-sse",
    "slow-legacy",
    "slowloris",
    "disconnect",
    "listens",
];

/// Known scenarios that run only when named.
const NAMED_ONLY: [&str; 1] = ["idle-hour"];

fn main() {
    if std::env::var_os("SOAK_ROLE").is_some_and(|r| r == "quickstart") {
        // The quickstart's `main` is this one line; its tools are registered by the module.
        mcp_runtime::run!();
        return;
    }
    // cargo passes `--bench`; everything else names a scenario.
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let known = |a: &str| SCENARIOS.contains(&a) || NAMED_ONLY.contains(&a);
    if let Some(bad) = asked.iter().find(|a| !known(a)) {
        eprintln!(
            "unknown scenario {bad:?}; known: {} (run by default), {} (run only when named)",
            SCENARIOS.join(", "),
            NAMED_ONLY.join(", ")
        );
        std::process::exit(2);
    }
    let run: Vec<&str> = if asked.is_empty() {
        SCENARIOS.to_vec()
    } else {
        asked.iter().map(String::as_str).collect()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "soak: {} on {} CPUs, {}",
        run.join(", "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );
    for scenario in run {
        println!("\n== {scenario}");
        runtime.block_on(async {
            match scenario {
                "idle-sessions" => load::idle_sessions().await,
                "calls" => load::calls(false).await,
                "calls-stateless" => load::calls(true).await,
                "slow-sse" => abuse::slow_sse().await,
                "slow-legacy" => abuse::slow_legacy().await,
                "slowloris" => slowloris::slowloris().await,
                "disconnect" => disconnect::disconnect().await,
                "listens" => listens::listens().await,
                "idle-hour" => idle_hour::idle_hour().await,
                _ => unreachable!("checked above"),
            }
        });
    }
}

/// The sizes of `SOAK_SMOKE=1`: every scenario once, in well under a minute, to show the tool
/// still runs (CI); its figures mean little.
const SMOKE: [(&str, f64); 20] = [
    ("SOAK_SESSIONS", 200.0),
    ("SOAK_OVER", 5.0),
    ("SOAK_CALLS", 20_000.0),
    ("SOAK_CALL_SESSIONS", 10.0),
    ("SOAK_SAMPLE_EVERY", 5_000.0),
    ("SOAK_SSE_CLIENTS", 20.0),
    ("SOAK_HOLD_SECS", 1.0),
    ("SOAK_LEGACY_CLIENTS", 2.0),
    ("SOAK_LEGACY_POSTS", 20.0),
    ("SOAK_LEGACY_SLEEP_CLIENTS", 2.0),
    ("SOAK_LEGACY_SLEEP_POSTS", 20.0),
    ("SOAK_SLOWLORIS", 5.0),
    ("SOAK_SLOW_LIMIT_SECS", 3.0),
    ("SOAK_DISCONNECTS", 20.0),
    ("SOAK_LISTENS", 20.0),
    ("SOAK_LISTENS_OVER", 2.0),
    ("SOAK_ROUNDS", 1.0),
    ("SOAK_IDLE_HOLD_SECS", 3.0),
    ("SOAK_IDLE_PING_SECS", 1.0),
    ("SOAK_IDLE_SAMPLE_SECS", 1.0),
];

/// A setting from the environment (`SOAK_…`), else its smoke size under `SOAK_SMOKE`, else
/// `default`.
fn setting(name: &str, default: f64) -> f64 {
    if let Some(v) = std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .filter(|v: &f64| *v >= 0.0)
    {
        return v;
    }
    if std::env::var_os("SOAK_SMOKE").is_some_and(|v| !v.is_empty() && v != "0")
        && let Some((_, v)) = SMOKE.iter().find(|(n, _)| *n == name)
    {
        return *v;
    }
    default
}

/// A size from the environment, or its default.
pub fn size(name: &str, default: usize) -> usize {
    setting(name, default as f64) as usize
}

/// A duration in seconds from the environment, or its default.
pub fn secs(name: &str, default: f64) -> Duration {
    Duration::from_secs_f64(setting(name, default))
}

/// `load average: 1.20 0.90 0.70` (how busy the shared machine was).
pub fn load_average() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let three: Vec<&str> = avg.split_whitespace().take(3).collect();
    format!("load average {}", three.join(" "))
}

/// Milliseconds with one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// The value at fraction `p` of sorted `v`.
pub fn pct(v: &[Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}
