//! `RedisTaskStore` against a real redis-server: two instances of one server sharing it (a task
//! created through one is read, finished and cancelled through the other), an instance that
//! stops (its tasks end `failed` when their lease lapses), the limits under concurrency, and
//! Redis restarting.

mod support;

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mcp_redis::{Redis, RedisTaskStore};
use mcp_runtime::ProtocolVersion;
use mcp_runtime::prelude::*;
use mcp_runtime::task::{
    Lease, StoreLimits, TaskRecord, TaskStatus, TaskStore, TaskStoreError, UpdateOutcome,
};
use mcp_runtime::testing::TestClient;
use serde_json::{Map, Value, json};
use support::RedisServer;

const EXT: &str = "io.modelcontextprotocol/tasks";

/// How many times the work labelled so saw its cancellation.
static CANCELLED: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Default::default);

fn cancellations(label: &str) -> usize {
    CANCELLED.lock().unwrap().get(label).copied().unwrap_or(0)
}

/// Works for `ms` milliseconds, then answers; counts the cancellations it saw under `label`.
#[tool(task = "optional")]
async fn work(ms: u64, label: String, ctx: Context) -> Result<String, String> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("{label} worked {ms} ms")),
        _ = ctx.cancelled() => {
            *CANCELLED.lock().unwrap().entry(label).or_default() += 1;
            Err("cancelled".into())
        }
    }
}

async fn redis(server: &RedisServer, fleet: &str) -> Redis {
    Redis::connect(&server.url(), fleet).await.unwrap()
}

/// An instance of the server: its own connection to Redis, as another process would have.
async fn instance(server: &RedisServer, fleet: &str, lease: Duration) -> TestClient {
    let store = RedisTaskStore::new(&redis(server, fleet).await);
    let server = mcp_runtime::Server::builder()
        .task_store(store)
        .task_lease(lease)
        .task_poll_interval(Duration::from_millis(20))
        .build()
        .unwrap();
    TestClient::connect_answering(
        server,
        ProtocolVersion::V2026_07_28,
        json!({ "extensions": { EXT: {} } }),
        None,
    )
    .await
    .unwrap()
}

async fn start(client: &TestClient, ms: u64, label: &str) -> String {
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": ms, "label": label } }),
        )
        .await
        .unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

async fn get(client: &TestClient, id: &str) -> Value {
    client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap()
}

/// Polls `tasks/get` until the task is terminal; how long that took.
async fn until_over(client: &TestClient, id: &str, within: Duration) -> (Value, Duration) {
    let t0 = Instant::now();
    loop {
        let task = get(client, id).await;
        if matches!(
            task["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        ) {
            return (task, t0.elapsed());
        }
        assert!(t0.elapsed() < within, "task {id} still {task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_for(what: &str, within: Duration, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(t0.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_instance_is_polled_and_finished_on_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let a = instance(&redis, "poll", Duration::from_secs(30)).await;
    let b = instance(&redis, "poll", Duration::from_secs(30)).await;
    let id = start(&a, 400, "poll").await;
    let seen = get(&b, &id).await;
    assert_eq!(seen["status"], "working", "{seen}");
    assert_eq!(seen["taskId"], id.as_str());
    let (done, _) = until_over(&b, &id, Duration::from_secs(10)).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "poll worked 400 ms");
    // Both instances agree, and another fleet on the same Redis does not see it.
    assert_eq!(get(&a, &id).await, done);
    let other = instance(&redis, "another-fleet", Duration::from_secs(30)).await;
    let unknown = other
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code.0, -32602, "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_through_another_instance_stops_the_work_within_a_third_of_the_lease() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let lease = Duration::from_millis(1500);
    let a = instance(&redis, "cancel", lease).await;
    let b = instance(&redis, "cancel", lease).await;
    let id = start(&a, 60_000, "cancel").await;
    let t0 = Instant::now();
    let ack = b
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete", "{ack}");
    // Cancelled in the store before the acknowledgement: both instances say so at once.
    for client in [&a, &b] {
        let task = get(client, &id).await;
        assert_eq!(task["status"], "cancelled", "{task}");
        assert_eq!(task["statusMessage"], "The task was cancelled by request");
    }
    // The work on the other instance stops at its next lease renewal (every 500 ms here).
    assert_eq!(cancellations("cancel"), 0, "stopped before A renewed");
    wait_for(
        "the work stopped",
        lease / 3 + Duration::from_millis(300),
        || cancellations("cancel") == 1,
    )
    .await;
    eprintln!("the cancel reached the work after {:?}", t0.elapsed());
    // The tool's own ending (its Err) did not overwrite the status.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(get(&a, &id).await["status"], "cancelled");
    // Cancelling again through either instance acknowledges (2026-07-28).
    let again = a
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(again["resultType"], "complete");
}

#[test]
fn a_task_whose_instance_stopped_ends_failed_when_its_lease_lapses() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let lease = Duration::from_secs(1);
    // Instance A runs on a runtime of its own, shut down under its feet: its work and its
    // lease renewals stop at once, as if the process had been killed.
    let a_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (polled, swept) = a_runtime.block_on(async {
        let a = instance(&redis, "lapse", lease).await;
        let polled = start(&a, 60_000, "lapse-polled").await;
        let swept = start(&a, 60_000, "lapse-swept").await;
        std::mem::forget(a);
        (polled, swept)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let b = instance(&redis, "lapse", lease).await;
        let store = RedisTaskStore::new(&redis_handle(&redis, "lapse").await);
        // Renewed while A lives.
        tokio::time::sleep(lease + Duration::from_millis(500)).await;
        assert_eq!(get(&b, &polled).await["status"], "working");
        a_runtime.shutdown_background();
        let killed = Instant::now();

        // Read through B: failed once the lease lapsed, never working forever.
        let (task, _) = until_over(&b, &polled, lease * 3).await;
        let after = killed.elapsed();
        assert_eq!(task["status"], "failed", "{task}");
        assert_eq!(
            task["statusMessage"],
            "The instance running this task stopped"
        );
        assert_eq!(task["error"]["code"], -32603, "{task}");
        assert!(after <= lease * 2, "failed {after:?} after the kill");
        eprintln!("failed {after:?} after the instance stopped (lease {lease:?})");

        // Nobody reads the other one: B's reaper ends it all the same.
        let t0 = Instant::now();
        loop {
            let record = store.get(&swept).await.unwrap().unwrap();
            if record.status == TaskStatus::Failed {
                assert_eq!(record.lease, None);
                break;
            }
            assert!(t0.elapsed() < lease * 3, "the reaper never ended {swept}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(cancellations("lapse-polled"), 0, "A's work died with it");
    });
}

async fn redis_handle(server: &RedisServer, fleet: &str) -> Redis {
    redis(server, fleet).await
}

fn record(id: &str, owner: &str, ttl: Duration) -> TaskRecord {
    let now = SystemTime::now();
    TaskRecord {
        id: id.into(),
        owner: owner.into(),
        client: None,
        tool: "t".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_at: now,
        last_updated_at: now,
        ttl: Some(ttl),
        poll_interval: Duration::from_millis(100),
        input_requests: Map::new(),
        outcome: None,
        revision: 0,
        lease: None,
    }
}

/// A record whose (stopped) instance's lease lapses at `lapses`.
fn leased(id: &str, ttl: Duration, lapses: SystemTime) -> TaskRecord {
    TaskRecord {
        lease: Some(Lease {
            instance: "stopped".into(),
            expires_at: lapses,
        }),
        ..record(id, "me", ttl)
    }
}

/// The members of a sorted set of the fleet, in score order.
async fn members(redis: &RedisServer, fleet: &str, name: &str) -> Vec<String> {
    let mut conn = redis_handle(redis, fleet).await.connection();
    redis::cmd("ZRANGE")
        .arg(format!("mcp:{fleet}:tasks:{name}"))
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_of_expired_tasks_do_not_hide_a_lapsed_task() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisTaskStore::new(&redis_handle(&redis, "stale").await);
    let limits = StoreLimits {
        max_per_owner: 10_000,
        max_total: 10_000,
    };
    // More dead tasks than one read of the leases takes (1,000): their instance stopped, and
    // their records expired before any reaper ended them.
    let t0 = SystemTime::now();
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..1_100 {
        let store = store.clone();
        let dead = leased(
            &format!("dead-{n}"),
            Duration::from_millis(300),
            t0 + Duration::from_millis(100),
        );
        calls.spawn(async move { store.create(dead, limits).await });
    }
    assert!(calls.join_all().await.iter().all(Result::is_ok));
    tokio::time::sleep(Duration::from_millis(400)).await;
    // A live task whose instance stopped: its lease lapsed after theirs.
    let hour = Duration::from_secs(3600);
    store
        .create(leased("alive", hour, SystemTime::now()), limits)
        .await
        .unwrap();

    assert_eq!(store.lapsed(SystemTime::now()).await.unwrap(), ["alive"]);
    // The dead ids' leases are gone, so they cost nothing at the next sweep.
    assert_eq!(members(&redis, "stale", "leases").await, ["alive"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_tasks_wait_for_the_reaper_and_no_longer_count_against_the_limit() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisTaskStore::new(&redis_handle(&redis, "sweep").await);
    let roomy = StoreLimits {
        max_per_owner: 100,
        max_total: 100,
    };
    let t0 = SystemTime::now();
    for id in ["a", "b", "c"] {
        let short = leased(id, Duration::from_millis(200), t0 + Duration::from_secs(60));
        store.create(short, roomy).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Expired tasks are not counted: a store of one takes a new task.
    let one = StoreLimits {
        max_per_owner: 1,
        max_total: 1,
    };
    let hour = Duration::from_secs(3600);
    store
        .create(leased("d", hour, t0 + Duration::from_secs(60)), one)
        .await
        .unwrap();
    let full = store.create(record("e", "you", hour), one).await;
    assert!(matches!(full, Err(TaskStoreError::Full(_))), "{full:?}");
    // The create left the expired ids to the reaper, which removes them with their leases.
    let mut swept = store.remove_expired(SystemTime::now()).await.unwrap();
    swept.sort();
    assert_eq!(swept, ["a", "b", "c"]);
    assert_eq!(members(&redis, "sweep", "leases").await, ["d"]);
    assert_eq!(members(&redis, "sweep", "all").await, ["d"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_hold_under_concurrent_creates_from_several_instances() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let stores = [
        RedisTaskStore::new(&redis_handle(&redis, "limits").await),
        RedisTaskStore::new(&redis_handle(&redis, "limits").await),
    ];
    let hour = Duration::from_secs(3600);
    let limits = StoreLimits {
        max_per_owner: 5,
        max_total: 12,
    };
    // 40 creates for one owner at once, half through each instance: exactly 5 get in.
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..40 {
        let store = stores[n % 2].clone();
        calls.spawn(async move {
            store
                .create(record(&format!("me-{n}"), "me", hour), limits)
                .await
        });
    }
    let results: Vec<_> = calls.join_all().await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 5, "{results:?}");
    assert!(
        results
            .iter()
            .all(|r| r.is_ok() || matches!(r, Err(TaskStoreError::Full(_))))
    );
    // 40 creates for 40 owners: the total (12, 5 of them taken) lets exactly 7 more in.
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..40 {
        let store = stores[n % 2].clone();
        calls.spawn(async move {
            let owner = format!("o{n}");
            store
                .create(record(&format!("x-{n}"), &owner, hour), limits)
                .await
        });
    }
    let ok = calls.join_all().await.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, 7);
    // A finished task makes room for its owner's next one.
    let (mine, _) = stores[0].list("me", None, 10).await.unwrap();
    assert_eq!(mine.len(), 5);
    let mut done = mine[0].clone();
    done.status = TaskStatus::Completed;
    assert_eq!(
        stores[1].update(done).await.unwrap(),
        UpdateOutcome::Written
    );
    let bigger = StoreLimits {
        max_per_owner: 5,
        max_total: 100,
    };
    stores[0]
        .create(record("me-new", "me", hour), bigger)
        .await
        .unwrap();
    let refused = stores[0]
        .create(record("me-newer", "me", hour), bigger)
        .await;
    assert!(
        matches!(refused, Err(TaskStoreError::Full(_))),
        "{refused:?}"
    );
    assert_eq!(stores[0].get(&mine[0].id).await.unwrap(), None);
}

/// A finished record: completed now (a little after the previous one).
async fn finish(store: &RedisTaskStore, id: &str) {
    tokio::time::sleep(Duration::from_millis(2)).await;
    let mut done = store.get(id).await.unwrap().unwrap();
    done.status = TaskStatus::Completed;
    done.last_updated_at = SystemTime::now();
    assert_eq!(store.update(done).await.unwrap(), UpdateOutcome::Written);
}

async fn held(store: &RedisTaskStore, ids: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for id in ids {
        if store.get(id).await.unwrap().is_some() {
            found.push(id.to_string());
        }
    }
    found
}

/// Issue #27: every record counts against its client, finished or not (one client's sessions
/// share its limit); finished ones make room, the one that finished first going first (the
/// client's own at its limit, anyone's when the store is full), before a task is refused; a
/// session's finished records go when it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_counts_against_its_client_and_finished_ones_make_room() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisTaskStore::new(&redis_handle(&redis, "bounds").await);
    let hour = Duration::from_secs(3600);
    let limits = StoreLimits {
        max_per_owner: 2,
        max_total: 3,
    };
    let of = |id: &str, session: &str, client: &str| TaskRecord {
        client: Some(client.into()),
        ..record(id, session, hour)
    };
    let all = ["a", "b", "c", "d", "e", "f"];
    // Two sessions of one client: one limit.
    store.create(of("a", "s1", "c1"), limits).await.unwrap();
    store.create(of("b", "s2", "c1"), limits).await.unwrap();
    let refused = store.create(of("c", "s3", "c1"), limits).await;
    assert!(
        matches!(refused, Err(TaskStoreError::Full(_))),
        "{refused:?}"
    );
    // At its limit, the client's own finished record makes room (b finished before a).
    finish(&store, "b").await;
    finish(&store, "a").await;
    store.create(of("c", "s3", "c1"), limits).await.unwrap();
    assert_eq!(held(&store, &all).await, ["a", "c"]);
    // A full store makes room with anyone's finished record.
    store.create(of("d", "s4", "c2"), limits).await.unwrap();
    store.create(of("e", "s5", "c3"), limits).await.unwrap();
    assert_eq!(held(&store, &all).await, ["c", "d", "e"]);
    // Nothing finished left: refused.
    let refused = store.create(of("f", "s6", "c4"), limits).await;
    assert!(
        matches!(refused, Err(TaskStoreError::Full(_))),
        "{refused:?}"
    );
    // A session's finished records go when it ends; its unfinished ones stay.
    finish(&store, "c").await;
    let roomy = StoreLimits {
        max_per_owner: 10,
        max_total: 10,
    };
    store.create(of("f", "s3", "c1"), roomy).await.unwrap();
    assert_eq!(store.remove_finished("s3").await.unwrap(), ["c"]);
    assert_eq!(held(&store, &all).await, ["d", "e", "f"]);
}

/// A record read back at the last revision there is: written over, it wraps instead of
/// panicking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poisoned_revision_does_not_panic_the_writer() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisTaskStore::new(&redis_handle(&redis, "poison").await);
    let mut poisoned = record("p", "me", Duration::from_secs(3600));
    poisoned.revision = u64::MAX;
    let roomy = StoreLimits {
        max_per_owner: 10,
        max_total: 10,
    };
    store.create(poisoned.clone(), roomy).await.unwrap();
    assert_eq!(
        store.update(poisoned).await.unwrap(),
        UpdateOutcome::Written
    );
    assert_eq!(store.get("p").await.unwrap().unwrap().revision, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_are_compare_and_set_listed_in_order_and_expire() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisTaskStore::new(&redis_handle(&redis, "records").await);
    let limits = StoreLimits {
        max_per_owner: 100,
        max_total: 100,
    };
    let hour = Duration::from_secs(3600);
    for id in ["z", "y", "x", "w"] {
        store.create(record(id, "me", hour), limits).await.unwrap();
    }
    store
        .create(record("v", "you", hour), limits)
        .await
        .unwrap();
    store
        .create(record("short", "me", Duration::from_millis(300)), limits)
        .await
        .unwrap();

    // Compare-and-set: the second writer of revision 0 loses and learns what is stored.
    let read = store.get("z").await.unwrap().unwrap();
    let mut first = read.clone();
    first.status = TaskStatus::Cancelled;
    assert_eq!(store.update(first).await.unwrap(), UpdateOutcome::Written);
    let mut late = read;
    late.status = TaskStatus::Completed;
    match store.update(late).await.unwrap() {
        UpdateOutcome::Stale(stored) => {
            assert_eq!((stored.status, stored.revision), (TaskStatus::Cancelled, 1))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.update(record("nope", "me", hour)).await.unwrap(),
        UpdateOutcome::Missing
    );

    // Pages of one owner, in creation order.
    let ids = |page: &[TaskRecord]| page.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    let (page, more) = store.list("me", None, 2).await.unwrap();
    assert_eq!(
        (ids(&page), more),
        (vec!["z".to_owned(), "y".to_owned()], true)
    );
    let (page, more) = store.list("me", Some("y"), 2).await.unwrap();
    assert_eq!(
        (ids(&page), more),
        (vec!["x".to_owned(), "w".to_owned()], true)
    );
    assert_eq!(page[0].status, TaskStatus::Working);

    // The short one is gone after its TTL: not read, not listed, and reaped once.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.get("short").await.unwrap(), None);
    let (page, more) = store.list("me", Some("w"), 10).await.unwrap();
    assert_eq!((ids(&page), more), (Vec::<String>::new(), false));
    assert_eq!(
        store.remove_expired(SystemTime::now()).await.unwrap(),
        ["short"]
    );
    assert!(
        store
            .remove_expired(SystemTime::now())
            .await
            .unwrap()
            .is_empty()
    );

    // Removal takes it out of the listing.
    store.remove("y").await.unwrap();
    let (page, _) = store.list("me", None, 10).await.unwrap();
    assert_eq!(ids(&page), ["z", "x", "w"]);
    // The Redis hash expires with the task: its TTL is set on the key.
    let mut conn = redis_handle(&redis, "records").await.connection();
    let pttl: i64 = redis::cmd("PTTL")
        .arg("mcp:records:task:z")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(pttl > 3_000_000 && pttl <= 3_600_000, "{pttl}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_is_a_clear_error_and_a_restart_recovers() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let lease = Duration::from_millis(900);
    let a = instance(&redis, "restart", lease).await;
    let id = start(&a, 60_000, "restart").await;
    assert_eq!(get(&a, &id).await["status"], "working");

    redis.kill();
    // The shared connection retries its reconnection a few times before a command fails
    // (see `Redis::connect`): a bounded wait, then a clear error.
    let t0 = Instant::now();
    let down = a
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap_err();
    eprintln!("with Redis down, tasks/get failed after {:?}", t0.elapsed());
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t0.elapsed()
    );
    assert_eq!(down.code.0, -32603, "{down:?}");
    assert!(
        down.message.contains("task store unavailable"),
        "{}",
        down.message
    );
    let refused = a
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 10, "label": "refused" } }),
        )
        .await
        .unwrap_err();
    assert!(
        refused.message.contains("task store unavailable"),
        "{refused:?}"
    );

    // Back, empty (no persistence): the task is unknown, its work is cancelled at the next
    // renewal, and new tasks work again.
    redis.restart();
    let t0 = Instant::now();
    let unknown = loop {
        match a.request("tasks/get", json!({ "taskId": id })).await {
            Err(e) if e.code.0 == -32602 => break e,
            other => {
                assert!(t0.elapsed() < Duration::from_secs(10), "{other:?}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert!(unknown.message.contains("Unknown task"), "{unknown:?}");
    wait_for("the orphaned work stopped", Duration::from_secs(5), || {
        cancellations("restart") == 1
    })
    .await;
    let fresh = start(&a, 50, "after-restart").await;
    let (done, _) = until_over(&a, &fresh, Duration::from_secs(5)).await;
    assert_eq!(done["status"], "completed", "{done}");
}
