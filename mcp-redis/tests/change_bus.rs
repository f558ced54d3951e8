//! `RedisChangeBus` against a real redis-server: two servers (instances), each with its own
//! `Catalog` handle and Redis connection, hear each other's changes on their listen streams,
//! once; after Redis restarts, every stream hears that everything changed, and changes flow
//! again; announcing while Redis is down neither blocks nor fails.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_redis::{Redis, RedisChangeBus};
use mcp_runtime::catalog::Catalog;
use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// A tool, so that tool list changes concern the server.
#[tool]
fn listed() -> &'static str {
    "here"
}

/// A resource to watch.
#[resource("memo://r/{name}")]
fn memo(name: String) -> String {
    name
}

async fn instance(url: &str) -> (Catalog, Server) {
    let redis = Redis::connect(url, "bus-test").await.unwrap();
    let changes = Catalog::new();
    let server = Server::builder()
        .catalog(changes.clone())
        .change_bus(RedisChangeBus::new(&redis))
        .build()
        .unwrap();
    (changes, server)
}

async fn listen(server: Server) -> Arc<TestClient> {
    let client = Arc::new(
        TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
            .await
            .unwrap(),
    );
    let listener = client.clone();
    tokio::spawn(async move {
        let _ = listener
            .request_with_id(
                1,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true,
                                         "resourceSubscriptions": ["memo://r/a"]}}),
            )
            .await;
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ack = client.take_notifications();
    assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged");
    client
}

/// The methods of the notifications that arrive within `wait`, once `want` have arrived or the
/// time is up.
async fn collect(client: &TestClient, want: usize, wait: Duration) -> Vec<String> {
    let deadline = Instant::now() + wait;
    let mut got: Vec<Value> = Vec::new();
    while got.len() < want && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        got.extend(client.take_notifications());
    }
    // Anything more (a duplicate) would show up shortly after.
    tokio::time::sleep(Duration::from_millis(100)).await;
    got.extend(client.take_notifications());
    got.iter()
        .map(|n| n["method"].as_str().unwrap().to_owned())
        .collect()
}

/// Like [`collect`], until each method of `want` has arrived at least once.
async fn collect_each(client: &TestClient, want: &[&str], wait: Duration) -> Vec<String> {
    let deadline = Instant::now() + wait;
    let mut got: Vec<String> = Vec::new();
    while !want.iter().all(|w| got.iter().any(|g| g == w)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        got.extend(methods(client.take_notifications()));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    got.extend(methods(client.take_notifications()));
    got
}

fn methods(notifications: Vec<Value>) -> impl Iterator<Item = String> {
    notifications
        .into_iter()
        .map(|n| n["method"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_hear_each_other_once_and_resync_after_a_redis_restart() {
    let Some(mut redis) = support::RedisServer::start() else {
        return;
    };
    let (a_changes, a) = instance(&redis.url()).await;
    let (b_changes, b) = instance(&redis.url()).await;
    let (on_a, on_b) = (listen(a).await, listen(b).await);
    // The subscriptions are up before the first publish.
    tokio::time::sleep(Duration::from_millis(200)).await;

    a_changes.tools_changed();
    b_changes.resource_updated("memo://r/a");
    let both = [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ];
    for (name, client) in [("a", &on_a), ("b", &on_b)] {
        let mut got = collect(client, 2, Duration::from_secs(5)).await;
        got.sort();
        let mut want = both.to_vec();
        want.sort();
        assert_eq!(got, want, "instance {name}: each change once");
    }

    // Redis goes away: announcing neither blocks nor fails, and the instance's own streams
    // still hear at once.
    redis.kill();
    let started = Instant::now();
    a_changes.tools_changed();
    assert!(started.elapsed() < Duration::from_millis(50));
    assert_eq!(
        collect(&on_a, 1, Duration::from_secs(2)).await,
        ["notifications/tools/list_changed"]
    );

    // Back, empty: every stream is told everything it watches may have changed. The change
    // `a` announced during the outage may reach `b` too, late: the publisher retries a
    // message for about a second so that the first change after an outage is not lost, and
    // the restart can fall within that second.
    redis.restart();
    for (name, client, late) in [("a", &on_a, 0), ("b", &on_b, 1)] {
        let mut got = collect_each(client, &both, Duration::from_secs(15)).await;
        got.sort();
        let heard = got.len();
        got.dedup();
        let extra = heard - got.len();
        let mut want = both.to_vec();
        want.sort();
        assert_eq!(got, want, "instance {name}: resync after the restart");
        assert!(
            extra <= late,
            "instance {name}: {extra} notifications more than the resync"
        );
    }

    // And changes flow between instances again.
    b_changes.tools_changed();
    assert_eq!(
        collect(&on_a, 1, Duration::from_secs(5)).await,
        ["notifications/tools/list_changed"]
    );
}

/// Changes a publisher had to drop (its queue overflowed; likewise when Redis refused them)
/// are not lost in silence: once it publishes again, every other instance hears that
/// everything its streams watch may have changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_a_publisher_dropped_make_the_other_instances_refetch() {
    let Some(redis) = support::RedisServer::start() else {
        return;
    };
    let (a_changes, _a) = instance(&redis.url()).await;
    let (_b_changes, b) = instance(&redis.url()).await;
    let on_b = listen(b).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Far more than the publisher's queue holds, at once, all about a resource `b`'s stream
    // does not watch: alone, they would tell it nothing.
    for _ in 0..20_000 {
        a_changes.resource_updated("memo://r/unwatched");
    }
    let want = [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ];
    let got = collect_each(&on_b, &want, Duration::from_secs(15)).await;
    for method in want {
        assert!(
            got.iter().any(|g| g == method),
            "b was not told to refetch: {got:?}"
        );
    }
}
