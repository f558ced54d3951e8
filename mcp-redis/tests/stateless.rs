//! The 2026-07-28 era needs nothing shared per request: a server with every Redis store of
//! this crate attached answers `tools/call` and `tools/list` without one Redis command
//! (`INFO commandstats` is unchanged over the run, but for the change bus's keep-alive pings
//! and the INFO calls themselves).

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_redis::{Redis, RedisChangeBus};
use mcp_runtime::client::{Client, Protocol};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::HttpConfig;
use mcp_runtime::{Changes, Server};
use serde_json::json;

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

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
        .changes(Changes::new())
        .change_bus(RedisChangeBus::new(&redis))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let config = HttpConfig::new("127.0.0.1:0");
    tokio::spawn(mcp_runtime::transport::serve_http_on(
        server, listener, config,
    ));
    let client = Client::builder()
        .protocol(Protocol::Stateless)
        .connect(&url)
        .await
        .unwrap();
    // Warm up (the bus subscribes), then count.
    assert_eq!(
        client
            .call_tool_as::<i64>("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap(),
        3
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
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
    assert!(!before.is_empty(), "the counters work: the bus subscribed");
    assert_eq!(before, after, "no Redis command per stateless request");
}
