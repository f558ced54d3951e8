//! The session-era setting (`HttpConfig::session_era`, `MCP_SESSION_ERA` for `run!()`) in each
//! position, against the conformance example over raw HTTP: `serve` (sessions, the default),
//! `stateless` (session-era requests answered one by one, no session table) and `reject` (a
//! clear error naming 2026-07-28). 2026-07-28 clients are served in every position.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::http::{
    HttpServer, Req, Response, initialize_request, notification, rpc, stateless_meta,
};

fn conformance_with(env: &[(&str, &str)]) -> HttpServer {
    let program = support::interop::build_examples(&["conformance"])
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    HttpServer::start_with_env(&program, env)
}

/// A 2026-07-28 `tools/call` of `test_simple_text`, with its headers: served in every position.
fn assert_stateless_client_served(server: &HttpServer) {
    let call = rpc(
        7,
        "tools/call",
        json!({"_meta": stateless_meta(), "name": "test_simple_text", "arguments": {}}),
    );
    let r = server.post(
        &call,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "test_simple_text"),
        ],
    );
    assert_eq!(r.status(), 200, "{r}");
    assert!(r.json()["result"]["content"][0]["text"].is_string(), "{r}");
}

fn simple_text_call(id: i64) -> Value {
    rpc(
        id,
        "tools/call",
        json!({"name": "test_simple_text", "arguments": {}}),
    )
}

/// The -32022 refusal naming 2026-07-28 (and, when known, what the client asked for).
fn assert_rejected(r: &Response, requested: Option<&str>) {
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32022, "{r}");
    let error = &r.json()["error"];
    assert!(
        error["message"].as_str().unwrap().contains("2026-07-28"),
        "{r}"
    );
    assert_eq!(error["data"]["supported"], json!(["2026-07-28"]), "{r}");
    if let Some(v) = requested {
        assert_eq!(error["data"]["requested"], v, "{r}");
    }
}

#[test]
fn serve_keeps_sessions() {
    // The default, and the same when named.
    for env in [&[][..], &[("MCP_SESSION_ERA", "serve")][..]] {
        let server = conformance_with(env);
        let id = server.open_session();
        let r = server.post(
            &simple_text_call(1),
            &[
                ("Mcp-Session-Id", &id),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
        );
        assert_eq!(r.status(), 200, "{r}");
        // A request without its session is still refused.
        let r = server.post(
            &simple_text_call(2),
            &[("MCP-Protocol-Version", "2025-11-25")],
        );
        assert_eq!(r.status(), 400, "{r}");
        assert_stateless_client_served(&server);
    }
}

#[test]
fn stateless_answers_the_session_era_without_sessions() {
    let server = conformance_with(&[("MCP_SESSION_ERA", "stateless")]);
    // `initialize` is answered as usual, with no session id.
    let r = server.post(&initialize_request("2025-11-25"), &[]);
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25", "{r}");
    assert_eq!(
        r.header("mcp-session-id"),
        None,
        "no session is opened: {r}"
    );
    // It declares nothing it could only do later: no subscriptions, no list changes, no tasks.
    let capabilities = &r.json()["result"]["capabilities"];
    assert!(capabilities["tools"].is_object(), "{r}");
    assert_eq!(capabilities["tools"].get("listChanged"), None, "{r}");
    assert_eq!(capabilities["resources"].get("subscribe"), None, "{r}");
    assert_eq!(capabilities.get("tasks"), None, "{r}");
    let version = [("MCP-Protocol-Version", "2025-11-25")];
    let r = server.post(&notification("notifications/initialized"), &version);
    assert_eq!(r.status(), 202, "{r}");
    // Later requests need no session id; a stale one is ignored.
    let r = server.post(&simple_text_call(1), &version);
    assert_eq!(r.status(), 200, "{r}");
    assert!(r.json()["result"]["content"][0]["text"].is_string(), "{r}");
    let r = server.post(
        &rpc(2, "tools/list", json!({})),
        &[
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Mcp-Session-Id", "i1-0123456789abcdef0123456789abcdef"),
        ],
    );
    assert_eq!(r.status(), 200, "{r}");
    assert!(r.json()["result"]["tools"].is_array(), "{r}");
    // Progress still streams on the request's own response.
    let call = rpc(
        3,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let mut stream = server.open_stream(&Req::post("/mcp").headers(&version).json(&call));
    let mut seen = Vec::new();
    loop {
        let event = stream
            .next_event(Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("{e:?}; so far {seen:?}"));
        if event.data.is_empty() {
            continue; // the priming event, if any
        }
        let message: Value = serde_json::from_str(&event.data).unwrap();
        if message["id"] == 3 {
            assert_eq!(
                message["result"]["content"][0]["text"],
                "Progress test completed"
            );
            break;
        }
        seen.push(message["method"].as_str().unwrap_or_default().to_owned());
    }
    assert!(
        seen.iter().any(|m| m == "notifications/progress"),
        "{seen:?}"
    );
    // Subscribing is not offered: nothing could ever be delivered.
    let r = server.post(
        &rpc(
            9,
            "resources/subscribe",
            json!({"uri": "test://static-text"}),
        ),
        &version,
    );
    assert_eq!(r.error_code(), -32601, "{r}");
    // Asking the client needs capabilities nobody declared here: -32021, at once.
    let ask = rpc(
        4,
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "who?"}}),
    );
    let r = server.post(&ask, &version);
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.error_code(), -32021, "{r}");
    // No stream, no session to end, no HTTP+SSE.
    let get = Req::get("/mcp")
        .header("Accept", "text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25");
    let r = server.send(&get);
    assert_eq!(r.status(), 405, "{r}");
    assert_eq!(r.header("allow"), Some("POST"), "{r}");
    let r = server.send(&Req::new("DELETE", "/mcp").header("Mcp-Session-Id", "x"));
    assert_eq!(r.status(), 405, "{r}");
    let r = server.send(&Req::get("/sse").header("Accept", "text/event-stream"));
    assert_eq!(r.status(), 404, "{r}");
    // Batches only where the header says 2025-03-26.
    let pings = json!([rpc(5, "ping", json!({})), rpc(6, "ping", json!({}))]);
    let r = server.post(&pings, &version);
    assert_eq!(r.status(), 400, "{r}");
    let r = server.post(&pings, &[("MCP-Protocol-Version", "2025-03-26")]);
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.json().as_array().map(Vec::len), Some(2), "{r}");
    assert_stateless_client_served(&server);
}

#[test]
fn reject_refuses_the_session_era_naming_2026_07_28() {
    let server = conformance_with(&[("MCP_SESSION_ERA", "reject")]);
    let r = server.post(&initialize_request("2025-11-25"), &[]);
    assert_rejected(&r, Some("2025-11-25"));
    assert_eq!(r.header("mcp-session-id"), None, "{r}");
    let r = server.post(
        &simple_text_call(1),
        &[
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Mcp-Session-Id", "i1-0123456789abcdef0123456789abcdef"),
        ],
    );
    assert_rejected(&r, Some("2025-06-18"));
    let r = server.send(&Req::get("/sse").header("Accept", "text/event-stream"));
    assert_rejected(&r, None);
    let r = server.send(&Req::get("/mcp").header("Accept", "text/event-stream"));
    assert_eq!(r.status(), 405, "{r}");
    assert_stateless_client_served(&server);
}

#[test]
fn a_bad_setting_is_refused_at_start() {
    let program = support::interop::build_examples(&["conformance"])
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let mut proc = support::Proc::spawn_program(
        &program,
        &["--http", "127.0.0.1:0"],
        &[("MCP_SESSION_ERA", "sessions")],
    );
    assert_eq!(proc.wait_exit(Duration::from_secs(10)), Some(2));
    let log = proc.stderr_text();
    assert!(
        log.contains("MCP_SESSION_ERA") && log.contains("serve, stateless or reject"),
        "{log}"
    );
}
