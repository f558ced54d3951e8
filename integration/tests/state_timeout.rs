//! Shared state injection and the per-request timeout.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::json;

struct Counter(AtomicU64);

struct Greeting(String);

/// Counts calls in shared state; the state parameters are not arguments.
#[tool]
async fn bump(counter: State<Counter>, by: u64, greeting: &State<Greeting>) -> String {
    let now = counter.0.fetch_add(by, Ordering::Relaxed) + by;
    format!("{} {now}", greeting.0)
}

/// Takes a state nobody registered.
#[tool]
fn needs_missing(_missing: State<Vec<u8>>) -> &'static str {
    "unreachable"
}

/// Sleeps longer than the test's timeout.
#[tool]
async fn overslept(ctx: Context) -> &'static str {
    tokio::time::sleep(Duration::from_secs(10)).await;
    let _ = ctx;
    "woke"
}

fn server() -> Server {
    Server::builder()
        .state(Counter(AtomicU64::new(0)))
        .state(Greeting("count".into()))
        .request_timeout(Duration::from_millis(200))
        .build()
        .unwrap()
}

#[tokio::test]
async fn state_is_shared_and_not_in_the_schema() {
    let server = server();
    let bump = server.tools().find(|t| t.name == "bump").unwrap();
    assert_eq!(bump.input_schema["required"], json!(["by"]));
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("bump", json!({"by": 2}))
            .await
            .unwrap()
            .text(),
        "count 2"
    );
    assert_eq!(
        client
            .call_tool("bump", json!({"by": 3}))
            .await
            .unwrap()
            .text(),
        "count 5"
    );
}

#[tokio::test]
async fn a_missing_state_is_a_clear_error() {
    let client = TestClient::connect_to(server(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let e = client
        .call_tool("needs_missing", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32603);
    assert!(
        e.message
            .contains("no State<alloc::vec::Vec<u8>> was registered"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn requests_past_the_timeout_are_cancelled_with_an_error() {
    let client = TestClient::connect_to(server(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let start = std::time::Instant::now();
    let e = client.call_tool("overslept", json!({})).await.unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(e.code.0, -32603);
    assert!(
        e.message.contains("timed out after 200 ms"),
        "{}",
        e.message
    );
    assert_eq!(
        client
            .call_tool("bump", json!({"by": 1}))
            .await
            .unwrap()
            .text(),
        "count 1"
    );
}
