//! Closed-loop load (a fixed number of calls in flight), and the CPU each process of the fleet
//! used while it ran.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::CpuSample;
use crate::harness::{Client, Fleet, instance_of};

/// What a closed-loop run measured.
pub struct Run {
    pub calls: usize,
    pub errors: usize,
    pub elapsed: Duration,
    pub latencies: Vec<Duration>,
    pub by_instance: BTreeMap<String, usize>,
    /// Process label → CPU microseconds per completed call.
    pub cpu_us: Vec<(String, f64)>,
}

impl Run {
    pub fn rps(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    pub fn pct(&self, p: f64) -> Duration {
        let v = &self.latencies;
        if v.is_empty() {
            return Duration::ZERO;
        }
        v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
    }

    /// `12,345 calls/s, p50 0.8 ms, p99 2.1 ms`.
    pub fn summary(&self) -> String {
        format!(
            "{:>8.0} calls/s  p50 {:>6.2} ms  p99 {:>6.2} ms  errors {}",
            self.rps(),
            self.pct(0.5).as_secs_f64() * 1e3,
            self.pct(0.99).as_secs_f64() * 1e3,
            self.errors
        )
    }

    /// `i1 33.1 %, i2 …` of the answers.
    pub fn shares(&self) -> String {
        let total: usize = self.by_instance.values().sum();
        self.by_instance
            .iter()
            .map(|(i, n)| format!("{i} {:.1} %", *n as f64 * 100.0 / total.max(1) as f64))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `i1 41.2, nginx worker 20.3` (CPU-µs per call).
    pub fn cpu(&self) -> String {
        self.cpu_us
            .iter()
            .map(|(p, us)| format!("{p} {us:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `i1 3.3 %, nginx worker 4.1 %`: how busy each process kept one CPU over the window
    /// (CPU per call × calls per second).
    pub fn busy(&self) -> String {
        self.cpu_us
            .iter()
            .map(|(p, us)| format!("{p} {:.1} %", us * self.rps() / 1e4))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every process of `fleet` worth measuring: the instances, nginx's workers, HAProxy.
fn processes(fleet: &Fleet) -> Vec<(String, u32)> {
    let mut all: Vec<(String, u32)> = fleet
        .instances
        .iter()
        .filter_map(|i| Some((i.name.clone(), i.pid()?)))
        .collect();
    all.extend(
        fleet
            .balancer_pids()
            .into_iter()
            .filter(|(what, _)| what != "nginx master"),
    );
    all
}

/// Keeps `concurrency` copies of `params` (a 2026-07-28 `tools/call`) in flight through
/// `port` for `duration`, after a quarter-second warm-up.
pub async fn closed_loop(
    fleet: &Fleet,
    port: u16,
    concurrency: usize,
    duration: Duration,
    params: Value,
) -> Run {
    let client = Client::new();
    let warm = Instant::now() + Duration::from_millis(250);
    let end = warm + duration;
    let procs = processes(fleet);
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let client = client.clone();
        let params = params.clone();
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = 0;
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            loop {
                let start = Instant::now();
                if start >= end {
                    break;
                }
                let r = client.stateless(port, "tools/call", params.clone()).await;
                if start < warm {
                    continue;
                }
                match r {
                    Ok(r) if r.ok() => {
                        latencies.push(start.elapsed());
                        if let Some(who) = r.tool_text().and_then(instance_of) {
                            *seen.entry(who.to_owned()).or_default() += 1;
                        }
                    }
                    _ => errors += 1,
                }
            }
            (latencies, errors, seen)
        }));
    }
    tokio::time::sleep_until(warm.into()).await;
    let before: Vec<Option<CpuSample>> = procs.iter().map(|(_, p)| CpuSample::take(*p)).collect();
    let started = Instant::now();
    let mut run = Run {
        calls: 0,
        errors: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
        by_instance: BTreeMap::new(),
        cpu_us: Vec::new(),
    };
    tokio::time::sleep_until(end.into()).await;
    let after: Vec<Option<CpuSample>> = procs.iter().map(|(_, p)| CpuSample::take(*p)).collect();
    run.elapsed = started.elapsed();
    for worker in workers {
        let (latencies, errors, seen) = worker.await.expect("load worker");
        run.latencies.extend(latencies);
        run.errors += errors;
        for (i, n) in seen {
            *run.by_instance.entry(i).or_default() += n;
        }
    }
    run.calls = run.latencies.len();
    run.latencies.sort();
    for (((label, _), b), a) in procs.iter().zip(before).zip(after) {
        if let (Some(b), Some(a)) = (b, a)
            && let Some(us) = a.since(&b).us_per_call(run.calls)
        {
            run.cpu_us.push((label.clone(), us));
        }
    }
    run
}
