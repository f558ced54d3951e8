//! A fleet on loopback (redis-server, instances of examples/fleet, nginx and HAProxy with
//! the shipped deploy/ configs): `cargo bench -p mcp-integration --bench fleet [-- S1 S3 …]`.
//!
//! A measurement, not a test: it prints the figures of research/scale-out.md §6 and asserts
//! nothing about them (tests/fleet.rs checks the behaviour). Scenarios, all by default:
//!
//! - `S1` load-balancer tax: `add` at 1 and 32 in flight, direct to one instance vs nginx to
//!   one vs nginx to three, for `FLEET_SECS` (5) each: calls/s, p50/p99, CPU-µs per call of
//!   every process;
//! - `S2` latency-bound scaling: `slow{20}` (16 slots per instance) at 32 in flight per
//!   instance, 1, 2 and 3 instances through nginx: calls/s and each instance's share;
//! - `S3` failover: open loop at `FLEET_RATE` (1,000/s) for `FLEET_FAILOVER_SECS` (30), 80 %
//!   `tools/call`, 20 % `tools/list` through nginx; i2 SIGKILLed at a third and restarted at
//!   two thirds; then the same with SIGTERM;
//! - `S4` multi-round calls across replicas: `FLEET_SURVEYS` (3,000) 3-round `survey` calls,
//!   16 at a time, through nginx round robin; the same with a key per instance; the key
//!   rotated in three rolling restarts during load;
//! - `S5` listen fan-out: `FLEET_LISTENS` (300) streams over three instances, a tool list
//!   change announced on a random instance 10 times a second for `FLEET_BUMP_SECS` (30), then
//!   Redis restarted, an instance SIGTERMed and another SIGKILLed;
//! - `S6` legacy affinity: `FLEET_SESSIONS` (60) sessions through the naive hash (the control),
//!   the route-token map and HAProxy, without a shared store and with Redis (restores counted
//!   as Redis `GET`s); then the owner of 20 sessions SIGKILLed, with Redis (restored
//!   elsewhere) and without (404, a new session);
//! - `S7` Redis commands per stateless `tools/call` (`INFO commandstats`), and per legacy
//!   session; legacy calls/s with Redis against without;
//! - `S8` tasks: `FLEET_TASKS` (30) started through one instance and polled through the
//!   others; ten running when their instance is SIGKILLed.
//!
//! `FLEET_SMOKE=1` makes every size tiny (`scripts/test-all` runs it with `cargo test -p mcp-integration --bench
//! fleet`).
//!
//! The instances are this binary re-executed with `FLEET_ROLE=instance`: examples/fleet
//! compiled in, in the bench profile.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../../../examples/fleet/src/main.rs"]
mod example;
#[path = "../../tests/support/fleet.rs"]
mod harness;

mod affinity;
mod failover;
mod listens;
mod load;
mod scaling;
mod tasks;

use std::time::Duration;

const SCENARIOS: [&str; 8] = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"];

fn main() {
    if std::env::var_os("FLEET_ROLE").is_some_and(|r| r == "instance") {
        std::process::exit(match example::main() {
            std::process::ExitCode::SUCCESS => 0,
            _ => 2,
        });
    }
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if let Some(bad) = asked.iter().find(|a| !SCENARIOS.contains(&a.as_str())) {
        eprintln!("unknown scenario {bad:?}; known: {}", SCENARIOS.join(", "));
        std::process::exit(2);
    }
    let run: Vec<&str> = if asked.is_empty() {
        SCENARIOS.to_vec()
    } else {
        asked.iter().map(String::as_str).collect()
    };
    if !harness::tools_installed() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "fleet: {} on {} CPUs, {}",
        run.join(", "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );
    for scenario in run {
        println!("\n== {scenario} ({})", load_average());
        runtime.block_on(async {
            match scenario {
                "S1" => scaling::lb_tax().await,
                "S2" => scaling::latency_bound().await,
                "S3" => failover::failover().await,
                "S4" => affinity::multi_round().await,
                "S5" => listens::fan_out().await,
                "S6" => affinity::legacy().await,
                "S7" => affinity::store_cost().await,
                "S8" => tasks::shared().await,
                _ => unreachable!("checked above"),
            }
        });
    }
}

/// The instance program: this binary in its instance role.
pub fn instance() -> harness::InstanceProgram {
    let mut run = harness::InstanceProgram::new(std::env::current_exe().expect("current_exe"));
    run.env.push(("FLEET_ROLE".into(), "instance".into()));
    run
}

/// Sizes under `FLEET_SMOKE=1`.
const SMOKE: [(&str, f64); 8] = [
    ("FLEET_LISTENS", 15.0),
    ("FLEET_BUMP_SECS", 1.0),
    ("FLEET_SECS", 0.5),
    ("FLEET_RATE", 100.0),
    ("FLEET_FAILOVER_SECS", 3.0),
    ("FLEET_SURVEYS", 30.0),
    ("FLEET_SESSIONS", 6.0),
    ("FLEET_TASKS", 3.0),
];

/// A setting from the environment, else its smoke size under `FLEET_SMOKE`, else `default`.
pub fn setting(name: &str, default: f64) -> f64 {
    if let Some(v) = std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .filter(|v: &f64| *v > 0.0)
    {
        return v;
    }
    if std::env::var_os("FLEET_SMOKE").is_some_and(|v| !v.is_empty() && v != "0")
        && let Some((_, v)) = SMOKE.iter().find(|(n, _)| *n == name)
    {
        return *v;
    }
    default
}

/// A duration in seconds from [`setting`].
pub fn secs(name: &str, default: f64) -> Duration {
    Duration::from_secs_f64(setting(name, default))
}

/// `load average 1.20 0.90 0.70`.
pub fn load_average() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let three: Vec<&str> = avg.split_whitespace().take(3).collect();
    format!("load average {}", three.join(" "))
}
