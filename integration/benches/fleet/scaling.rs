//! S1 (what the load balancer costs) and S2 (scaling when calls wait rather than compute).

use serde_json::json;

use crate::harness::{Balancers, Fleet};
use crate::load::closed_loop;
use crate::{instance, secs};

const NGINX: Balancers = Balancers {
    nginx: true,
    haproxy: false,
};

/// S1: `add` direct to one instance, through nginx to one, through nginx to three.
pub async fn lb_tax() {
    let window = secs("FLEET_SECS", 5.0);
    let add = json!({"name": "add", "arguments": {"a": 2, "b": 3}});
    let one = Fleet::start(instance(), 1, false, NGINX);
    let three = Fleet::start(instance(), 3, false, NGINX);
    println!("route                  in flight   figures; CPU-µs per call by process");
    for concurrency in [1, 32] {
        let mut rps = Vec::new();
        for (label, fleet, port) in [
            ("direct -> 1", &one, one.instances[0].port),
            ("nginx  -> 1", &one, one.ports.nginx_stateless),
            ("nginx  -> 3", &three, three.ports.nginx_stateless),
        ] {
            let run = closed_loop(fleet, port, concurrency, window, add.clone()).await;
            println!("{label:<22} {concurrency:>9}   {}", run.summary());
            println!("{:<34}cpu: {}", "", run.cpu());
            rps.push(run.rps());
        }
        println!(
            "C={concurrency}: nginx->3 / direct = {:.2}, nginx->3 / nginx->1 = {:.2}",
            rps[2] / rps[0].max(1.0),
            rps[2] / rps[1].max(1.0)
        );
    }
}

/// S2: `slow{20}` at 32 in flight per instance through nginx, for 1, 2 and 3 instances.
pub async fn latency_bound() {
    let window = secs("FLEET_SECS", 5.0);
    let slow = json!({"name": "slow", "arguments": {"ms": 20}});
    println!("instances  in flight   figures; share; CPU-µs per call; share of a CPU");
    for n in 1..=3 {
        let fleet = Fleet::start(instance(), n, false, NGINX);
        let concurrency = 32 * n;
        let run = closed_loop(
            &fleet,
            fleet.ports.nginx_stateless,
            concurrency,
            window,
            slow.clone(),
        )
        .await;
        println!("{n:>9} {concurrency:>10}   {}", run.summary());
        println!("{:<23}share: {}", "", run.shares());
        println!("{:<23}cpu: {}", "", run.cpu());
        println!("{:<23}busy: {}", "", run.busy());
        println!(
            "{:<23}ideal {} calls/s (16 slots × 50/s per instance)",
            "",
            800 * n
        );
    }
}
