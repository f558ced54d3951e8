//! `RedisStateGuard` against a real redis-server: a state is used once across instances,
//! Redis forgets it when it expires, the guard fails closed while Redis is down and works
//! again once the shared connection has reconnected.

mod support;

use std::time::{Duration, Instant, SystemTime};

use mcp_redis::{Redis, RedisStateGuard};
use mcp_runtime::ProtocolVersion;
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::request_state::RequestStateGuard;
use mcp_runtime::testing::TestClient;
use serde_json::{Value, json};

fn in_a_minute() -> SystemTime {
    SystemTime::now() + Duration::from_secs(60)
}

#[tokio::test]
async fn a_state_is_used_once_across_the_fleet() {
    let Some(server) = support::RedisServer::start() else {
        return;
    };
    // Two instances, each with its own connection.
    let one = RedisStateGuard::new(&Redis::connect(&server.url(), "f").await.unwrap());
    let two = RedisStateGuard::new(&Redis::connect(&server.url(), "f").await.unwrap());
    assert!(one.first_use("n1", in_a_minute()).await.unwrap());
    assert!(!two.first_use("n1", in_a_minute()).await.unwrap());
    assert!(!one.first_use("n1", in_a_minute()).await.unwrap());
    assert!(two.first_use("n2", in_a_minute()).await.unwrap());
    // Another fleet on the same Redis has its own nonces.
    let other = RedisStateGuard::new(&Redis::connect(&server.url(), "g").await.unwrap());
    assert!(other.first_use("n1", in_a_minute()).await.unwrap());
    // One SET per use, nothing else.
    let calls = server.command_calls();
    assert_eq!(calls.get("set"), Some(&5), "{calls:?}");
}

#[tokio::test]
async fn redis_forgets_a_nonce_when_its_state_expires() {
    let Some(server) = support::RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&server.url(), "f").await.unwrap();
    let guard = RedisStateGuard::new(&redis);
    assert!(guard.first_use("n", in_a_minute()).await.unwrap());
    let mut conn = redis.connection();
    let ttl: i64 = redis::cmd("PTTL")
        .arg("mcp:f:rs:n")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!((58_000..=60_000).contains(&ttl), "{ttl}");
    // An expiry already past is kept a second, not written expired (which would let the
    // state through again at once).
    assert!(
        guard
            .first_use("late", SystemTime::UNIX_EPOCH)
            .await
            .unwrap()
    );
    assert!(
        !guard
            .first_use("late", SystemTime::UNIX_EPOCH)
            .await
            .unwrap()
    );
    let ttl: i64 = redis::cmd("PTTL")
        .arg("mcp:f:rs:late")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!((1..=1_000).contains(&ttl), "{ttl}");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert!(
        guard
            .first_use("late", SystemTime::UNIX_EPOCH)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn while_redis_is_down_the_guard_fails_closed_then_recovers() {
    let Some(mut server) = support::RedisServer::start() else {
        return;
    };
    let guard = RedisStateGuard::new(&Redis::connect(&server.url(), "f").await.unwrap());
    assert!(guard.first_use("before", in_a_minute()).await.unwrap());
    server.kill();
    // Errors, not `true`, and within the guard's timeout (2 s) rather than hanging.
    for _ in 0..3 {
        let started = Instant::now();
        let e = guard.first_use("during", in_a_minute()).await;
        assert!(e.is_err(), "{e:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{e:?}");
    }
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match guard.first_use("after", in_a_minute()).await {
            Ok(first) => {
                assert!(first);
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "no reconnect: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    assert!(!guard.first_use("after", in_a_minute()).await.unwrap());
}

/// Asks for the client's roots (no form, so the test needs no schema crate), then answers.
#[tool]
async fn count_roots(ctx: Context) -> Result<String, McpError> {
    Ok(ctx.roots().await?.len().to_string())
}

async fn instance(guard: RedisStateGuard) -> TestClient {
    let server = mcp_runtime::Server::builder()
        .name("fleet")
        .request_state_key([3u8; 32])
        .request_state_guard(guard)
        .build()
        .unwrap();
    TestClient::connect_answering(
        server,
        ProtocolVersion::V2026_07_28,
        json!({"roots": {}}),
        None,
    )
    .await
    .unwrap()
}

fn answered(call: &Value, round: &Value) -> Value {
    let mut next = call.clone();
    next["requestState"] = round["requestState"].clone();
    next["inputResponses"] = json!({"roots-0": {"roots": [{"uri": "file:///a"}]}});
    next
}

#[tokio::test]
async fn servers_sharing_redis_refuse_a_replay_and_fail_closed_without_it() {
    let Some(mut server) = support::RedisServer::start() else {
        return;
    };
    let a = instance(RedisStateGuard::new(
        &Redis::connect(&server.url(), "f").await.unwrap(),
    ))
    .await;
    let b = instance(RedisStateGuard::new(
        &Redis::connect(&server.url(), "f").await.unwrap(),
    ))
    .await;
    let call = json!({"name": "count_roots", "arguments": {}});
    let r1 = a.request("tools/call", call.clone()).await.unwrap();
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    // A first round touches no store.
    assert_eq!(server.command_calls().get("set"), None);
    let retry = answered(&call, &r1);
    let done = b.request("tools/call", retry.clone()).await.unwrap();
    assert_eq!(done["content"][0]["text"], "1", "{done}");
    let e = a.request("tools/call", retry).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e}");
    assert!(e.message.contains("used already"), "{e}");
    // Redis down: the retry fails with -32603 and does not run.
    let r1 = a.request("tools/call", call.clone()).await.unwrap();
    server.kill();
    let e = b
        .request("tools/call", answered(&call, &r1))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e}");
    assert!(e.message.contains("single-use guard is unavailable"), "{e}");
    // Back up: the same state (never recorded) goes through once the connection is back.
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match b.request("tools/call", answered(&call, &r1)).await {
            Ok(done) => {
                assert_eq!(done["content"][0]["text"], "1", "{done}");
                break;
            }
            Err(e) => {
                assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e}");
                assert!(Instant::now() < deadline, "no reconnect: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
