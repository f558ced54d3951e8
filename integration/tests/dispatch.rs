//! The dispatcher through the in-process client: lifecycle, both eras, errors, pagination,
//! tool calls and their result shapes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// Add two numbers.
#[tool]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Multiply, synchronously (runs on the blocking pool).
#[tool]
fn multiply(a: i64, b: i64) -> i64 {
    a * b
}

#[derive(Serialize, JsonSchema)]
struct Stats {
    count: usize,
    mean: f64,
}

/// Statistics of a list.
#[tool]
async fn stats(values: Vec<f64>) -> Result<Stats, String> {
    if values.is_empty() {
        return Err("no values".into());
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    Ok(Stats {
        count: values.len(),
        mean,
    })
}

#[tool]
async fn echo(text: String, times: Option<usize>) -> String {
    text.repeat(times.unwrap_or(1))
}

#[tool]
async fn nothing() {}

#[tool]
async fn pictures() -> Vec<Content> {
    vec![
        Content::text("two pixels"),
        Content::image(&[0x89, 0x50], "image/png"),
    ]
}

#[tool]
async fn wrapped_name(name: String) -> Json<String> {
    Json(name)
}

#[tool]
async fn raw_result() -> CallToolResult {
    CallToolResult::error("custom failure")
}

#[tool]
async fn boom() -> i64 {
    panic!("tool exploded")
}

#[tool(
    name = "renamed-tool",
    title = "A renamed tool",
    description = "Overrides the doc comment."
)]
/// This doc comment is not the description.
async fn some_fn_name() -> &'static str {
    "ok"
}

#[tool]
async fn with_context(ctx: Context, label: String) -> String {
    format!("{label}:{}:{}", ctx.protocol_version(), ctx.request_id())
}

static DROPPED: AtomicBool = AtomicBool::new(false);
static STARTED: AtomicBool = AtomicBool::new(false);

struct SetOnDrop;
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
    }
}

#[tool]
async fn forever() -> String {
    let _guard = SetOnDrop;
    STARTED.store(true, Ordering::SeqCst);
    std::future::pending::<()>().await;
    unreachable!()
}

async fn session(version: ProtocolVersion) -> TestClient {
    TestClient::connect_to(server(), version).await.unwrap()
}

fn server() -> Server {
    Server::builder()
        .name("dispatch-test")
        .version("9.9.9")
        .build()
        .unwrap()
}

fn code(e: &mcp_runtime::McpError) -> i32 {
    e.code.0
}

#[tokio::test]
async fn initialize_echoes_every_session_version() {
    for version in ProtocolVersion::of_era(mcp_runtime::protocol::ProtocolEra::Session) {
        let client = TestClient::connect_to(server(), version).await.unwrap();
        assert_eq!(client.version(), version);
    }
}

#[tokio::test]
async fn initialize_offers_the_newest_session_version_for_unknown_ones() {
    let client = TestClient::stateless().await; // any connection: initialize is raw here
    let _ = client;
    for requested in ["1999-01-01", "2026-07-28"] {
        let fresh = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
            .await
            .unwrap();
        let r = fresh
            .send_request(json!(1), "initialize", json!({"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}))
            .await
            .unwrap();
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{requested}");
        assert_eq!(
            r["result"]["serverInfo"],
            json!({"name": "dispatch-test", "version": "9.9.9"})
        );
        assert_eq!(
            r["result"]["capabilities"],
            json!({"tools": {"listChanged": true}, "logging": {}})
        );
        assert!(r["result"].get("resultType").is_none());
    }
}

#[tokio::test]
async fn initialize_twice_or_without_a_version_is_an_error() {
    let client = session(ProtocolVersion::V2025_11_25).await;
    let e = client
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&e), -32600);
    let fresh = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let r = fresh
        .send_request(json!(1), "initialize", json!({"capabilities": {}}))
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn a_request_before_initialize_gets_an_error_at_once() {
    let fresh = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    for method in ["tools/list", "tools/call", "server/discover"] {
        let r = fresh
            .send_request(json!(5), method, json!({}))
            .await
            .unwrap();
        assert_eq!(r["id"], 5);
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("initialize")
        );
    }
    // Pings are allowed before the handshake and answered.
    let r = fresh
        .send_request(json!(6), "ping", json!({}))
        .await
        .unwrap();
    assert_eq!(r["result"], json!({}));
}

#[tokio::test]
async fn ping_answers_in_the_session_era_only() {
    let client = session(ProtocolVersion::V2025_06_18).await;
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
    let stateless = TestClient::stateless().await;
    assert_eq!(
        code(&stateless.request("ping", json!({})).await.unwrap_err()),
        -32601
    );
}

#[tokio::test]
async fn unknown_methods_are_method_not_found() {
    let client = TestClient::connect().await;
    let e = client
        .request("resources/list", json!({}))
        .await
        .unwrap_err();
    assert_eq!(code(&e), -32601);
    assert_eq!(e.data, Some(json!({"method": "resources/list"})));
    // Notifications never get an answer, known or not.
    assert!(
        client
            .send_raw(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#)
            .await
            .is_none()
    );
}

#[tokio::test]
async fn malformed_messages_get_json_rpc_errors() {
    let client = TestClient::connect().await;
    let r = client.send_raw("{oops").await.unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    let r = client
        .send_raw(r#"{"jsonrpc":"2.0","id":3}"#)
        .await
        .unwrap();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(3), json!(-32600))
    );
    let r = client
        .send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32600);
    let r = client
        .send_raw(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}"#)
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn tools_are_listed_in_source_order_with_their_schemas() {
    let client = TestClient::connect().await;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    // The order of the definitions in this file (not sorted by name).
    assert_eq!(
        names,
        [
            "add",
            "multiply",
            "stats",
            "echo",
            "nothing",
            "pictures",
            "wrapped_name",
            "raw_result",
            "boom",
            "renamed-tool",
            "with_context",
            "forever",
            "linked",
            "nap",
            "parse_panics",
            "needs_caller"
        ]
    );
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(
        add["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "The first addend."},
                "b": {"type": "integer", "description": "The second addend."}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        })
    );
    assert_eq!(add["description"], "Add two numbers.");
    assert_eq!(
        add["outputSchema"]["properties"]["result"],
        json!({"type": "integer"})
    );
    let renamed = tools.iter().find(|t| t["name"] == "renamed-tool").unwrap();
    assert_eq!(renamed["title"], "A renamed tool");
    assert_eq!(renamed["description"], "Overrides the doc comment.");
    let nothing = tools.iter().find(|t| t["name"] == "nothing").unwrap();
    assert_eq!(
        nothing["inputSchema"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    let ctx = tools.iter().find(|t| t["name"] == "with_context").unwrap();
    assert_eq!(
        ctx["inputSchema"]["required"],
        json!(["label"]),
        "Context is not an argument"
    );
}

#[tokio::test]
async fn pagination_walks_every_tool_with_opaque_cursors() {
    let server = Server::builder().page_size(2).build().unwrap();
    let all: Vec<&str> = server.tool_names().collect();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let first = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(first["tools"].as_array().unwrap().len(), 2);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    assert!(
        !cursor.chars().all(|c| c.is_ascii_digit()),
        "cursor is opaque: {cursor}"
    );
    let listed = client.list_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, all);
    for bad in ["zzz", "MTAwOjA", "!!"] {
        let e = client
            .request("tools/list", json!({"cursor": bad}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602, "{bad}");
    }
}

#[tokio::test]
async fn calls_return_text_and_structured_content() {
    let client = TestClient::connect().await;
    let r = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(
        (r.text(), r.structured().cloned(), r.is_error()),
        ("5".into(), Some(json!({"result": 5})), false)
    );
    let r = client
        .call_tool("multiply", json!({"a": 4, "b": 5}))
        .await
        .unwrap();
    assert_eq!(r.structured(), Some(&json!({"result": 20})));
    let r = client
        .call_tool("stats", json!({"values": [1.0, 2.0, 3.0]}))
        .await
        .unwrap();
    assert_eq!(r.structured(), Some(&json!({"count": 3, "mean": 2.0})));
    assert_eq!(
        serde_json::from_str::<Value>(&r.text()).unwrap(),
        json!({"count": 3, "mean": 2.0})
    );
    let r = client
        .call_tool("echo", json!({"text": "ab"}))
        .await
        .unwrap();
    assert_eq!((r.text(), r.structured()), ("ab".into(), None));
    let r = client
        .call_tool("echo", json!({"text": "ab", "times": 2}))
        .await
        .unwrap();
    assert_eq!(r.text(), "abab");
    let r = client.call_tool("nothing", json!({})).await.unwrap();
    assert_eq!(r.content(), &[] as &[Value]);
    let r = client.call_tool("pictures", json!({})).await.unwrap();
    assert_eq!(
        r.content()[1],
        json!({"type": "image", "data": "iVA=", "mimeType": "image/png"})
    );
    let r = client
        .call_tool("wrapped_name", json!({"name": "x"}))
        .await
        .unwrap();
    assert_eq!(r.structured(), Some(&json!({"result": "x"})));
    let r = client.call_tool("renamed-tool", json!({})).await.unwrap();
    assert_eq!(r.text(), "ok");
    let r = client
        .call_tool("with_context", json!({"label": "L"}))
        .await
        .unwrap();
    assert!(r.text().starts_with("L:2025-11-25:"), "{}", r.text());
}

#[tokio::test]
async fn failures_the_model_can_fix_are_is_error_results() {
    let client = TestClient::connect().await;
    let cases = [
        ("add", json!({"a": 1}), "missing field `b`"),
        (
            "add",
            json!({"a": "one", "b": 2}),
            "`a`: invalid type: string \"one\", expected i64",
        ),
        ("add", json!({"a": 1, "b": 2, "c": 3}), "unknown field `c`"),
        ("stats", json!({"values": [1, "x"]}), "`values[1]`"),
        ("stats", json!({"values": []}), "no values"),
        ("raw_result", json!({}), "custom failure"),
    ];
    for (tool, args, expected) in cases {
        let r = client.call_tool(tool, args.clone()).await.unwrap();
        assert!(r.is_error(), "{tool} {args}");
        assert!(r.text().contains(expected), "{tool} {args}: {}", r.text());
    }
    let r = client
        .request("tools/call", json!({"name": "add"}))
        .await
        .unwrap();
    assert!(
        r["isError"].as_bool().unwrap()
            && r["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("missing field `a`")
    );
}

#[tokio::test]
async fn unknown_tools_are_invalid_params() {
    let client = TestClient::connect().await;
    let e = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(code(&e), -32602);
    assert!(e.message.contains("nope"));
}

#[tokio::test]
async fn a_panicking_tool_fails_alone() {
    let client = TestClient::connect().await;
    let e = client.call_tool("boom", json!({})).await.unwrap_err();
    assert_eq!(code(&e), -32603);
    assert!(
        !e.message.contains("exploded"),
        "panic payloads stay in the server log"
    );
    assert_eq!(
        client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap()
            .text(),
        "2"
    );
}

#[tokio::test]
async fn cancellation_drops_the_handler_and_sends_nothing() {
    let client = std::sync::Arc::new(TestClient::connect().await);
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .send_request(json!("slow-1"), "tools/call", json!({"name": "forever"}))
                .await
        })
    };
    while !STARTED.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // A duplicate id while the first is in flight is refused.
    let dup = client
        .send_request(
            json!("slow-1"),
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(dup["error"]["code"], -32600);
    client.notify(
        "notifications/cancelled",
        json!({"requestId": "slow-1", "reason": "user"}),
    );
    // The id is free again at once, before the cancelled task has even run again.
    let again = client
        .send_request(
            json!("slow-1"),
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(again["result"]["content"][0]["text"], "3");
    let response = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response, None, "no response for a cancelled request");
    assert!(
        DROPPED.load(Ordering::SeqCst),
        "the handler future was dropped"
    );
    // Unknown and malformed cancellations are ignored.
    client.notify("notifications/cancelled", json!({"requestId": 12345}));
    client.notify("notifications/cancelled", json!({"nope": true}));
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn older_versions_get_no_structured_output() {
    let client = session(ProtocolVersion::V2025_03_26).await;
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.get("outputSchema").is_none()));
    let r = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!((r.text(), r.structured()), ("5".into(), None));
}

#[tokio::test]
async fn stateless_discover_and_results_carry_the_2026_fields() {
    let client = TestClient::stateless().await;
    let d = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(d["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        d["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    assert_eq!(d["resultType"], "complete");
    assert_eq!(d["ttlMs"], 60000);
    assert_eq!(d["cacheScope"], "private");
    assert_eq!(
        d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    let list = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(
        (list["resultType"].clone(), list["ttlMs"].clone()),
        (json!("complete"), json!(60000))
    );
    let call = client
        .request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1, "b": 2}}),
        )
        .await
        .unwrap();
    assert_eq!(call["resultType"], "complete");
    assert!(
        call.get("ttlMs").is_none(),
        "tool results are not cacheable"
    );
    assert_eq!(
        call["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "0.0.0"
    );
    assert_eq!(call["structuredContent"], json!({"result": 3}));
    let r = client
        .call_tool("with_context", json!({"label": "s"}))
        .await
        .unwrap();
    assert!(r.text().starts_with("s:2026-07-28:"));
}

#[tokio::test]
async fn stateless_meta_is_checked_on_every_request() {
    let client = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let meta = |m: Value| json!({"_meta": m});
    let r = client
        .send_request(
            json!(1),
            "server/discover",
            meta(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
        )
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities")
    );
    let r = client
        .send_request(
            json!(2),
            "tools/list",
            meta(json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}})),
        )
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
    );
    let r = client
        .send_request(
            json!(3),
            "tools/list",
            meta(json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": {}})),
        )
        .await
        .unwrap();
    assert_eq!(
        r["error"]["code"], -32022,
        "session-era versions need initialize"
    );
}

#[tokio::test]
async fn an_initialized_session_still_serves_stateless_requests_by_their_meta() {
    let client = session(ProtocolVersion::V2025_11_25).await;
    let r = client
        .send_request(
            json!(1),
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await
        .unwrap();
    assert_eq!(r["result"]["resultType"], "complete");
    let plain = client.request("tools/list", json!({})).await.unwrap();
    assert!(plain.get("resultType").is_none());
}

#[tokio::test]
async fn tool_filters_and_duplicate_names_are_checked_at_build() {
    let only_add = Server::builder()
        .tool_filter(|t| t.name == "add")
        .build()
        .unwrap();
    assert_eq!(only_add.tool_names().collect::<Vec<_>>(), ["add"]);
    let client = TestClient::connect_to(only_add, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    assert_eq!(
        code(
            &client
                .call_tool("echo", json!({"text": "x"}))
                .await
                .unwrap_err()
        ),
        -32602
    );
    let none = Server::builder().tool_filter(|_| false).build().unwrap();
    let client = TestClient::connect_to(none, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    assert_eq!(
        code(&client.request("tools/list", json!({})).await.unwrap_err()),
        -32601,
        "no tools, no capability"
    );
}

#[tokio::test]
async fn the_users_fn_stays_callable() {
    assert_eq!(add(2, 3).await, 5);
    assert_eq!(multiply(2, 3), 6);
}

#[tokio::test]
async fn batches_are_served_in_2025_03_26() {
    let client = session(ProtocolVersion::V2025_03_26).await;
    let batch = r#"[
        {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}},
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":2,"method":"ping"},
        {"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}},
        {"jsonrpc":"2.0","id":4,"method":"nope"},
        {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":1,"b":2}}}
    ]"#;
    let r = client.send_raw(batch).await.unwrap();
    let mut by_id: Vec<(i64, Value)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_i64().unwrap(), m.clone()))
        .collect();
    by_id.sort_by_key(|(id, _)| *id);
    let ids: Vec<i64> = by_id.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(by_id[0].1["result"]["content"][0]["text"], "3");
    assert_eq!(by_id[1].1["result"], json!({}));
    assert_eq!(
        by_id[2].1["error"]["code"], -32600,
        "initialize is never batched"
    );
    assert_eq!(by_id[3].1["error"]["code"], -32601);
    assert_eq!(
        by_id[4].1["error"]["code"], -32600,
        "a 2026-07-28 request is not served inside a 2025-03-26 batch: {}",
        by_id[4].1
    );
    assert!(
        client
            .send_raw(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#)
            .await
            .is_none()
    );
    assert_eq!(
        client.send_raw("[]").await.unwrap()["error"]["code"],
        -32600
    );
}

#[tool]
async fn linked() -> Vec<Content> {
    vec![
        Content::resource_link("file:///tmp/a.txt", "a.txt"),
        Content::audio(&[1, 2], "audio/wav"),
    ]
}

#[tokio::test]
async fn newer_content_blocks_become_text_for_older_versions() {
    let client = session(ProtocolVersion::V2024_11_05).await;
    let r = client.call_tool("linked", json!({})).await.unwrap();
    assert_eq!(
        r.content()[0],
        json!({"type": "text", "text": "a.txt: file:///tmp/a.txt"})
    );
    assert_eq!(r.content()[1]["type"], "text");
    let client = session(ProtocolVersion::V2025_03_26).await;
    let r = client.call_tool("linked", json!({})).await.unwrap();
    assert_eq!(
        r.content()[1]["type"],
        "audio",
        "audio exists since 2025-03-26"
    );
    let client = session(ProtocolVersion::V2025_06_18).await;
    let r = client.call_tool("linked", json!({})).await.unwrap();
    assert_eq!(r.content()[0]["type"], "resource_link");
}

/// Sleeps its thread (a sync tool on the blocking pool).
#[tool]
fn nap(ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    ms
}

#[tokio::test]
async fn a_cancelled_sync_tool_keeps_its_slot_until_its_work_ends() {
    let server = Server::builder().max_in_flight(1).build().unwrap();
    let client = std::sync::Arc::new(
        TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
            .await
            .unwrap(),
    );
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .send_request(
                    json!(1),
                    "tools/call",
                    json!({"name": "nap", "arguments": {"ms": 400}}),
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.notify("notifications/cancelled", json!({"requestId": 1}));
    assert_eq!(running.await.unwrap(), None);
    let busy = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap_err();
    assert_eq!(
        busy.code.0, -32603,
        "the blocking work still holds the only slot"
    );
    assert!(busy.message.contains("busy"), "{}", busy.message);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        client
            .call_tool("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap()
            .text(),
        "2"
    );
}

fn explode_on_13<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let n = i64::deserialize(d)?;
    assert_ne!(n, 13, "user deserialization code exploded");
    Ok(n)
}

#[tool]
async fn parse_panics(#[serde(deserialize_with = "explode_on_13")] n: i64) -> i64 {
    n
}

#[tokio::test]
async fn a_panic_while_parsing_arguments_fails_only_that_request() {
    let client = TestClient::connect().await;
    let e = client
        .call_tool("parse_panics", json!({"n": 13}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32603);
    assert_eq!(
        client
            .call_tool("parse_panics", json!({"n": 4}))
            .await
            .unwrap()
            .text(),
        "4"
    );
}

/// The caller, which a request must name: a `FromContext` type of the user's own.
struct Caller;

impl mcp_runtime::FromContext for Caller {
    fn from_context(_: &Context) -> Result<Self, McpError> {
        Err(McpError::invalid_params("no caller in this request"))
    }
}

type Ctx = Context;

/// Needs a caller; never runs in-process (there are no headers to name one).
#[tool]
async fn needs_caller(#[inject] _caller: Caller, #[inject] ctx: Ctx, n: i64) -> i64 {
    let _ = ctx;
    n
}

#[tokio::test]
async fn a_rejecting_injected_parameter_fails_the_call_with_its_error() {
    let client = TestClient::connect().await;
    let tools = client.list_tools().await.unwrap();
    let tool = tools.iter().find(|t| t["name"] == "needs_caller").unwrap();
    let properties: Vec<_> = tool["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(properties, ["n"], "injected parameters are not arguments");
    let e = client
        .call_tool("needs_caller", json!({"n": 1}))
        .await
        .unwrap_err();
    assert_eq!(e.code, mcp_runtime::protocol::ErrorCode::INVALID_PARAMS);
    assert_eq!(e.message, "no caller in this request");
}
