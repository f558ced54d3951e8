//! `RedisSessionStore` against a real redis-server, with two instances (route tokens i1 and
//! i2) sharing it: a session opened on one is served by the other (restored, still bound to
//! its owner), `DELETE` and expiry end it on both (and a stale copy saved again does not bring
//! it back), Redis restarting gives clear errors and then recovers, and the store costs what
//! it should in Redis commands.

#[path = "support/instance.rs"]
mod instance;
mod support;

use std::time::Duration;

use instance::{Instance, Stores, add_on, call, delta, header, initialize, status};
use mcp_redis::{Redis, RedisSessionStore};
use mcp_runtime::transport::http::{SessionRecord, SessionStore, TouchOutcome};
use support::RedisServer;

fn sessions(idle: Duration) -> Stores {
    Stores {
        sessions: true,
        events: false,
        idle,
        lease: Duration::from_secs(15),
    }
}

#[test]
fn sessions_move_between_instances_for_their_owner_and_end_on_both() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let stores = sessions(Duration::from_secs(2));
    let i1 = Instance::start(&redis.url(), "i1", stores);
    let i2 = Instance::start(&redis.url(), "i2", stores);
    let id = initialize(i1.port, "Bearer alice");
    assert!(id.starts_with("i1-"), "{id}");
    let r = add_on(i2.port, &id, "Bearer mallory");
    assert_eq!(status(&r), 404, "another caller's Authorization: {r}");
    let r = add_on(i2.port, &id, "Bearer alice");
    assert_eq!(status(&r), 200, "restored on i2: {r}");
    assert!(r.contains(r#""text":"5""#), "{r}");

    // DELETE on i2: gone there at once, and on i1 (which holds a copy) at its next refresh.
    let del = [
        ("Mcp-Session-Id", id.as_str()),
        ("Authorization", "Bearer alice"),
    ];
    assert_eq!(status(&call(i2.port, "DELETE", "", &del)), 200);
    assert_eq!(status(&add_on(i2.port, &id, "Bearer alice")), 404);
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(status(&add_on(i1.port, &id, "Bearer alice")), 404);

    // A DELETE on the instance that never held it.
    let other = initialize(i1.port, "Bearer alice");
    let del = [
        ("Mcp-Session-Id", other.as_str()),
        ("Authorization", "Bearer alice"),
    ];
    assert_eq!(status(&call(i2.port, "DELETE", "", &del)), 200);
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(status(&add_on(i1.port, &other, "Bearer alice")), 404);
}

#[tokio::test]
async fn a_save_does_not_bring_back_a_removed_session() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisSessionStore::new(&Redis::connect(&redis.url(), "gone").await.unwrap());
    let record = SessionRecord::from_json(
        r#"{"v":1,"protocolVersion":"2025-11-25","capabilities":{},"logLevel":"info"}"#,
    )
    .unwrap();
    let ttl = Duration::from_secs(60);
    store.save("i1-s", &record, ttl).await.unwrap();
    assert_eq!(store.load("i1-s").await.unwrap().as_ref(), Some(&record));
    store.remove("i1-s", ttl).await.unwrap();
    // i1 still holds a copy and saves it (its client changed the log level): no effect, so
    // no other instance can restore the deleted session.
    store.save("i1-s", &record, ttl).await.unwrap();
    assert_eq!(store.load("i1-s").await.unwrap(), None);
    assert_eq!(
        store.touch("i1-s", ttl).await.unwrap(),
        TouchOutcome::Removed
    );
    // Other sessions are saved as before.
    store.save("i1-t", &record, ttl).await.unwrap();
    assert_eq!(store.load("i1-t").await.unwrap(), Some(record));
}

#[test]
fn an_idle_session_expires_in_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let stores = sessions(Duration::from_secs(1));
    let i1 = Instance::start(&redis.url(), "i1", stores);
    let i2 = Instance::start(&redis.url(), "i2", stores);
    let id = initialize(i1.port, "Bearer alice");
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(status(&add_on(i2.port, &id, "Bearer alice")), 404);
}

#[test]
fn redis_restarting_gives_clear_errors_then_recovers() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let stores = sessions(Duration::from_secs(2));
    let i1 = Instance::start(&redis.url(), "i1", stores);
    let i2 = Instance::start(&redis.url(), "i2", stores);
    let id = initialize(i1.port, "Bearer alice");
    redis.kill();
    // The instance that does not hold the session cannot look it up: 503, not 404.
    let r = add_on(i2.port, &id, "Bearer alice");
    assert_eq!(status(&r), 503, "{r}");
    assert_eq!(header(&r, "retry-after"), Some("1"), "{r}");
    assert!(r.contains("session store is unavailable"), "{r}");
    // The one holding it keeps serving it.
    assert_eq!(status(&add_on(i1.port, &id, "Bearer alice")), 200);
    redis.restart();
    // Redis came back empty; i1 saves the session again at its next refresh.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(status(&add_on(i1.port, &id, "Bearer alice")), 200);
        let r = add_on(i2.port, &id, "Bearer alice");
        if status(&r) == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never restored on i2 after Redis came back: {r}"
        );
    }
}

#[test]
fn a_session_costs_one_command_to_create_and_none_per_call() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let stores = sessions(Duration::from_secs(30 * 60));
    let i1 = Instance::start(&redis.url(), "i1", stores);
    let i2 = Instance::start(&redis.url(), "i2", stores);
    // Connections are made; from here on every command is the store's. The first save on
    // this Redis loads the save script (a failed EVALSHA, SCRIPT LOAD, EVALSHA).
    let before = redis.command_calls();
    initialize(i2.port, "Bearer alice");
    let first = delta(&redis, &before);
    assert_eq!(first.get("script|load"), Some(&1), "{first:?}");
    // Then a session costs one command: an EVALSHA (Redis counts the EXISTS and the SET its
    // script runs as calls too).
    let before = redis.command_calls();
    let id = initialize(i1.port, "Bearer alice");
    let created = delta(&redis, &before);
    let one_script = [("evalsha", 1), ("exists", 1), ("set", 1)].map(|(k, n)| (k.to_owned(), n));
    assert_eq!(created, one_script.into(), "one session created");

    let before = redis.command_calls();
    for _ in 0..100 {
        assert_eq!(status(&add_on(i1.port, &id, "Bearer alice")), 200);
    }
    let calls = delta(&redis, &before);
    assert!(calls.is_empty(), "100 calls in one session: {calls:?}");

    let before = redis.command_calls();
    for _ in 0..10 {
        assert_eq!(status(&add_on(i2.port, &id, "Bearer alice")), 200);
    }
    let restored = delta(&redis, &before);
    assert_eq!(restored.get("get"), Some(&1), "one restore: {restored:?}");
    assert_eq!(restored.values().sum::<u64>(), 1, "{restored:?}");
}
