//! S3: an instance dies (SIGKILL) or is stopped (SIGTERM) under open-loop load through nginx.

use std::time::Duration;

use serde_json::json;

use crate::harness::{Balancers, Client, Fleet, open_loop};
use crate::{instance, secs, setting};

pub async fn failover() {
    let rate = setting("FLEET_RATE", 1_000.0);
    let length = secs("FLEET_FAILOVER_SECS", 30.0);
    for signal in ["SIGKILL", "SIGTERM"] {
        let mut fleet = Fleet::start(
            instance(),
            3,
            false,
            Balancers {
                nginx: true,
                haproxy: false,
            },
        );
        let port = fleet.ports.nginx_stateless;
        let (stop_at, start_at) = (length / 3, length * 2 / 3);
        let (mut stopped, mut restarted) = (None, None);
        let victim = &mut fleet.instances[1];
        let client = Client::new();
        let out = open_loop(
            &client,
            port,
            rate,
            length,
            Duration::from_secs(2),
            |i| match i % 5 {
                0 => ("tools/list", json!({})),
                _ => ("tools/call", json!({"name": "whoami", "arguments": {}})),
            },
            |t| {
                if stopped.is_none() && t >= stop_at {
                    match signal {
                        "SIGKILL" => victim.kill(),
                        _ => victim.terminate(),
                    }
                    stopped = Some(t);
                }
                if restarted.is_none() && t >= start_at {
                    victim.wait_exit(Duration::from_secs(10));
                    victim.restart();
                    restarted = Some(t);
                }
            },
        )
        .await;
        println!(
            "{signal} i2 at {:.1} s, restarted at {:.1} s; {rate:.0} requests/s for {:.0} s",
            stopped.unwrap_or_default().as_secs_f64(),
            restarted.unwrap_or_default().as_secs_f64(),
            length.as_secs_f64()
        );
        for (method, (ok, failed, late)) in &out.by_method {
            println!("  {method:<11} ok {ok:>7}  failed {failed:>4}  no answer in 2 s {late:>4}");
        }
        let mean = out.latencies.iter().sum::<Duration>() / out.latencies.len().max(1) as u32;
        println!(
            "  in flight on i2 at the kill ≈ {:.1} (rate × mean latency {:.2} ms / 3)",
            rate * mean.as_secs_f64() / 3.0,
            mean.as_secs_f64() * 1e3
        );
        println!("  answers by instance: {:?}", out.by_instance);
        // How soon after the restart i2 takes its share again (≥ 25 % of a 1 s window).
        let back = restarted.unwrap_or_default();
        let recovered = (0..20u32)
            .map(|s| back + Duration::from_millis(500) * s)
            .take_while(|from| *from + Duration::from_secs(1) <= length)
            .find(|from| out.share("i2", *from, *from + Duration::from_secs(1)) >= 0.25);
        match recovered {
            Some(at) => println!(
                "  i2 back to ≥ 25 % of the answers {:.1} s after its restart",
                (at - back).as_secs_f64()
            ),
            None => println!("  i2 not back to 25 % of the answers before the run ended"),
        }
        for (at, method, what) in out.failures.iter().take(5) {
            let what: String = what.chars().take(120).collect();
            println!("  failure at {:.3} s, {method}: {what}", at.as_secs_f64());
        }
    }
}
