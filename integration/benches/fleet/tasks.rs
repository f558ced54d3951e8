//! S8: tasks in a fleet: started through one instance, polled through the others; the
//! instance running them SIGKILLed (its leases lapse, the tasks end `failed`).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{Balancers, Client, Fleet};
use crate::{instance, setting};

pub async fn shared() {
    let count = setting("FLEET_TASKS", 30.0) as usize;
    let mut fleet = Fleet::start(instance(), 3, true, Balancers::default());
    let ports: Vec<u16> = fleet.instances.iter().map(|i| i.port).collect();
    let client = Client::new();

    // `count` tasks of 300 ms through i1, each polled through i2 or i3 every 50 ms.
    let started = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..count {
        match client
            .start_task(ports[0], "slow", json!({"ms": 300}))
            .await
        {
            Ok(id) => ids.push(id),
            Err(e) => println!("task refused: {e}"),
        }
    }
    let polls = poll_all(&client, &ports[1..], &ids, Duration::from_secs(30)).await;
    let right = polls
        .iter()
        .flatten()
        .filter(|(task, _)| task["result"]["content"][0]["text"] == "worked 300 ms on i1")
        .count();
    println!(
        "{count} tasks of 300 ms started through i1, polled through i2/i3: {right} completed with \
         i1's result, {} not; all done {:.2} s after the first start",
        polls.len() - right,
        started.elapsed().as_secs_f64()
    );

    // Ten tasks of a minute through i1, then i1 SIGKILLed: through i2, each must turn `failed`
    // once its lease (5 s in examples/fleet) lapses.
    let mut long = Vec::new();
    for _ in 0..10 {
        if let Ok(id) = client
            .start_task(ports[0], "slow", json!({"ms": 60_000}))
            .await
        {
            long.push(id);
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let killed = Instant::now();
    fleet.instances[0].kill();
    let polls = poll_all(&client, &ports[1..2], &long, Duration::from_secs(40)).await;
    let failed: Vec<Duration> = polls
        .iter()
        .flatten()
        .filter(|(task, _)| task["status"] == "failed")
        .map(|(_, at)| *at - killed)
        .collect();
    println!(
        "{} tasks running on i1, i1 SIGKILLed: {} ended failed (read through i2), the first \
         {:.1} s and the last {:.1} s after the kill (lease 5 s); {} still working or unreadable",
        long.len(),
        failed.len(),
        failed.iter().min().map_or(0.0, Duration::as_secs_f64),
        failed.iter().max().map_or(0.0, Duration::as_secs_f64),
        long.len() - failed.len()
    );
}

/// Polls every task in `ids` (round robin over `ports`) every 50 ms until it is no longer
/// `working` or `limit` passes: each task's final state and when it was read (`None`: still
/// working, or unreadable, at the limit).
async fn poll_all(
    client: &Client,
    ports: &[u16],
    ids: &[String],
    limit: Duration,
) -> Vec<Option<(serde_json::Value, Instant)>> {
    let deadline = Instant::now() + limit;
    let mut out = vec![None; ids.len()];
    let mut round = 0;
    while out.iter().any(Option::is_none) && Instant::now() < deadline {
        for (n, id) in ids.iter().enumerate() {
            if out[n].is_some() {
                continue;
            }
            let port = ports[(n + round) % ports.len()];
            if let Ok(task) = client.task(port, id).await
                && task["status"] != "working"
            {
                out[n] = Some((task, Instant::now()));
            }
        }
        round += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    out
}
