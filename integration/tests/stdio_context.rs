//! Context features over stdio against the context example (`examples/context.rs`), driven line
//! by line: session-era asks (elicitation, sampling, roots) as JSON-RPC requests on stdout
//! answered on stdin, a cancelled call withdrawing its ask, and a 2026-07-28
//! `subscriptions/listen` that end of input answers.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use support::Proc;
use support::interop::build_examples;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The context example, built once per test binary.
fn context_example() -> &'static Path {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BUILT.get_or_init(|| build_examples(&["context"]).map(|mut p| p.remove(0))) {
        Ok(path) => path,
        Err(e) => panic!("building the context example failed:\n{e}"),
    }
}

fn spawn() -> Proc {
    Proc::spawn_program(context_example(), &[], &[])
}

/// A 2025-11-25 handshake declaring `capabilities`.
fn session(capabilities: Value) -> Proc {
    let mut p = spawn();
    p.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "stdio-context-test", "version": "1"}}),
    );
    let r = p.recv();
    assert_eq!(r["id"], 0, "{r}");
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    p
}

fn call(p: &mut Proc, id: i64, tool: &str, arguments: Value) {
    p.request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
}

/// The next line must be a request to the client of `method`; returns it.
fn expect_client_request(p: &mut Proc, method: &str) -> Value {
    let m = p.recv();
    assert_eq!(m["jsonrpc"], "2.0", "{m}");
    assert_eq!(m["method"], method, "expected a {method} request: {m}");
    assert!(
        m["id"].is_i64() || m["id"].is_string(),
        "the {method} request has no usable id: {m}"
    );
    m
}

/// The next line must be the successful result of tool call `id`; returns its text.
fn expect_text(p: &mut Proc, id: i64) -> String {
    let r = p.recv();
    assert_eq!(r["id"], id, "{r}");
    assert!(r["error"].is_null(), "a JSON-RPC error: {r}");
    assert_ne!(r["result"]["isError"], true, "the tool failed: {r}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {r}"))
        .to_owned()
}

/// Each kind of ask is a request on stdout, and the client's response line completes the tool.
#[test]
fn session_asks_are_requests_answered_on_stdin() {
    let mut p = session(json!({"elicitation": {}, "sampling": {}, "roots": {}}));

    call(&mut p, 1, "order_pizza", json!({}));
    let ask = expect_client_request(&mut p, "elicitation/create");
    let params = &ask["params"];
    assert_eq!(params["mode"], "form", "{ask}");
    assert_eq!(params["message"], "What would you like?", "{ask}");
    let schema = &params["requestedSchema"];
    let mut fields: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties: {ask}"))
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort();
    assert_eq!(fields, ["email", "quantity", "size", "toppings"], "{ask}");
    p.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"size": "large", "quantity": 2, "toppings": ["olives"]}}}));
    assert_eq!(
        expect_text(&mut p, 1),
        "Ordered 2 Large pizza(s) with olives."
    );

    call(&mut p, 2, "summarize", json!({"text": "A long story."}));
    let sample = expect_client_request(&mut p, "sampling/createMessage");
    let params = &sample["params"];
    assert_eq!(params["maxTokens"], 200, "{sample}");
    assert_eq!(params["systemPrompt"], "You are concise.", "{sample}");
    assert_eq!(params["temperature"], 0.2, "{sample}");
    assert_eq!(
        params["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Summarize in one sentence:\n\nA long story."}}]),
        "{sample}"
    );
    p.send(json!({"jsonrpc": "2.0", "id": sample["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "Short."}, "model": "m", "stopReason": "endTurn"}}));
    assert_eq!(expect_text(&mut p, 2), "Summary (m): Short.");

    call(&mut p, 3, "list_roots", json!({}));
    let roots = expect_client_request(&mut p, "roots/list");
    p.send(
        json!({"jsonrpc": "2.0", "id": roots["id"], "result": {"roots": [
            {"uri": "file:///home/u/project", "name": "project"},
            {"uri": "file:///tmp"},
        ]}}),
    );
    assert_eq!(
        expect_text(&mut p, 3),
        "2 root(s)\nproject: file:///home/u/project\nfile:///tmp"
    );

    let ids = [&ask["id"], &sample["id"], &roots["id"]];
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "requests to the client reused an id: {ids:?}"
    );
}

/// Cancelling a tool call that waits on an ask withdraws the ask (`notifications/cancelled`
/// naming the ask's id) and answers nothing; a late answer to the withdrawn ask is ignored.
#[test]
fn a_cancelled_call_withdraws_its_pending_ask() {
    let mut p = session(json!({"elicitation": {}}));
    call(&mut p, 5, "greet", json!({}));
    let ask = expect_client_request(&mut p, "elicitation/create");
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user gave up"}}));
    let withdrawn = p.recv();
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert!(withdrawn.get("id").is_none(), "{withdrawn}");
    assert_eq!(withdrawn["params"]["requestId"], ask["id"], "{withdrawn}");
    assert_eq!(
        p.silent_for(Duration::from_millis(500)),
        None,
        "nothing more for the cancelled call"
    );
    // The answer comes too late: ignored, and the server carries on.
    p.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}));
    p.request(6, "ping", json!({}));
    let r = p.recv();
    assert_eq!(
        (r["id"].clone(), r["result"].clone()),
        (json!(6), json!({})),
        "{r}"
    );
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A 2026-07-28 listen over stdio: acknowledged with its id, tagged changes while it lasts,
/// and at end of input a `complete` result with that id before the server exits 0.
#[test]
fn stateless_listen_is_answered_at_end_of_input() {
    let mut p = spawn();
    p.send(json!({
        "jsonrpc": "2.0",
        "id": "L",
        "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["notes://board"]}},
    }));
    let ack = p.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], "L", "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://board"]}),
        "{ack}"
    );

    p.request(
        1,
        "tools/call",
        json!({"_meta": meta(), "name": "pin_note", "arguments": {"text": "x"}}),
    );
    let (mut result, mut updated) = (None, None);
    for _ in 0..2 {
        let m = p.recv();
        if m["id"] == 1 {
            assert!(result.is_none(), "two results: {m}");
            result = Some(m);
        } else {
            assert!(updated.is_none(), "a second notification: {m}");
            updated = Some(m);
        }
    }
    let result = result.unwrap();
    assert_eq!(result["result"]["resultType"], "complete", "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"], "1 note(s) on the board",
        "{result}"
    );
    let updated = updated.unwrap();
    assert_eq!(
        updated,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://board", "_meta": {SUBSCRIPTION_ID: "L"}}}),
    );
    // No session subscribed to anything: no untagged session-era copy.
    assert_eq!(p.silent_for(Duration::from_millis(300)), None);

    p.close_stdin();
    // The server tears the stream down: `notifications/cancelled` for it (stdio), then the
    // graceful result.
    let cancelled = p.recv();
    assert_eq!(
        (&cancelled["method"], &cancelled["params"]["requestId"]),
        (&json!("notifications/cancelled"), &json!("L")),
        "{cancelled}"
    );
    let end = p.recv();
    assert_eq!(end["id"], "L", "{end}");
    assert!(end["error"].is_null(), "{end}");
    assert_eq!(end["result"]["resultType"], "complete", "{end}");
    assert_eq!(end["result"]["_meta"][SUBSCRIPTION_ID], "L", "{end}");
    assert_eq!(p.wait_exit(Duration::from_secs(5)), Some(0));
    assert!(
        p.stdout_closes_within(Duration::from_secs(2)),
        "more output after the listen's result"
    );
}

/// The `_meta` of a 2026-07-28 request declaring `capabilities`.
fn stateless_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// 2026-07-28 over stdio: no request reaches the client; the call answers `input_required`
/// and the retry with the answer completes, even on the same process as a session.
#[test]
fn stateless_asks_are_input_required_rounds() {
    let mut p = spawn();
    let params = json!({"name": "greet", "arguments": {}, "_meta": stateless_meta(json!({"elicitation": {}}))});
    p.request(1, "tools/call", params.clone());
    let r = p.recv();
    assert_eq!(r["id"], 1, "{r}");
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let ask = &r["result"]["inputRequests"]["elicit-0"];
    assert_eq!(ask["method"], "elicitation/create", "{r}");
    assert!(
        ask.get("id").is_none() && ask.get("jsonrpc").is_none(),
        "not a JSON-RPC request: {ask}"
    );
    let mut retry = params;
    retry["inputResponses"] = json!({"elicit-0": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = r["result"]["requestState"].clone();
    p.request(2, "tools/call", retry);
    let r = p.recv();
    assert_eq!(r["id"], 2, "{r}");
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Ada!", "{r}");
    assert!(p.silent_for(Duration::from_millis(200)).is_none());
}

/// Session era over stdio: a subscribed resource's updates and list changes arrive on stdout;
/// after unsubscribing, only list changes do.
#[test]
fn session_subscriptions_and_list_changes_arrive_on_stdout() {
    let mut p = session(json!({}));
    p.request(1, "resources/subscribe", json!({"uri": "notes://board"}));
    assert_eq!(p.recv(), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    call(&mut p, 2, "pin_note", json!({"text": "hello"}));
    let mut got = vec![p.recv(), p.recv()];
    got.sort_by_key(|m| m.get("id").is_some());
    assert_eq!(
        got[0],
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://board"}})
    );
    assert_eq!(got[1]["id"], 2, "{:?}", got);
    call(&mut p, 3, "set_beta", json!({"enabled": true}));
    let mut got = vec![p.recv(), p.recv()];
    got.sort_by_key(|m| m.get("id").is_some());
    assert_eq!(
        got[0]["method"], "notifications/tools/list_changed",
        "{:?}",
        got
    );
    p.request(4, "resources/unsubscribe", json!({"uri": "notes://board"}));
    assert_eq!(p.recv()["id"], 4);
    call(&mut p, 5, "pin_note", json!({"text": "again"}));
    assert_eq!(p.recv()["id"], 5);
    assert!(
        p.silent_for(Duration::from_millis(200)).is_none(),
        "no update after unsubscribing"
    );
}
