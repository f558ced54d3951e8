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
        readers.push(tokio::spawn(async move {
            while let Some(m) = stream.next(Duration::from_secs(3600)).await {
                if m["method"] == CHANGED {
                    times.lock().unwrap().push(Instant::now());
                }
            }
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
    for times in &heard {
        for &t in times.lock().unwrap().iter() {
            delivered += 1;
            // The latest announcement before it is the one it answers.
            if let Some(&at) = sent.iter().rev().find(|&&s| s <= t) {
                latencies.push(t - at);
            }
        }
    }
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
    println!("  SIGKILL / SIGTERM of an instance with streams open: not measured here");
    for r in readers {
        r.abort();
    }
}
