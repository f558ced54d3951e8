//! Context features through the in-process client: progress and logging, in both eras.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::LogLevel;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// Counts to three, reporting progress and logging at several levels.
#[tool]
async fn count(ctx: Context) -> &'static str {
    for step in [1.0, 2.0, 2.0, 3.0] {
        ctx.progress(step, Some(3.0), Some("counting"));
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    ctx.debug("a detail");
    ctx.warning(json!({"note": "something odd"}));
    ctx.log_as(LogLevel::Error, Some("counter"), "an error");
    "done"
}

fn of(notes: &[Value], method: &str) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n["method"] == method)
        .map(|n| n["params"].clone())
        .collect()
}

async fn session(version: ProtocolVersion) -> TestClient {
    TestClient::connect_to(Server::builder().build().unwrap(), version)
        .await
        .unwrap()
}

#[tokio::test]
async fn progress_echoes_the_token_increases_and_needs_a_token() {
    let client = session(ProtocolVersion::V2025_11_25).await;
    for token in [json!("tok-1"), json!(42)] {
        let r = client
            .request(
                "tools/call",
                json!({"name": "count", "_meta": {"progressToken": token}}),
            )
            .await
            .unwrap();
        assert_eq!(r["content"][0]["text"], "done");
        let progress = of(&client.take_notifications(), "notifications/progress");
        let values: Vec<f64> = progress
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert_eq!(values, [1.0, 2.0, 3.0], "the repeated 2 is dropped");
        assert!(progress.iter().all(|p| p["progressToken"] == token
            && p["total"] == 3.0
            && p["message"] == "counting"));
    }
    client.call_tool("count", json!({})).await.unwrap();
    assert!(
        of(&client.take_notifications(), "notifications/progress").is_empty(),
        "no token, no progress"
    );
}

#[tokio::test]
async fn session_logging_follows_set_level() {
    let client = session(ProtocolVersion::V2025_11_25).await;
    client.call_tool("count", json!({})).await.unwrap();
    let levels = |notes: Vec<Value>| -> Vec<String> {
        of(&notes, "notifications/message")
            .iter()
            .map(|m| m["level"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        levels(client.take_notifications()),
        ["debug", "warning", "error"],
        "everything until setLevel"
    );
    assert_eq!(
        client
            .request("logging/setLevel", json!({"level": "warning"}))
            .await
            .unwrap(),
        json!({})
    );
    client.call_tool("count", json!({})).await.unwrap();
    let notes = client.take_notifications();
    assert_eq!(levels(notes.clone()), ["warning", "error"]);
    let error = &of(&notes, "notifications/message")[1];
    assert_eq!(error["logger"], "counter");
    let e = client
        .request("logging/setLevel", json!({"level": "loud"}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32602);
}

#[tokio::test]
async fn stateless_logging_needs_the_request_level() {
    let client = TestClient::stateless().await;
    client.call_tool("count", json!({})).await.unwrap();
    assert!(
        of(&client.take_notifications(), "notifications/message").is_empty(),
        "no logLevel, no logs"
    );
    client
        .request(
            "tools/call",
            json!({"name": "count", "_meta": {"io.modelcontextprotocol/logLevel": "error"}}),
        )
        .await
        .unwrap();
    let logs = of(&client.take_notifications(), "notifications/message");
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0]["level"], "error");
    let e = client
        .request(
            "tools/call",
            json!({"name": "count", "_meta": {"io.modelcontextprotocol/logLevel": "loud"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32602, "an invalid level is invalid params");
    let e = client
        .request("logging/setLevel", json!({"level": "info"}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32601, "2026-07-28 has no logging/setLevel");
}

#[tokio::test]
async fn nothing_is_sent_after_the_result() {
    let client = session(ProtocolVersion::V2025_11_25).await;
    let r = client
        .request(
            "tools/call",
            json!({"name": "count", "_meta": {"progressToken": 1}}),
        )
        .await
        .unwrap();
    assert_eq!(r["content"][0]["text"], "done");
    client.take_notifications();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(client.take_notifications().is_empty());
}
