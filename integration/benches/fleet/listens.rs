//! S5: listen streams spread over the instances, tool list changes announced on random
//! instances (the Redis change bus carries them), then Redis restarted.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{Balancers, Client, Fleet};
use crate::{instance, secs, setting};

const CHANGED: &str = "notifications/tools/list_changed";

pub async fn fan_out() {
    let streams = setting("FLEET_LISTENS", 300.0) as usize;
    let length = secs("FLEET_BUMP_SECS", 30.0);
    let rate = 10.0;
    let mut fleet = Fleet::start(instance(), 3, true, Balancers::default());
    let ports: Vec<u16> = fleet.instances.iter().map(|i| i.port).collect();
    let client = Client::new();
    // Each stream's reader notes when every change notification arrived.
    let mut heard: Vec<Arc<Mutex<Vec<Instant>>>> = Vec::new();
    let mut readers = Vec::new();
    // Each stream's instance port, and when it ended and whether with its result.
    let mut ends: Vec<(u16, Ended)> = Vec::new();
    for n in 0..streams {
        let port = ports[n % ports.len()];
        let Ok(mut stream) = client.listen(port).await else {
            println!("listen {n} on {port} refused; stopping at {n} streams");
            break;
        };
        if !stream
            .expect(
                "notifications/subscriptions/acknowledged",
                Duration::from_secs(5),
            )
            .await
        {
            println!("listen {n} on {port} not acknowledged");
            continue;
        }
        let times = Arc::new(Mutex::new(Vec::new()));
        heard.push(times.clone());
        let end = Arc::new(Mutex::new(None));
        ends.push((port, end.clone()));
        readers.push(tokio::spawn(async move {
            let mut result = false;
            while let Some(m) = stream.next(Duration::from_secs(3600)).await {
                if m["method"] == CHANGED {
                    times.lock().unwrap().push(Instant::now());
                }
                result |= m.get("result").is_some();
            }
            *end.lock().unwrap() = Some((Instant::now(), result));
        }));
    }
    let open = heard.len();
    let bumps = (rate * length.as_secs_f64()) as usize;
    let mut sent = Vec::new();
    let start = Instant::now();
    for b in 0..bumps {
        tokio::time::sleep_until((start + Duration::from_secs_f64(b as f64 / rate)).into()).await;
        let on = ports[(b * 7 + b / 3) % ports.len()];
        sent.push(Instant::now());
        let _ = client.call(on, "bump_tools", json!({})).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut latencies = Vec::new();
    let mut delivered = 0;
    // Per announcement, its first and last arrival: the first is the pipeline (the call, the
    // bus, one stream), the spread is the fan-out to every stream on two shared CPUs.
    let mut first_last = vec![(Duration::MAX, Duration::ZERO); sent.len()];
    for times in &heard {
        for &t in times.lock().unwrap().iter() {
            delivered += 1;
            // The latest announcement before it is the one it answers.
            if let Some(n) = sent.iter().rposition(|&s| s <= t) {
                let latency = t - sent[n];
                latencies.push(latency);
                let (first, last) = &mut first_last[n];
                *first = (*first).min(latency);
                *last = (*last).max(latency);
            }
        }
    }
    first_last.retain(|(first, _)| *first != Duration::MAX);
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v.get(v.len() / 2).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let first = median(first_last.iter().map(|(f, _)| *f).collect());
    let last = median(first_last.iter().map(|(_, l)| *l).collect());
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{open} streams (about {} per instance), {bumps} changes at {rate}/s on random instances",
        open / ports.len()
    );
    println!(
        "  delivered {delivered} of {} ({:.2} %), announce→receive p50 {:.2} ms p99 {:.2} ms",
        open * bumps,
        delivered as f64 * 100.0 / (open * bumps).max(1) as f64,
        pct(0.5),
        pct(0.99)
    );
    println!(
        "  per change, median of its first arrival {first:.2} ms and of its last {last:.2} ms"
    );
    // Redis restarts: every stream should be told everything changed.
    let before: Vec<usize> = heard.iter().map(|t| t.lock().unwrap().len()).collect();
    let restarted = Instant::now();
    fleet.redis.as_mut().expect("redis").restart();
    let deadline = restarted + Duration::from_secs(10);
    let resynced = loop {
        let done = heard
            .iter()
            .zip(&before)
            .filter(|(t, b)| t.lock().unwrap().len() > **b)
            .count();
        if done == open || Instant::now() > deadline {
            break done;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let last = heard
        .iter()
        .zip(&before)
        .filter_map(|(t, b)| t.lock().unwrap().get(*b).copied())
        .max()
        .map_or(0.0, |t| (t - restarted).as_secs_f64());
    println!(
        "  Redis restarted: {resynced} of {open} streams resynced, the last {last:.2} s after"
    );
    // SIGTERM to i3, then SIGKILL to i2: how their streams end, and how soon a client that
    // lost its stream has a new one acknowledged on another instance.
    for (index, signal) in [(2, "SIGTERM"), (1, "SIGKILL")] {
        let port = ports[index];
        let stopped = Instant::now();
        match signal {
            "SIGTERM" => fleet.instances[index].terminate(),
            _ => fleet.instances[index].kill(),
        }
        let mine: Vec<&Ended> = ends
            .iter()
            .filter(|(p, _)| *p == port)
            .map(|(_, e)| e)
            .collect();
        let deadline = stopped + Duration::from_secs(10);
        while Instant::now() < deadline && mine.iter().any(|e| e.lock().unwrap().is_none()) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let ended: Vec<(Instant, bool)> = mine.iter().filter_map(|e| *e.lock().unwrap()).collect();
        let with_result = ended.iter().filter(|(_, r)| *r).count();
        let last_end = ended
            .iter()
            .map(|(t, _)| *t - stopped)
            .max()
            .unwrap_or_default();
        // Every lost stream listens again on i1, which stays up.
        let other = ports[0];
        let mut relisten = Vec::new();
        for (t, _) in &ended {
            let (client, t) = (client.clone(), *t);
            relisten.push(tokio::spawn(async move {
                let mut stream = client.listen(other).await.ok()?;
                stream
                    .expect(
                        "notifications/subscriptions/acknowledged",
                        Duration::from_secs(5),
                    )
                    .await
                    .then(|| Instant::now() - t)
            }));
        }
        let mut again = Vec::new();
        for r in relisten {
            if let Ok(Some(d)) = r.await {
                again.push(d);
            }
        }
        again.sort();
        println!(
            "  {signal} i{}: {} of {} streams ended within {:.2} s ({with_result} with their \
             result); re-listened on i1: {} acknowledged, the slowest {:.1} ms after its \
             stream ended",
            index + 1,
            ended.len(),
            mine.len(),
            last_end.as_secs_f64(),
            again.len(),
            again.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
        );
    }
    for r in readers {
        r.abort();
    }
}

/// When a stream ended and whether its result came first.
type Ended = Arc<Mutex<Option<(Instant, bool)>>>;
