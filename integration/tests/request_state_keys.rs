//! The `requestState` key ring across instances: rounds of one 2026-07-28 request served by
//! different servers that share a ring, mismatched rings and audiences refused (-32602), key
//! rotation with states in flight, the single-use guard, and `run!()`'s environment variables.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::request_state::{GuardFuture, MemoryStateGuard, RequestStateGuard};
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server, ServerBuilder};
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Word {
    word: String,
}

/// Asks three times, one after the other, and joins the answers (`n` tells calls apart).
#[tool]
async fn three_words(ctx: Context, n: u32) -> Result<String, McpError> {
    let mut words = Vec::new();
    for question in ["First?", "Second?", "Third?"] {
        let answer = ctx.elicit::<Word>(question).await?;
        words.push(answer.accepted().map_or("-".into(), |w| w.word));
    }
    Ok(format!("{n}: {}", words.join(" ")))
}

static ORDERS: AtomicUsize = AtomicUsize::new(0);

/// Asks once, then does what must not happen twice (only the guard test calls it).
#[tool]
async fn place_order(ctx: Context) -> Result<String, McpError> {
    let answer = ctx.elicit::<Word>("What?").await?;
    ORDERS.fetch_add(1, Ordering::SeqCst);
    Ok(answer.accepted().map_or("-".into(), |w| w.word))
}

const OLD: [u8; 32] = [0x11; 32];
const NEW: [u8; 32] = [0x22; 32];

async fn instance(builder: ServerBuilder) -> TestClient {
    TestClient::connect_answering(
        builder.build().unwrap(),
        ProtocolVersion::V2026_07_28,
        json!({"elicitation": {"form": {}}}),
        None,
    )
    .await
    .unwrap()
}

fn fleet() -> ServerBuilder {
    Server::builder().name("fleet")
}

fn call(n: usize) -> Value {
    json!({"name": "three_words", "arguments": {"n": n}})
}

/// The next round of `call`: answers `key` and carries the state of `previous`.
fn retry(call: &Value, previous: &Value, key: &str, word: &str) -> Value {
    let mut next = call.clone();
    next["requestState"] = previous["requestState"].clone();
    next["inputResponses"] = json!({key: {"action": "accept", "content": {"word": word}}});
    next
}

fn assert_refused(e: &McpError, says: &str) {
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e}");
    assert!(e.message.contains(says), "{e}");
}

#[tokio::test]
async fn rounds_of_one_request_alternate_between_instances_sharing_a_ring() {
    let a = instance(fleet().request_state_keys([NEW, OLD])).await;
    let b = instance(fleet().request_state_keys([NEW, OLD])).await;
    for n in 0..10 {
        let call = call(n);
        // Which instance serves which round alternates from call to call.
        let (first, second) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let r1 = first.request("tools/call", call.clone()).await.unwrap();
        assert_eq!(r1["resultType"], "input_required", "{r1}");
        let r2 = second
            .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
            .await
            .unwrap();
        assert_eq!(r2["resultType"], "input_required", "{r2}");
        assert!(r2["inputRequests"]["elicit-1"].is_object(), "{r2}");
        let r3 = first
            .request("tools/call", retry(&call, &r2, "elicit-1", "green"))
            .await
            .unwrap();
        assert!(r3["inputRequests"]["elicit-2"].is_object(), "{r3}");
        let done = second
            .request("tools/call", retry(&call, &r3, "elicit-2", "blue"))
            .await
            .unwrap();
        assert_eq!(done["resultType"], "complete", "{done}");
        assert_eq!(
            done["content"][0]["text"],
            format!("{n}: red green blue"),
            "{done}"
        );
    }
}

#[tokio::test]
async fn instances_with_other_keys_refuse_every_state() {
    // The negative control: one instance with its own configured key, one with a random one.
    let a = instance(fleet().request_state_key(OLD)).await;
    for b in [
        instance(fleet().request_state_key(NEW)).await,
        instance(fleet()).await,
    ] {
        for n in 0..10 {
            let call = call(n);
            let r1 = a.request("tools/call", call.clone()).await.unwrap();
            let e = b
                .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
                .await
                .unwrap_err();
            assert_refused(&e, "issued by a key this server does not hold");
        }
    }
}

#[tokio::test]
async fn a_rotation_keeps_states_in_flight_working() {
    let call = call(0);
    // [old]: a state is issued.
    let before = instance(fleet().request_state_keys([OLD])).await;
    let r1 = before.request("tools/call", call.clone()).await.unwrap();
    // [new, old] on every instance: the state sealed with `old` still opens, and the next
    // one is sealed with `new`.
    let during = instance(fleet().request_state_keys([NEW, OLD])).await;
    let r2 = during
        .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
        .await
        .unwrap();
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    // An instance not rotated yet cannot open it: a clear error, so the client starts over.
    let e = before
        .request("tools/call", retry(&call, &r2, "elicit-1", "green"))
        .await
        .unwrap_err();
    assert_refused(&e, "a key this server does not hold");
    // [new]: states sealed with `new` open; those sealed with `old` no longer do.
    let after = instance(fleet().request_state_keys([NEW])).await;
    let r3 = after
        .request("tools/call", retry(&call, &r2, "elicit-1", "green"))
        .await
        .unwrap();
    assert!(r3["inputRequests"]["elicit-2"].is_object(), "{r3}");
    let e = after
        .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
        .await
        .unwrap_err();
    assert_refused(&e, "a key this server does not hold");
}

#[tokio::test]
async fn the_audience_is_the_fleet_not_the_instance() {
    let call = call(0);
    let weather = instance(Server::builder().name("weather").request_state_key(OLD)).await;
    let r1 = weather.request("tools/call", call.clone()).await.unwrap();
    // The same keys, another server name: refused.
    let billing = instance(Server::builder().name("billing").request_state_key(OLD)).await;
    let e = billing
        .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
        .await
        .unwrap_err();
    assert_refused(&e, "another audience");
    // An explicit audience: instances of one fleet agree on it whatever their names.
    let aud = |name: &str| {
        Server::builder()
            .name(name)
            .request_state_key(OLD)
            .request_state_audience("forecasts")
    };
    let (one, two) = (
        instance(aud("weather-1")).await,
        instance(aud("weather-2")).await,
    );
    let r1 = one.request("tools/call", call.clone()).await.unwrap();
    let r2 = two
        .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
        .await
        .unwrap();
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    // The server named like the audience is not of that fleet unless it says so.
    let e = weather
        .request("tools/call", retry(&call, &r2, "elicit-1", "green"))
        .await
        .unwrap_err();
    assert_refused(&e, "another audience");
}

#[test]
fn a_ring_with_a_short_or_no_key_is_refused() {
    let e = Server::builder()
        .request_state_keys([&NEW[..], &OLD[..31]])
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            mcp_runtime::BuildError::WeakRequestStateKey { index: 1, len: 31 }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("key 2 of the ring is 31 bytes"),
        "{e}"
    );
    let e = Server::builder()
        .request_state_keys(Vec::<Vec<u8>>::new())
        .build()
        .unwrap_err();
    assert!(
        matches!(e, mcp_runtime::BuildError::NoRequestStateKeys),
        "{e:?}"
    );
    let e = Server::builder()
        .request_state_audience("")
        .build()
        .unwrap_err();
    assert!(
        matches!(e, mcp_runtime::BuildError::EmptyRequestStateAudience),
        "{e:?}"
    );
}

#[tokio::test]
async fn with_a_guard_a_state_is_good_for_one_retry() {
    // Two instances sharing one guard (as a fleet shares Redis).
    let guard = Arc::new(MemoryStateGuard::new());
    let a = instance(
        fleet()
            .request_state_key(OLD)
            .request_state_guard(guard.clone()),
    )
    .await;
    let b = instance(
        fleet()
            .request_state_key(OLD)
            .request_state_guard(guard.clone()),
    )
    .await;
    let call = call(0);
    let r1 = a.request("tools/call", call.clone()).await.unwrap();
    let round2 = retry(&call, &r1, "elicit-0", "red");
    let r2 = b.request("tools/call", round2.clone()).await.unwrap();
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    // The same state again, on either instance, with the same or other answers: refused.
    for (who, replay) in [
        (&a, round2.clone()),
        (&b, round2.clone()),
        (&a, retry(&call, &r1, "elicit-0", "mallory")),
    ] {
        let e = who.request("tools/call", replay).await.unwrap_err();
        assert_refused(&e, "used already");
    }
    // The fresh state goes on, once.
    let r3 = a
        .request("tools/call", retry(&call, &r2, "elicit-1", "green"))
        .await
        .unwrap();
    let last = retry(&call, &r3, "elicit-2", "blue");
    let done = b.request("tools/call", last.clone()).await.unwrap();
    assert_eq!(done["content"][0]["text"], "0: red green blue", "{done}");
    let e = a.request("tools/call", last).await.unwrap_err();
    assert_refused(&e, "used already");
    assert_eq!(guard.len(), 3, "one nonce per state used");
    // A first round carries no state, so it needs no guard.
    let r = a.request("tools/call", call.clone()).await.unwrap();
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert_eq!(guard.len(), 3);
    // A replayed last round does not run the tool again: with the guard it is refused before
    // the tool runs; without one (the default) it runs once more.
    let order = json!({"name": "place_order", "arguments": {}});
    let unguarded = instance(fleet().request_state_key(OLD)).await;
    for (server, guarded) in [(&a, true), (&unguarded, false)] {
        let before = ORDERS.load(Ordering::SeqCst);
        let r1 = server.request("tools/call", order.clone()).await.unwrap();
        let last = retry(&order, &r1, "elicit-0", "tea");
        let done = server.request("tools/call", last.clone()).await.unwrap();
        assert_eq!(done["content"][0]["text"], "tea", "{done}");
        let replay = server.request("tools/call", last).await;
        if guarded {
            assert_refused(&replay.unwrap_err(), "used already");
            assert_eq!(ORDERS.load(Ordering::SeqCst), before + 1);
        } else {
            assert_eq!(replay.unwrap()["content"][0]["text"], "tea");
            assert_eq!(ORDERS.load(Ordering::SeqCst), before + 2);
        }
    }
}

/// A guard whose store is down, or hangs.
struct Broken {
    hang: bool,
}

impl RequestStateGuard for Broken {
    fn first_use<'a>(&'a self, _id: &'a str, _expires: SystemTime) -> GuardFuture<'a> {
        let hang = self.hang;
        Box::pin(async move {
            if hang {
                std::future::pending::<()>().await;
            }
            Err("connection refused (redis://10.0.0.9:6379)".into())
        })
    }
}

#[tokio::test]
async fn a_guard_that_fails_or_hangs_fails_the_request_closed() {
    let call = call(0);
    for hang in [false, true] {
        let c = instance(
            fleet()
                .request_state_key(OLD)
                .request_state_guard(Broken { hang }),
        )
        .await;
        let r1 = c.request("tools/call", call.clone()).await.unwrap();
        let started = std::time::Instant::now();
        let e = c
            .request("tools/call", retry(&call, &r1, "elicit-0", "red"))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e}");
        assert!(e.message.contains("single-use guard is unavailable"), "{e}");
        // The store's address is logged, not sent to the client.
        assert!(!e.message.contains("10.0.0.9"), "{e}");
        if hang {
            let waited = started.elapsed();
            assert!(
                waited >= Duration::from_secs(4) && waited < Duration::from_secs(8),
                "{waited:?}"
            );
        }
    }
}

/// `run!()` reads the ring from the environment: a malformed value stops the server at
/// start-up with an error naming the variable (and never the key).
#[test]
fn run_reads_the_ring_from_the_environment_and_refuses_a_bad_one() {
    let exe = support::interop::build_examples(&["quickstart"])
        .unwrap()
        .remove(0);
    let short = "ab".repeat(20);
    for (keys, audience, says) in [
        (
            short.as_str(),
            None,
            "error: MCP_REQUEST_STATE_KEYS: key 1 has 40 hex digits",
        ),
        ("", None, "error: MCP_REQUEST_STATE_KEYS: set but empty"),
        (
            &*format!("{},zz", "0".repeat(64)),
            None,
            "error: MCP_REQUEST_STATE_KEYS: key 2 is not hexadecimal",
        ),
        (
            &*"0".repeat(64),
            Some(""),
            "error: MCP_REQUEST_STATE_AUDIENCE: set but empty",
        ),
    ] {
        let mut cmd = std::process::Command::new(&exe);
        cmd.env("MCP_REQUEST_STATE_KEYS", keys)
            .stdin(std::process::Stdio::null());
        if let Some(audience) = audience {
            cmd.env("MCP_REQUEST_STATE_AUDIENCE", audience);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{keys:?}: {stderr}");
        assert!(stderr.contains(says), "{keys:?}: {stderr}");
        assert!(!stderr.contains(&short), "the key is echoed: {stderr}");
    }
}

/// Serving HTTP on an address other than loopback with no key configured warns at start-up;
/// with `MCP_REQUEST_STATE_KEYS` it does not, nor on loopback.
#[test]
fn an_ephemeral_key_on_a_public_bind_is_a_start_up_warning() {
    let exe = support::interop::build_examples(&["quickstart"])
        .unwrap()
        .remove(0);
    let warned = |addr: &str, keys: Option<&str>| {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["--http", addr])
            .env("RUST_LOG", "warn,mcp_runtime=info")
            .env_remove("MCP_REQUEST_STATE_KEYS")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        if let Some(keys) = keys {
            cmd.env("MCP_REQUEST_STATE_KEYS", keys);
        }
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let mut lines = Vec::new();
        // The warning follows the "serving MCP on" line at once; one more line or a short
        // wait after it settles it.
        while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
            let serving = line.contains("serving MCP on");
            lines.push(line);
            if serving {
                if let Ok(next) = rx.recv_timeout(Duration::from_millis(500)) {
                    lines.push(next);
                }
                break;
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            lines.iter().any(|l| l.contains("serving MCP on")),
            "{lines:#?}"
        );
        lines
            .iter()
            .any(|l| l.contains("WARN") && l.contains("no requestState key is configured"))
    };
    assert!(warned("0.0.0.0:0", None));
    assert!(!warned("0.0.0.0:0", Some(&"ab".repeat(32))));
    assert!(!warned("127.0.0.1:0", None));
}
