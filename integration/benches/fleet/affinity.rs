//! S4 (multi-round calls across replicas), S6 (legacy session affinity) and S7 (what the
//! stateless path asks of Redis).

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::json;

use crate::harness::{Balancers, Client, Fleet, Surveys};
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
    rotation().await;
}

/// S4, key rotation: surveys 16 at a time through nginx while the fleet rotates its key in
/// three rolling restarts ([`Fleet::rotate_keys`]).
async fn rotation() {
    let mut fleet = Fleet::start(instance(), 3, false, NGINX);
    let surveys = Surveys::start(fleet.ports.nginx_stateless, 16);
    let started = Instant::now();
    tokio::task::block_in_place(|| fleet.rotate_keys(std::time::Duration::from_secs(1)));
    let out = surveys.finish().await;
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{:<30} {} calls in {elapsed:.1} s (9 restarts): complete {}, -32602 {}, nginx 502 {}, \
         other {}",
        "key rotation during load",
        out.total(),
        out.complete,
        out.refused,
        out.gateway.len(),
        out.other.len()
    );
    for text in out.other.iter().take(3) {
        let text: String = text.chars().take(120).collect();
        println!("{:<30} failure: {text}", "");
    }
}

/// S6: legacy sessions (each `whoami` calls after `initialize`) through the naive hash, the
/// route-token map and HAProxy's learned stickiness.
pub async fn legacy() {
    let sessions = setting("FLEET_SESSIONS", 60.0) as usize;
    let calls = (setting("FLEET_SESSIONS", 60.0) as usize * 10 / 6).max(10);
    let client = Client::new();
    let both = Balancers {
        nginx: true,
        haproxy: true,
    };
    // Without a shared session store (what the routing alone does), then with Redis.
    for redis in [false, true] {
        let fleet = Fleet::start(instance(), 3, redis, both);
        let store = if redis { "Redis" } else { "no store" };
        for (label, port) in [
            ("nginx hash (naive, control)", fleet.ports.nginx_naive),
            ("nginx route-token map", fleet.ports.nginx_route),
            ("HAProxy learned stickiness", fleet.ports.haproxy_legacy),
        ] {
            let commands = fleet.redis.as_ref().map(|r| r.command_calls());
            let (mut failed, mut steady, mut routed) = (0, 0, 0);
            for _ in 0..sessions {
                let Ok(session) = client.open_session(port).await else {
                    failed += calls;
                    continue;
                };
                routed += usize::from(session.id.starts_with('i') && session.id.contains('-'));
                let (seen, lost) = session.whoami_times(calls).await;
                failed += lost;
                steady += usize::from(seen.len() == 1);
            }
            println!(
                "{label:<30} {store:<8} {sessions} sessions × {calls} calls: failed {failed} \
                 ({:.0} %), sessions on one instance {steady}/{sessions}, ids with a route \
                 token {routed}/{sessions}",
                failed as f64 * 100.0 / (sessions * calls) as f64
            );
            // A restore is one GET of the session's record, on the instance that did not know
            // the session.
            if let (Some(redis), Some(before)) = (fleet.redis.as_ref(), commands) {
                let (delta, _) = commands_since(redis, &before);
                let gets = delta
                    .iter()
                    .find(|(c, _)| c == "get")
                    .map_or(0, |(_, n)| *n);
                println!(
                    "{:<39} restores (GET) {gets}, {:.2} per session; Redis {delta:?}",
                    "",
                    gets as f64 / sessions as f64
                );
            }
        }
    }
    owner_killed(&client, false).await;
    owner_killed(&client, true).await;
}

/// S6, the owner of 20 sessions SIGKILLed (route-token map): with Redis each session's next
/// call goes to a backup, which restores it; without a store the backup answers 404 and the
/// client starts a new session.
async fn owner_killed(client: &Client, redis: bool) {
    let both = Balancers {
        nginx: true,
        haproxy: true,
    };
    let mut fleet = Fleet::start(instance(), 3, redis, both);
    let port = fleet.ports.nginx_route;
    let mut owned = Vec::new();
    for _ in 0..200 {
        if owned.len() == 20 {
            break;
        }
        if let Ok(session) = client.open_session(port).await
            && session.whoami().await.is_ok_and(|who| who == "i1")
        {
            owned.push(session);
        }
    }
    let killed = Instant::now();
    fleet.instances[0].kill();
    let (mut restored, mut renewed, mut failed) = (0, 0, 0);
    let mut slowest = std::time::Duration::ZERO;
    let mut elsewhere = BTreeSet::new();
    for session in &owned {
        let asked = Instant::now();
        let who = match session.whoami().await {
            Ok(who) if who != "i1" => {
                restored += 1;
                Ok(who)
            }
            // No store: the backup does not know the session (404), so the client starts a
            // new one, as the spec tells it to.
            Err(e) if !redis && e.starts_with("404") => match client.open_session(port).await {
                Ok(fresh) => fresh.whoami().await.inspect(|_| renewed += 1),
                Err(e) => Err(e),
            },
            other => other,
        };
        match who {
            Ok(who) if who != "i1" => {
                elsewhere.insert(who);
                slowest = slowest.max(asked.elapsed());
            }
            _ => failed += 1,
        }
    }
    let label = if redis {
        "owner killed (map, Redis)"
    } else {
        "owner killed (map, no store)"
    };
    println!(
        "{label:<30} {} sessions of i1, i1 SIGKILLed: {restored} restored, {renewed} \
         re-initialized, on {elsewhere:?}, {failed} failed; the slowest until answered {:.1} \
         ms, all done {:.0} ms after the kill",
        owned.len(),
        slowest.as_secs_f64() * 1e3,
        killed.elapsed().as_secs_f64() * 1e3
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
    let (delta, commands) = commands_since(redis, &before);
    println!(
        "stateless tools/call: {} calls, {commands} Redis commands ({:.4} per call) {delta:?}",
        run.calls,
        commands as f64 / run.calls.max(1) as f64
    );
    legacy_store_cost(&fleet).await;
    drop(fleet);
    legacy_throughput().await;
}

/// S7, legacy: `whoami` calls per second in 8 sessions at once through the route-token map,
/// without a shared store and with Redis (sessions, SSE events, tasks, the change bus).
async fn legacy_throughput() {
    let window = secs("FLEET_SECS", 5.0);
    let mut rates = Vec::new();
    for redis in [false, true] {
        let fleet = Fleet::start(instance(), 3, redis, NGINX);
        let client = Client::new();
        let mut sessions = Vec::new();
        for _ in 0..8 {
            if let Ok(session) = client.open_session(fleet.ports.nginx_route).await {
                sessions.push(session);
            }
        }
        let started = Instant::now();
        let end = started + window;
        let workers: Vec<_> = sessions
            .into_iter()
            .map(|session| {
                tokio::spawn(async move {
                    let (mut ok, mut failed) = (0usize, 0usize);
                    while Instant::now() < end {
                        match session.whoami().await {
                            Ok(_) => ok += 1,
                            Err(_) => failed += 1,
                        }
                    }
                    (ok, failed)
                })
            })
            .collect();
        let (mut ok, mut failed) = (0, 0);
        for worker in workers {
            let (o, f) = worker.await.expect("legacy worker");
            ok += o;
            failed += f;
        }
        let rate = ok as f64 / started.elapsed().as_secs_f64();
        let store = if redis { "Redis" } else { "no store" };
        println!("legacy calls/s, 8 sessions, {store:<8} {rate:>8.0} calls/s, failed {failed}");
        rates.push(rate);
    }
    println!(
        "legacy calls/s with Redis / without = {:.2}",
        rates[1] / rates[0].max(1.0)
    );
}

/// S7, legacy: the Redis commands 20 sessions of 10 calls each cost, by command.
async fn legacy_store_cost(fleet: &Fleet) {
    let redis = fleet.redis.as_ref().expect("redis");
    let client = Client::new();
    let (sessions, calls) = (20, 10);
    let before = redis.command_calls();
    let mut opened = 0;
    for _ in 0..sessions {
        let Ok(session) = client.open_session(fleet.ports.nginx_route).await else {
            continue;
        };
        opened += 1;
        for _ in 0..calls {
            let _ = session.whoami().await;
        }
    }
    let (delta, commands) = commands_since(redis, &before);
    println!(
        "legacy: {opened} sessions × {calls} calls: {commands} Redis commands, {:.1} per session \
         ({:.2} per call) {delta:?}",
        commands as f64 / opened.max(1) as f64,
        commands as f64 / (opened * calls).max(1) as f64
    );
}

/// The Redis commands run since `before` (`INFO` itself left out), by name, and their sum.
fn commands_since(
    redis: &crate::harness::RedisServer,
    before: &std::collections::BTreeMap<String, u64>,
) -> (Vec<(String, u64)>, u64) {
    let mut delta: Vec<(String, u64)> = redis
        .command_calls()
        .iter()
        .map(|(cmd, n)| (cmd.clone(), n - before.get(cmd).copied().unwrap_or(0)))
        .filter(|(cmd, n)| *n > 0 && cmd != "info")
        .collect();
    delta.sort();
    let commands = delta.iter().map(|(_, n)| n).sum();
    (delta, commands)
}
