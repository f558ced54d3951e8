//! S4 (multi-round calls across replicas), S6 (legacy session affinity) and S7 (what the
//! stateless path asks of Redis).

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::json;

use crate::harness::{Balancers, Client, Fleet};
use crate::load::closed_loop;
use crate::{instance, secs, setting};

const NGINX: Balancers = Balancers {
    nginx: true,
    haproxy: false,
};

/// S4: `survey` (3 elicitation rounds, each a new request) through nginx round robin, 16 at
/// a time; then with a key per instance.
pub async fn multi_round() {
    let total = setting("FLEET_SURVEYS", 3_000.0) as usize;
    for (label, distinct) in [
        ("shared key", false),
        ("a key per instance (control)", true),
    ] {
        let mut run = instance();
        run.distinct_keys = distinct;
        let fleet = Fleet::start(run, 3, false, NGINX);
        let port = fleet.ports.nginx_stateless;
        let client = Client::new();
        let started = Instant::now();
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for _ in 0..16 {
            let (client, tx, next) = (client.clone(), tx.clone(), next.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < total {
                    let r = client.survey(port).await;
                    let _ = tx.send(r).await;
                }
            });
        }
        drop(tx);
        let (mut ok, mut invalid, mut other) = (0, 0, 0);
        while let Some(r) = rx.recv().await {
            match r {
                Ok(r) if r.message["result"]["resultType"] == "complete" && r.ok() => ok += 1,
                Ok(r) if r.error_code() == Some(-32602) => invalid += 1,
                _ => other += 1,
            }
        }
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "{label:<30} {total} calls × 3 rounds: complete {ok}, -32602 {invalid}, other {other}; \
             {:.0} calls/s",
            total as f64 / elapsed
        );
    }
    println!(
        "key rotation during load: not available yet: a requestState key ring \
         (ServerBuilder::request_state_keys, MCP_REQUEST_STATE_KEYS with several keys)"
    );
}

/// S6: legacy sessions (each `whoami` calls after `initialize`) through the naive hash, the
/// route-token map and HAProxy's learned stickiness.
pub async fn legacy() {
    let sessions = setting("FLEET_SESSIONS", 60.0) as usize;
    let calls = (setting("FLEET_SESSIONS", 60.0) as usize * 10 / 6).max(10);
    let fleet = Fleet::start(
        instance(),
        3,
        false,
        Balancers {
            nginx: true,
            haproxy: true,
        },
    );
    let client = Client::new();
    for (label, port) in [
        ("nginx hash (naive, control)", fleet.ports.nginx_naive),
        ("nginx route-token map", fleet.ports.nginx_route),
        ("HAProxy learned stickiness", fleet.ports.haproxy_legacy),
    ] {
        let (mut failed, mut steady, mut routed) = (0, 0, 0);
        for _ in 0..sessions {
            let Ok(session) = client.open_session(port).await else {
                failed += calls;
                continue;
            };
            routed += usize::from(session.id.starts_with('i') && session.id.contains('-'));
            let mut seen = BTreeSet::new();
            for _ in 0..calls {
                match session.whoami().await {
                    Ok(who) => {
                        seen.insert(who);
                    }
                    Err(_) => failed += 1,
                }
            }
            steady += usize::from(seen.len() == 1);
        }
        println!(
            "{label:<30} {sessions} sessions × {calls} calls: failed {failed} ({:.0} %), \
             sessions on one instance {steady}/{sessions}",
            failed as f64 * 100.0 / (sessions * calls) as f64
        );
        if port == fleet.ports.nginx_route && routed < sessions {
            println!(
                "{:<30} not available yet: session ids carrying the route token \
                 (MCP_ROUTE_TOKEN); {routed}/{sessions} did",
                ""
            );
        }
    }
    println!(
        "owner of 20 sessions killed: not available yet: a shared session store \
         (RedisSessionStore) and event store (RedisEventStore) wired into examples/fleet.rs"
    );
}

/// S7: the Redis commands a run of stateless `tools/call add` costs (it should be none).
pub async fn store_cost() {
    let fleet = Fleet::start(instance(), 3, true, NGINX);
    let redis = fleet.redis.as_ref().expect("redis");
    let before = redis.command_calls();
    let add = json!({"name": "add", "arguments": {"a": 2, "b": 3}});
    let run = closed_loop(
        &fleet,
        fleet.ports.nginx_stateless,
        8,
        secs("FLEET_SECS", 5.0),
        add,
    )
    .await;
    let after = redis.command_calls();
    let mut delta: Vec<(String, u64)> = after
        .iter()
        .map(|(cmd, n)| (cmd.clone(), n - before.get(cmd).copied().unwrap_or(0)))
        .filter(|(cmd, n)| *n > 0 && cmd != "info")
        .collect();
    delta.sort();
    let commands: u64 = delta.iter().map(|(_, n)| n).sum();
    println!(
        "stateless tools/call: {} calls, {commands} Redis commands ({:.4} per call) {delta:?}",
        run.calls,
        commands as f64 / run.calls.max(1) as f64
    );
    println!(
        "legacy sessions (commands per session, TTL refreshes, XADD per event): \
         not available yet: RedisSessionStore and RedisEventStore"
    );
}
