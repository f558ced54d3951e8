//! The 2026-07-28 era needs nothing shared per request: a server with every Redis store of
//! this crate attached, as examples/fleet attaches them (change bus, task store, session
//! store, event store, and the requestState guard), answers `tools/call` and `tools/list`
//! without one Redis command. `INFO commandstats` is unchanged over the run but for what no
//! request causes: the INFO calls themselves, the change bus's keep-alive PINGs, and the
//! event store's lease renewal (a SET on a timer, kept out of the run by a long lease).

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_redis::{
    Redis, RedisChangeBus, RedisEventStore, RedisSessionStore, RedisStateGuard, RedisTaskStore,
};
use mcp_runtime::catalog::Catalog;
use mcp_runtime::client::{Client, ProtocolChoice};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::HttpConfig;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::json;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The event store's lease: renewed once when the store starts, then every third of it, so
/// not again during the run.
const LEASE: Duration = Duration::from_secs(3600);

/// Commands other than the ones that watch (INFO, PING).
fn work(calls: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    calls
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "info" | "ping"))
        .map(|(name, n)| (name.clone(), *n))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_calls_send_no_command_to_redis() {
    let Some(redis_server) = support::RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url(), "stateless")
        .await
        .unwrap();
    let server = Server::builder()
        .catalog(Catalog::new())
        .change_bus(RedisChangeBus::new(&redis))
        .task_store(RedisTaskStore::new(&redis))
        .request_state_keys([[7u8; 32]])
        .request_state_guard(RedisStateGuard::new(&redis))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = HttpConfig::new("127.0.0.1:0")
        .session_store(Arc::new(RedisSessionStore::new(&redis)))
        .event_store(Arc::new(RedisEventStore::new(&redis).with_lease(LEASE)));
    tokio::spawn(mcp_runtime::transport::serve_http_on(
        server, listener, config,
    ));
    let client = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .connect(&url)
        .await
        .unwrap();
    // Warm up (the bus subscribes, the event store takes its lease), then count.
    assert_eq!(
        client
            .call_tool_as::<i64>("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap(),
        3
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let before = work(&redis_server.command_calls());
    for i in 0..200 {
        let sum: i64 = client
            .call_tool_as("add", json!({"a": i, "b": 1}))
            .await
            .unwrap();
        assert_eq!(sum, i + 1);
    }
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    let after = work(&redis_server.command_calls());
    assert!(
        started.elapsed() < LEASE / 3,
        "the lease renewal may have run"
    );
    assert!(!before.is_empty(), "the counters work: the bus subscribed");
    assert_eq!(before, after, "no Redis command per stateless request");

    // The stores are attached: a legacy session is saved in Redis at once.
    let legacy = Client::builder()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .connect(&url)
        .await
        .unwrap();
    assert_eq!(
        legacy
            .call_tool_as::<i64>("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap(),
        2
    );
    let saved = work(&redis_server.command_calls());
    assert!(
        saved.get("evalsha") > before.get("evalsha"),
        "the session store saw no session: {saved:?}"
    );
}
