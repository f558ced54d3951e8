//! The shipped deployment (deploy/) in front of three instances of examples/fleet, on
//! loopback: behaviour, not figures (integration/benches/fleet measures). Needs redis-server, nginx and
//! haproxy (tests/fleet/setup.sh); each test skips with a message without them unless
//! `MCP_FLEET_REQUIRED` is set.

#[path = "support/fleet.rs"]
mod fleet_support;
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use fleet_support::{
    Balancers, Client, Fleet, InstanceProgram, Reply, Surveys, instance_of, open_loop,
    tools_installed,
};
use serde_json::json;

const BOTH: Balancers = Balancers {
    nginx: true,
    haproxy: true,
};

const NGINX: Balancers = Balancers {
    nginx: true,
    haproxy: false,
};

const HAPROXY: Balancers = Balancers {
    nginx: false,
    haproxy: true,
};

/// The fleet example, built once per test binary.
fn program() -> InstanceProgram {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let path = BUILT.get_or_init(|| {
        support::interop::build_examples(&["fleet"])
            .unwrap_or_else(|e| panic!("{e}"))
            .remove(0)
    });
    InstanceProgram::new(path.clone())
}

/// One fleet at a time: two on two cores would skew each other's timings.
fn turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn fleet(redis: bool, balancers: Balancers) -> Option<Fleet> {
    tools_installed().then(|| Fleet::start(program(), 3, redis, balancers))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// nginx :8080 spreads 2026-07-28 calls over every instance; one instance SIGKILLed mid-run
/// (and restarted) costs no idempotent request, and at most the calls it was running.
#[test]
fn nginx_round_robin_spreads_calls_and_survives_a_sigkill() {
    let _turn = turn();
    let Some(mut fleet) = fleet(false, BOTH) else {
        return;
    };
    let port = fleet.ports.nginx_stateless;
    let rt = runtime();
    let client = Client::new();
    let spread = rt.block_on(client.spread(port, 30));
    assert_eq!(
        spread,
        BTreeMap::from([("i1".into(), 10), ("i2".into(), 10), ("i3".into(), 10)]),
        "round robin"
    );
    let mut killed = false;
    let mut restarted = false;
    let (out, victim) = {
        let victim = &mut fleet.instances[1];
        let out = rt.block_on(open_loop(
            &client,
            port,
            200.0,
            Duration::from_secs(4),
            Duration::from_secs(5),
            |i| match i % 2 {
                0 => ("tools/list", json!({})),
                _ => ("tools/call", json!({"name": "whoami", "arguments": {}})),
            },
            |t| {
                if !killed && t >= Duration::from_millis(1_500) {
                    victim.kill();
                    killed = true;
                }
                if !restarted && t >= Duration::from_millis(3_000) {
                    victim.restart();
                    restarted = true;
                }
            },
        ));
        (out, victim.name.clone())
    };
    assert!(killed && restarted);
    assert_eq!(out.total(), 800);
    assert_eq!(
        out.unanswered(),
        0,
        "every request is answered: {:?}",
        out.failures
    );
    assert_eq!(
        out.failed("tools/list"),
        0,
        "idempotent requests are retried: {:?}",
        out.failures
    );
    // At 100 calls/s, ~1 ms each, a handful at most were on the instance when it died.
    assert!(
        out.failed("tools/call") <= 5,
        "tools/call failures beyond those in flight: {:?}",
        out.failures
    );
    for (instance, n) in &out.by_instance {
        assert!(
            *n > 20,
            "{instance} answered only {n}: {:?}",
            out.by_instance
        );
    }
    assert!(
        out.by_instance.contains_key(&victim),
        "{:?}",
        out.by_instance
    );
}

/// HAProxy :8091 (least connections, L7 retries for idempotent methods): the same kill.
#[test]
fn haproxy_stateless_retries_idempotent_methods_only() {
    let _turn = turn();
    let Some(mut fleet) = fleet(false, BOTH) else {
        return;
    };
    let port = fleet.ports.haproxy_stateless;
    let rt = runtime();
    let client = Client::new();
    let spread = rt.block_on(client.spread(port, 30));
    assert_eq!(spread.len(), 3, "every instance answers: {spread:?}");
    let mut killed = false;
    let victim = &mut fleet.instances[0];
    let out = rt.block_on(open_loop(
        &client,
        port,
        200.0,
        Duration::from_secs(3),
        Duration::from_secs(5),
        |i| match i % 2 {
            0 => ("tools/list", json!({})),
            _ => (
                "tools/call",
                json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            ),
        },
        |t| {
            if !killed && t >= Duration::from_secs(1) {
                victim.kill();
                killed = true;
            }
        },
    ));
    assert_eq!(out.total(), 600);
    assert_eq!(
        out.unanswered(),
        0,
        "every request is answered: {:?}",
        out.failures
    );
    assert_eq!(out.failed("tools/list"), 0, "{:?}", out.failures);
    assert!(out.failed("tools/call") <= 5, "{:?}", out.failures);
}

/// Established TCP connections accepted on each of `ports` (by the instance or still in its
/// accept queue), from the kernel's table: the requests a balancer has in flight there, one
/// per connection (HTTP/1.1), once no idle keep-alive connection is left over.
fn connections_to(ports: &[u16]) -> Vec<usize> {
    const ESTABLISHED: &str = "01";
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let mut counts = vec![0; ports.len()];
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(&ESTABLISHED)) = (fields.get(1), fields.get(3)) else {
            continue;
        };
        let port = local
            .rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok());
        if let Some(i) = ports.iter().position(|p| Some(*p) == port) {
            counts[i] += 1;
        }
    }
    counts
}

/// Nine 2 s `slow` calls at once through `port` of a fresh fleet; once the balancer has
/// passed all nine on (each on a connection of its own, counted per instance), and half a
/// second in, the instance running the most of them is SIGKILLed. The calls it was running
/// must fail with the balancer's 502, not be resent to another instance (a `tools/call` is
/// not idempotent: resent, it would run twice), and every other call succeeds where it ran.
/// Counting by instance rather than assuming an even spread keeps it exact however the
/// balancer spread them. Resent (nginx with `non_idempotent`), the cut-off calls succeed on
/// the survivors 2.5 s in, and this fails.
fn a_call_cut_off_mid_request_is_not_resent(mut fleet: Fleet, port: u16, balancer: &str) {
    const CALLS: usize = 9;
    const WORK: Duration = Duration::from_millis(2_000);
    let rt = runtime();
    let client = Client::new();
    let ports: Vec<u16> = fleet.instances.iter().map(|i| i.port).collect();
    let start = std::time::Instant::now();
    let calls: Vec<_> = (0..CALLS)
        .map(|_| {
            let client = client.clone();
            rt.spawn(async move {
                let r = client
                    .call(port, "slow", json!({"ms": WORK.as_millis()}))
                    .await;
                (r, start.elapsed())
            })
        })
        .collect();
    // All nine in flight (twice the same count, 50 ms apart: not a health check passing by).
    let running = loop {
        let seen = connections_to(&ports);
        std::thread::sleep(Duration::from_millis(50));
        if seen.iter().sum::<usize>() == CALLS && connections_to(&ports) == seen {
            break seen;
        }
        assert!(
            start.elapsed() < WORK / 2,
            "the {CALLS} calls never ran at once through {balancer}: {seen:?}"
        );
    };
    std::thread::sleep((WORK / 4).saturating_sub(start.elapsed()));
    let cut_off = *running.iter().max().unwrap();
    let victim = running.iter().position(|n| *n == cut_off).unwrap();
    fleet.instances[victim].kill();
    let killed = start.elapsed();
    let victim = fleet.instances[victim].name.clone();
    assert!(
        killed < WORK * 3 / 4,
        "killed {victim} too late: {killed:?}"
    );
    let outcomes: Vec<(Result<Reply, String>, Duration)> = rt.block_on(async {
        let mut out = Vec::new();
        for call in calls {
            out.push(call.await.unwrap());
        }
        out
    });

    let mut answered: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed = Vec::new();
    for (r, at) in &outcomes {
        match r {
            Ok(reply) if reply.ok() => {
                let who = reply.tool_text().and_then(instance_of).unwrap_or("?");
                *answered.entry(who.to_owned()).or_default() += 1;
            }
            other => failed.push((other, *at)),
        }
    }
    let log = fleet.log(balancer);
    // The calls on the victim failed, at once: the balancer's own 502, not an answer from
    // elsewhere.
    assert_eq!(
        failed.len(),
        cut_off,
        "{victim} killed, running {running:?}, failed {failed:?}\n{log}"
    );
    for (r, at) in &failed {
        assert!(
            matches!(r, Ok(reply) if reply.status == 502 && reply.message.is_null()),
            "not {balancer}'s 502: {r:?}\n{log}"
        );
        assert!(*at < killed + WORK / 2, "failed only after {at:?}: {r:?}");
    }
    // Every other call was answered by the instance it ran on, none by a second one.
    let expected: BTreeMap<String, usize> = fleet
        .instances
        .iter()
        .zip(&running)
        .filter(|(i, n)| i.name != victim && **n > 0)
        .map(|(i, n)| (i.name.clone(), *n))
        .collect();
    assert_eq!(
        answered, expected,
        "answers by instance ({victim} killed, running {running:?})"
    );
}

/// nginx :8080 resends an idempotent request, and a `tools/call` only when it never reached
/// an instance: one cut off mid-request is nginx's 502 (`tools/list` during a kill is
/// answered: `nginx_round_robin_spreads_calls_and_survives_a_sigkill`).
#[test]
fn nginx_does_not_resend_a_tools_call_cut_off_mid_request() {
    let _turn = turn();
    let Some(fleet) = fleet(false, NGINX) else {
        return;
    };
    let port = fleet.ports.nginx_stateless;
    a_call_cut_off_mid_request_is_not_resent(fleet, port, "nginx");
}

/// HAProxy :8091's L7 retries are for idempotent methods only: a `tools/call` cut off
/// mid-request is HAProxy's 502 (`tools/list` during a kill is answered:
/// `haproxy_stateless_retries_idempotent_methods_only`).
#[test]
fn haproxy_does_not_resend_a_tools_call_cut_off_mid_request() {
    let _turn = turn();
    let Some(fleet) = fleet(false, HAPROXY) else {
        return;
    };
    let port = fleet.ports.haproxy_stateless;
    a_call_cut_off_mid_request_is_not_resent(fleet, port, "haproxy");
}

/// Opens `sessions` legacy sessions through `port` and makes `calls` `whoami` calls in each:
/// (failed calls, sessions whose calls were answered by more than one instance).
fn sessions_through(port: u16, sessions: usize, calls: usize) -> (usize, usize) {
    runtime().block_on(async {
        let client = Client::new();
        let mut failed = 0;
        let mut wandered = 0;
        for _ in 0..sessions {
            // Through the naive hash even `notifications/initialized` may miss the session.
            let Ok(session) = client.open_session(port).await else {
                failed += calls;
                continue;
            };
            let (seen, lost) = session.whoami_times(calls).await;
            failed += lost;
            wandered += usize::from(seen.len() > 1);
        }
        (failed, wandered)
    })
}

/// The trap the shipped configs avoid: hashing the session id, which `initialize` does not
/// carry, sends most later requests to an instance that never saw the session.
#[test]
fn naive_session_hash_loses_most_sessions() {
    let _turn = turn();
    let Some(fleet) = fleet(false, NGINX) else {
        return;
    };
    let (failed, _) = sessions_through(fleet.ports.nginx_naive, 30, 5);
    assert!(
        failed * 100 > 30 * 150,
        "only {failed} of 150 calls failed: the negative control no longer shows the trap"
    );
}

/// HAProxy :8090 learns each session from the `Mcp-Session-Id` its instance answered with.
#[test]
fn haproxy_learned_stickiness_keeps_sessions_on_their_instance() {
    let _turn = turn();
    let Some(fleet) = fleet(false, BOTH) else {
        return;
    };
    let (failed, wandered) = sessions_through(fleet.ports.haproxy_legacy, 30, 5);
    assert_eq!(
        (failed, wandered),
        (0, 0),
        "failed calls, sessions that moved"
    );
}

/// nginx :8082 routes a session by the route token its id starts with.
#[test]
fn nginx_route_token_map_keeps_sessions_on_their_instance() {
    let _turn = turn();
    let Some(fleet) = fleet(false, BOTH) else {
        return;
    };
    let (failed, wandered) = sessions_through(fleet.ports.nginx_route, 30, 5);
    assert_eq!(
        (failed, wandered),
        (0, 0),
        "failed calls, sessions that moved"
    );
}

/// A 3-round elicitation through nginx round robin: every round lands on another instance
/// and all of them complete, because the instances share the requestState key; with a key
/// each (the negative control) every retry is refused with -32602.
#[test]
fn multi_round_calls_complete_on_any_instance_with_the_shared_key() {
    let _turn = turn();
    if !tools_installed() {
        return;
    }
    let rt = runtime();
    let client = Client::new();
    let fleet = Fleet::start(program(), 3, false, NGINX);
    for _ in 0..12 {
        let r = rt
            .block_on(client.survey(fleet.ports.nginx_stateless))
            .unwrap();
        assert_eq!(r.message["result"]["resultType"], "complete", "{}", r.text);
        let text = r.tool_text().unwrap_or_default();
        assert!(text.starts_with("Ada likes teal and 7"), "{text}");
    }
    drop(fleet);

    let mut mismatched = program();
    mismatched.distinct_keys = true;
    let fleet = Fleet::start(mismatched, 3, false, NGINX);
    for _ in 0..6 {
        let r = rt
            .block_on(client.survey(fleet.ports.nginx_stateless))
            .unwrap();
        assert_eq!(r.error_code(), Some(-32602), "{}", r.text);
    }
}

/// The requestState key rotated under load, one instance restarted at a time (`[old]`,
/// `[old, new]`, `[new, old]`, `[new]`): no multi-round call is refused for its key, and the
/// restarts lose (next to) nothing.
#[test]
fn rotating_the_request_state_key_under_load_refuses_no_call() {
    let _turn = turn();
    let Some(mut fleet) = fleet(false, NGINX) else {
        return;
    };
    let port = fleet.ports.nginx_stateless;
    let rt = runtime();
    let surveys = rt.block_on(async { Surveys::start(port, 4) });
    std::thread::sleep(Duration::from_millis(300));
    fleet.rotate_keys(Duration::from_millis(300));
    std::thread::sleep(Duration::from_millis(300));
    let out = rt.block_on(surveys.finish());
    assert!(
        out.complete > 100,
        "only {} surveys completed",
        out.complete
    );
    // No survey refused (a key an instance lacked would be -32602) or failed otherwise.
    assert!(
        out.refused == 0 && out.other.is_empty(),
        "of {} surveys during the rotation {} were refused and {} failed otherwise, first: \
         {:?}\nnginx: {}",
        out.total(),
        out.refused,
        out.other.len(),
        out.other.first(),
        fleet.log("nginx")
    );
    // nginx's own 502s: a connection whose handshake was under way as the listener closed
    // would be reset, and nginx does not resend a POST. With new handshakes stopped before the
    // close (Linux) none in 9 runs, 5 of them with two CPU hogs beside; before, 0 to 2 in about
    // 9,000 calls over these nine restarts, 5 once on a loaded CI machine; without the accept
    // sweep 4 to 7, without the draining thousands. One is let pass: a kept-alive connection
    // the instance closes as nginx sends on it is the same race, and nothing here rules it out.
    assert!(
        out.gateway.len() <= 1,
        "{} of {} surveys got nginx's 502 during the rotation\nnginx: {}",
        out.gateway.len(),
        out.total(),
        fleet.log("nginx")
    );
    // The old key is gone: the ring is [new] everywhere, and the surveys still complete.
    let r = rt.block_on(Client::new().survey(port)).unwrap();
    assert_eq!(r.message["result"]["resultType"], "complete", "{}", r.text);
}

/// Listen streams on every instance hear a tool list change announced on any of them (the
/// Redis change bus); after Redis restarts, every stream is told that everything changed.
#[test]
fn listen_streams_hear_changes_made_on_other_instances() {
    let _turn = turn();
    let Some(mut fleet) = fleet(true, Balancers::default()) else {
        return;
    };
    let ports: Vec<u16> = fleet.instances.iter().map(|i| i.port).collect();
    let rt = runtime();
    let client = Client::new();
    let mut streams = rt.block_on(async {
        let mut streams = Vec::new();
        for &port in ports.iter().chain(&ports) {
            let mut stream = client.listen(port).await.unwrap();
            let ack = "notifications/subscriptions/acknowledged";
            assert!(
                stream.expect(ack, Duration::from_secs(5)).await,
                "no ack on {port}"
            );
            streams.push((port, stream));
        }
        streams
    });
    let changed = "notifications/tools/list_changed";
    for &on in &ports {
        rt.block_on(async {
            let r = client.call(on, "bump_tools", json!({})).await.unwrap();
            assert!(r.ok(), "{}", r.text);
            for (port, stream) in &mut streams {
                assert!(
                    stream.expect(changed, Duration::from_secs(5)).await,
                    "the change announced on {on} did not reach a stream on {port}"
                );
            }
        });
    }
    fleet.redis.as_mut().unwrap().restart();
    rt.block_on(async {
        for (port, stream) in &mut streams {
            assert!(
                stream.expect(changed, Duration::from_secs(10)).await,
                "a stream on {port} was not resynced after Redis restarted"
            );
        }
        // And the bus works again.
        let r = client
            .call(ports[2], "bump_tools", json!({}))
            .await
            .unwrap();
        assert!(r.ok(), "{}", r.text);
        for (port, stream) in &mut streams {
            assert!(
                stream.expect(changed, Duration::from_secs(5)).await,
                "after the restart a change did not reach a stream on {port}"
            );
        }
    });
}

/// The owner of a session is SIGKILLed: its backup restores the session from Redis.
#[test]
fn a_session_survives_its_instance_through_the_route_token_map() {
    let _turn = turn();
    let Some(mut fleet) = fleet(true, BOTH) else {
        return;
    };
    let port = fleet.ports.nginx_route;
    let rt = runtime();
    let client = Client::new();
    let session = rt.block_on(client.open_session(port)).unwrap();
    let owner = rt.block_on(session.whoami()).unwrap();
    assert!(
        session.id.starts_with(&format!("{owner}-")),
        "{}",
        session.id
    );
    let index = fleet
        .instances
        .iter()
        .position(|i| i.name == owner)
        .unwrap();
    fleet.instances[index].kill();
    let now = rt.block_on(session.whoami()).unwrap();
    assert_ne!(now, owner);
}

/// A task started through one instance is polled through another; when the instance running
/// a task dies, the task ends `failed` once its lease lapses, never "working" forever.
#[test]
fn tasks_are_shared_and_fail_when_their_instance_dies() {
    let _turn = turn();
    let Some(mut fleet) = fleet(true, Balancers::default()) else {
        return;
    };
    let ports: Vec<u16> = fleet.instances.iter().map(|i| i.port).collect();
    let rt = runtime();
    let client = Client::new();
    let poll = |port: u16, id: String, until: &'static str, limit: Duration| {
        rt.block_on(async {
            let deadline = tokio::time::Instant::now() + limit;
            loop {
                let task = client.task(port, &id).await.unwrap();
                if task["status"] == until {
                    return task;
                }
                assert!(
                    tokio::time::Instant::now() < deadline && task["status"] == "working",
                    "task {id} through {port}: {task}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let id = rt
        .block_on(client.start_task(ports[0], "slow", json!({"ms": 300})))
        .unwrap();
    let done = poll(ports[1], id, "completed", Duration::from_secs(10));
    assert_eq!(
        done["result"]["content"][0]["text"], "worked 300 ms on i1",
        "{done}"
    );

    let id = rt
        .block_on(client.start_task(ports[0], "slow", json!({"ms": 60_000})))
        .unwrap();
    fleet.instances[0].kill();
    poll(ports[2], id, "failed", Duration::from_secs(40));
}
