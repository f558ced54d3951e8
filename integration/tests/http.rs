//! The Streamable HTTP transport against the quickstart example over raw HTTP/1.1: one test per
//! rule of the spec (§3 of the research notes), for the session era (2025-11-25 and earlier),
//! the stateless era (2026-07-28), the safety checks, the deprecated HTTP+SSE transport and
//! shutdown. Every request is written by hand (`support::http`), so each test controls every
//! header; failures print the request and what came back.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::http::{
    HttpServer, ReadError, Req, Response, initialize_request, notification, rpc, stateless_meta,
};

fn quickstart() -> HttpServer {
    HttpServer::start("quickstart")
}

/// A JSON-RPC error body: `jsonrpc` 2.0, an `error` with an integer code and a message.
fn assert_jsonrpc_error(r: &Response) -> Value {
    let body = r.json();
    assert_eq!(body["jsonrpc"], "2.0", "not a JSON-RPC body: {r}");
    assert!(body["error"]["code"].is_i64(), "no error code: {r}");
    assert!(
        body["error"]["message"].is_string(),
        "no error message: {r}"
    );
    body
}

fn add_call(id: i64) -> Value {
    rpc(
        id,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
}

/// Asserts the `add 2 3` answer.
fn assert_add_result(r: &Response) {
    assert_eq!(r.status(), 200, "tools/call add: {r}");
    assert_eq!(
        r.content_type().as_deref(),
        Some("application/json"),
        "tools/call add: {r}"
    );
    let body = r.json();
    assert_eq!(body["result"]["content"][0]["text"], "5", "{r}");
    assert_eq!(
        body["result"]["structuredContent"],
        json!({"result": 5}),
        "{r}"
    );
}

// ---------------------------------------------------------------------------------------------
// Session era
// ---------------------------------------------------------------------------------------------

#[test]
fn initialize_issues_a_session_id() {
    let server = quickstart();
    let r = server.post(&initialize_request("2025-11-25"), &[]);
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.content_type().as_deref(), Some("application/json"), "{r}");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25", "{r}");
    let first = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no Mcp-Session-Id: {r}"))
        .to_owned();
    assert!(
        first.len() >= 32,
        "session id {first:?} is too short to be unguessable"
    );
    assert!(
        first.bytes().all(|b| (0x21..=0x7e).contains(&b)),
        "session id {first:?} is not visible ASCII"
    );
    let r = server.post(&initialize_request("2025-11-25"), &[]);
    let second = r.header("mcp-session-id").unwrap_or_default();
    assert_ne!(first, second, "two sessions got the same id: {r}");
}

#[test]
fn a_request_without_a_session_id_is_400() {
    let server = quickstart();
    let _ = server.open_session();
    let r = server.post(
        &rpc(1, "tools/list", json!({})),
        &[("MCP-Protocol-Version", "2025-11-25")],
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_jsonrpc_error(&r);
}

#[test]
fn an_unknown_session_id_is_404() {
    let server = quickstart();
    let r = server.post(
        &rpc(1, "tools/list", json!({})),
        &[
            ("Mcp-Session-Id", "0123456789abcdef0123456789abcdef"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(r.status(), 404, "{r}");
    assert_jsonrpc_error(&r);
}

/// Opens a session at `version` (`initialize`, then `notifications/initialized`); its id.
fn session_at(server: &HttpServer, version: &str) -> String {
    let r = server.post(&initialize_request(version), &[]);
    assert_eq!(r.status(), 200, "initialize at {version}: {r}");
    assert_eq!(r.json()["result"]["protocolVersion"], version, "{r}");
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let r = server.post(
        &notification("notifications/initialized"),
        &[("Mcp-Session-Id", &id), ("MCP-Protocol-Version", version)],
    );
    assert_eq!(r.status(), 202, "{r}");
    id
}

/// A batch refused as the spec wants from 2025-06-18 on: 400 and ONE JSON-RPC error object
/// (-32600, id `null`) whose message says batches are not accepted, with `why` in it.
fn assert_batch_refused(r: &Response, why: &str) {
    assert_eq!(r.status(), 400, "{r}");
    let body = assert_jsonrpc_error(r);
    assert!(body.is_object(), "one error object, not an array: {r}");
    assert_eq!(body["id"], Value::Null, "{r}");
    assert_eq!(body["error"]["code"], -32600, "{r}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("batches are not accepted") && message.contains(why),
        "{message:?} should say batches are not accepted ({why})"
    );
}

#[test]
fn batches_are_refused_with_400_from_2025_06_18_on() {
    let server = quickstart();
    let pings = json!([rpc(901, "ping", json!({})), rpc(902, "ping", json!({}))]);
    for version in ["2025-06-18", "2025-11-25", "2024-11-05"] {
        let id = session_at(&server, version);
        let r = server.post(
            &pings,
            &[("Mcp-Session-Id", &id), ("MCP-Protocol-Version", version)],
        );
        assert_batch_refused(&r, &format!("at protocol {version}"));
        // The session is unharmed: its next single request is served.
        let r = server.post(
            &rpc(3, "ping", json!({})),
            &[("Mcp-Session-Id", &id), ("MCP-Protocol-Version", version)],
        );
        assert_eq!(r.status(), 200, "{r}");
        assert_eq!(r.json()["result"], json!({}), "{r}");
    }
    // A 2025-03-26 session MUST accept them: one array with both answers.
    let id = session_at(&server, "2025-03-26");
    let r = server.post(
        &pings,
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
    );
    assert_eq!(r.status(), 200, "{r}");
    let mut ids: Vec<i64> = r
        .json()
        .as_array()
        .unwrap_or_else(|| panic!("an array of answers: {r}"))
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [901, 902], "{r}");
}

#[test]
fn batches_are_refused_with_400_on_the_stateless_wire_and_without_a_session() {
    let server = quickstart();
    let meta = stateless_meta();
    let batch = json!([
        rpc(1, "server/discover", json!({"_meta": meta})),
        rpc(2, "tools/list", json!({"_meta": meta})),
    ]);
    let r = server.post(
        &batch,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ],
    );
    assert_batch_refused(&r, "at protocol 2026-07-28");
    // No version named, or a session-era one, and no session: still about the batch, not the
    // missing session id.
    let pings = json!([rpc(1, "ping", json!({})), rpc(2, "ping", json!({}))]);
    assert_batch_refused(&server.post(&pings, &[]), "without a session");
    let r = server.post(&pings, &[("MCP-Protocol-Version", "2025-03-26")]);
    assert_batch_refused(&r, "without a session");
}

#[test]
fn a_notification_gets_202_and_no_body() {
    let server = quickstart();
    let r = server.post(&initialize_request("2025-11-25"), &[]);
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    let r = server.post(
        &notification("notifications/initialized"),
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(r.status(), 202, "{r}");
    assert!(r.body.is_empty(), "202 with a body: {r}");
}

#[test]
fn tools_call_answers_with_json() {
    let server = quickstart();
    let id = server.open_session();
    let r = server.post(
        &add_call(1),
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_add_result(&r);
    assert_eq!(r.json()["id"], 1, "{r}");
}

#[test]
fn an_older_supported_protocol_version_header_is_accepted() {
    let server = quickstart();
    let id = server.open_session();
    let r = server.post(
        &add_call(1),
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
    );
    assert_add_result(&r);
}

#[test]
fn an_unsupported_protocol_version_header_is_400() {
    let server = quickstart();
    let id = server.open_session();
    let r = server.post(
        &add_call(1),
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_jsonrpc_error(&r);
}

#[test]
fn get_opens_the_session_stream_with_a_priming_event() {
    let server = quickstart();
    let id = server.open_session();
    let mut stream = server.open_stream(&Req::get("/mcp").headers(&[
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", &id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]));
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    assert_eq!(
        stream.head.content_type().as_deref(),
        Some("text/event-stream"),
        "{}",
        stream.seen()
    );
    let first = stream.expect_event("a priming event");
    assert!(
        first.id.as_deref().is_some_and(|id| !id.is_empty()),
        "the first event has no `id:` line:\n{}",
        stream.seen()
    );
    assert!(
        first
            .retry
            .as_deref()
            .is_some_and(|r| r.parse::<u64>().is_ok()),
        "the first event has no numeric `retry:` line:\n{}",
        stream.seen()
    );
}

#[test]
fn get_without_a_session_id_is_400() {
    let server = quickstart();
    let _ = server.open_session();
    let r = server.send(&Req::get("/mcp").header("Accept", "text/event-stream"));
    assert_eq!(r.status(), 400, "{r}");
    assert_jsonrpc_error(&r);
}

#[test]
fn get_with_an_unknown_session_id_is_404() {
    let server = quickstart();
    let r = server.send(&Req::get("/mcp").headers(&[
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", "0123456789abcdef0123456789abcdef"),
    ]));
    assert_eq!(r.status(), 404, "{r}");
    assert_jsonrpc_error(&r);
}

/// SSE event ids are the per-stream cursor of resumption, and MUST be unique across all streams
/// of a session: a stream resumed with `Last-Event-ID` must not send that id (or any id sent
/// before) again.
#[test]
fn a_resumed_stream_does_not_repeat_event_ids() {
    let server = quickstart();
    let id = server.open_session();
    let get = Req::get("/mcp").headers(&[
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", &id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]);
    let mut first = server.open_stream(&get);
    assert_eq!(first.head.status, 200, "{}", first.seen());
    let last = first
        .expect_event("a priming event")
        .id
        .unwrap_or_else(|| panic!("the priming event has no id:\n{}", first.seen()));
    drop(first);
    let mut resumed = server.open_stream(&get.clone().header("Last-Event-ID", &last));
    assert_eq!(
        resumed.head.status,
        200,
        "GET with Last-Event-ID: {last}:\n{}",
        resumed.seen()
    );
    if let Ok(event) = resumed.next_event(Duration::from_secs(1)) {
        assert_ne!(
            event.id.as_deref(),
            Some(last.as_str()),
            "the stream resumed after event {last:?} sent an event with that same id again:\n{}",
            resumed.seen()
        );
    }
    // A new stream of the same session gets ids of its own, too.
    let mut other = server.open_stream(&get);
    let event = other.expect_event("a priming event");
    assert_ne!(
        event.id.as_deref(),
        Some(last.as_str()),
        "a second stream of the session reused event id {last:?}:\n{}",
        other.seen()
    );
}

#[test]
fn delete_ends_the_session() {
    let server = quickstart();
    let id = server.open_session();
    let r = server.send(&Req::new("DELETE", "/mcp").headers(&[
        ("Mcp-Session-Id", &id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]));
    assert_eq!(r.status(), 200, "DELETE: {r}");
    let r = server.post(
        &add_call(1),
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(r.status(), 404, "POST after DELETE: {r}");
    let r = server.send(&Req::get("/mcp").headers(&[
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", &id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]));
    assert_eq!(r.status(), 404, "GET after DELETE: {r}");
}

#[test]
fn the_endpoint_with_a_trailing_slash_is_the_same_endpoint() {
    let server = quickstart();
    let r = server.send(&Req::post("/mcp/").json(&initialize_request("2025-11-25")));
    assert_eq!(r.status(), 200, "initialize on /mcp/: {r}");
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no Mcp-Session-Id from /mcp/: {r}"))
        .to_owned();
    let session = [
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = server.send(
        &Req::post("/mcp/")
            .headers(&session)
            .json(&notification("notifications/initialized")),
    );
    assert_eq!(r.status(), 202, "notification on /mcp/: {r}");
    // The session opened on /mcp/ is the one /mcp knows, and the other way round.
    assert_add_result(&server.post(&add_call(1), &session));
    assert_add_result(&server.send(&Req::post("/mcp/").headers(&session).json(&add_call(2))));
}

#[test]
fn put_is_405_with_allow() {
    let server = quickstart();
    let r = server.send(
        &Req::new("PUT", "/mcp")
            .header("Content-Type", "application/json")
            .json(&add_call(1)),
    );
    assert_eq!(r.status(), 405, "{r}");
    let allow = r
        .header("allow")
        .unwrap_or_else(|| panic!("405 without Allow: {r}"));
    assert!(allow.contains("POST"), "Allow does not list POST: {r}");
}

// ---------------------------------------------------------------------------------------------
// Stateless era (2026-07-28)
// ---------------------------------------------------------------------------------------------

fn stateless_add() -> Value {
    rpc(
        1,
        "tools/call",
        json!({"_meta": stateless_meta(), "name": "add", "arguments": {"a": 2, "b": 3}}),
    )
}

const STATELESS_HEADERS: [(&str, &str); 3] = [
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "add"),
];

#[test]
fn stateless_tools_call_with_matching_headers() {
    let server = quickstart();
    let r = server.post(&stateless_add(), &STATELESS_HEADERS);
    assert_add_result(&r);
    assert_eq!(r.json()["result"]["resultType"], "complete", "{r}");
    assert_eq!(
        r.header("mcp-session-id"),
        None,
        "a 2026-07-28 request got a session id: {r}"
    );
}

/// Legacy leftovers on a 2026-07-28 request are ignored, not errors (a gateway, or AWS
/// AgentCore, may add its own `Mcp-Session-Id`): the request is served, and no session id is
/// echoed or minted. GET and DELETE, which 2026-07-28 removed, are 405 naming POST.
#[test]
fn stateless_requests_ignore_session_leftovers_and_get_and_delete_are_405() {
    let server = quickstart();
    let mut headers = STATELESS_HEADERS.to_vec();
    headers.push(("Mcp-Session-Id", "i9-0123456789abcdef0123456789abcdef"));
    headers.push(("Last-Event-ID", "1-5"));
    let r = server.post(&stateless_add(), &headers);
    assert_add_result(&r);
    assert_eq!(r.header("mcp-session-id"), None, "{r}");
    for method in ["GET", "DELETE"] {
        let r = server.send(&Req::new(method, "/mcp").headers(&[
            ("Accept", "text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
        ]));
        assert_eq!(r.status(), 405, "{method}: {r}");
        assert_eq!(r.header("allow"), Some("POST"), "{method}: {r}");
    }
}

#[test]
fn stateless_discover_issues_no_session_id() {
    let server = quickstart();
    let r = server.post(
        &rpc(1, "server/discover", json!({"_meta": stateless_meta()})),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ],
    );
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(
        r.json()["result"]["supportedVersions"],
        json!(["2026-07-28"]),
        "{r}"
    );
    assert_eq!(
        r.header("mcp-session-id"),
        None,
        "server/discover got a session id: {r}"
    );
}

#[test]
fn stateless_missing_mcp_method_is_400_header_mismatch() {
    let server = quickstart();
    let r = server.post(
        &stateless_add(),
        &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Name", "add")],
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32020, "{r}");
}

#[test]
fn stateless_mcp_name_mismatch_is_400_header_mismatch() {
    let server = quickstart();
    let r = server.post(
        &stateless_add(),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "divide"),
        ],
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32020, "{r}");
}

#[test]
fn stateless_protocol_version_header_must_match_meta() {
    let server = quickstart();
    let r = server.post(
        &stateless_add(),
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
    );
    assert_eq!(r.status(), 400, "header 2025-11-25, _meta 2026-07-28: {r}");
    assert_eq!(r.error_code(), -32020, "{r}");
    let r = server.post(
        &stateless_add(),
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "add")],
    );
    assert_eq!(r.status(), 400, "no MCP-Protocol-Version header: {r}");
    assert_eq!(r.error_code(), -32020, "{r}");
}

#[test]
fn stateless_base64_header_values_are_decoded() {
    let server = quickstart();
    // "add" as `=?base64?…?=`.
    let r = server.post(
        &stateless_add(),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?YWRk?="),
        ],
    );
    assert_add_result(&r);
}

#[test]
fn stateless_unknown_method_is_404_method_not_found() {
    let server = quickstart();
    let r = server.post(
        &rpc(1, "no/such/method", json!({"_meta": stateless_meta()})),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "no/such/method"),
        ],
    );
    assert_eq!(r.status(), 404, "{r}");
    assert_eq!(r.error_code(), -32601, "{r}");
}

#[test]
fn stateless_unsupported_version_is_400_with_supported_versions() {
    let server = quickstart();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let r = server.post(
        &rpc(
            1,
            "tools/call",
            json!({"_meta": meta, "name": "add", "arguments": {"a": 2, "b": 3}}),
        ),
        &[
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32022, "{r}");
    let data = &r.json()["error"]["data"];
    assert_eq!(data["requested"], "2099-01-01", "{r}");
    assert!(
        data["supported"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "error.data.supported does not list 2026-07-28: {r}"
    );
}

#[test]
fn stateless_missing_client_capabilities_is_400_invalid_params() {
    let server = quickstart();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let r = server.post(
        &rpc(
            1,
            "tools/call",
            json!({"_meta": meta, "name": "add", "arguments": {"a": 2, "b": 3}}),
        ),
        &STATELESS_HEADERS,
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32602, "{r}");
}

// ---------------------------------------------------------------------------------------------
// Safety
// ---------------------------------------------------------------------------------------------

#[test]
fn a_foreign_host_is_403() {
    let server = quickstart();
    let r = server.send(
        &Req::post("/mcp")
            .header("Host", "evil.example.com")
            .json(&initialize_request("2025-11-25")),
    );
    assert_eq!(r.status(), 403, "{r}");
    assert_eq!(r.header("mcp-session-id"), None, "{r}");
    server.assert_still_serving();
}

#[test]
fn a_foreign_origin_is_403() {
    let server = quickstart();
    let r = server.send(
        &Req::post("/mcp")
            .header("Origin", "http://evil.example.com")
            .json(&initialize_request("2025-11-25")),
    );
    assert_eq!(r.status(), 403, "{r}");
    assert_eq!(r.header("mcp-session-id"), None, "{r}");
    server.assert_still_serving();
}

#[test]
fn a_foreign_origin_is_403_on_the_legacy_endpoints_too() {
    let server = quickstart();
    let r = server.send(
        &Req::get("/sse")
            .header("Accept", "text/event-stream")
            .header("Origin", "http://evil.example.com"),
    );
    assert_eq!(r.status(), 403, "GET /sse: {r}");
    let r = server.send(
        &Req::post("/messages?sessionId=0123456789abcdef0123456789abcdef")
            .header("Origin", "http://evil.example.com")
            .json(&initialize_request("2024-11-05")),
    );
    assert_eq!(r.status(), 403, "POST /messages: {r}");
    server.assert_still_serving();
}

/// DNS rebinding with a name of the attacker's that merely begins like a loopback address
/// (`127.0.0.1.evil.example.com` resolves wherever its owner wants, e.g. to 127.0.0.1).
#[test]
fn a_host_that_only_looks_like_loopback_is_403() {
    let server = quickstart();
    for host in [
        format!("127.0.0.1.evil.example.com:{}", server.port),
        "127.0.0.1.evil.example.com".to_owned(),
        format!("127.1.2.3.nip.io:{}", server.port),
    ] {
        let r = server.send(
            &Req::post("/mcp")
                .header("Host", &host)
                .json(&initialize_request("2025-11-25")),
        );
        assert_eq!(r.status(), 403, "Host: {host}: {r}");
    }
    server.assert_still_serving();
}

#[test]
fn an_origin_that_only_looks_like_loopback_is_403() {
    let server = quickstart();
    for origin in [
        "http://127.0.0.1.evil.example.com".to_owned(),
        format!("http://127.0.0.1.evil.example.com:{}", server.port),
        "http://127.1.2.3.nip.io".to_owned(),
    ] {
        let r = server.send(
            &Req::post("/mcp")
                .header("Origin", &origin)
                .json(&initialize_request("2025-11-25")),
        );
        assert_eq!(r.status(), 403, "Origin: {origin}: {r}");
    }
    server.assert_still_serving();
}

#[test]
fn a_loopback_origin_is_accepted() {
    let server = quickstart();
    let origin = format!("http://127.0.0.1:{}", server.port);
    let r = server.send(
        &Req::post("/mcp")
            .header("Origin", &origin)
            .json(&initialize_request("2025-11-25")),
    );
    assert_eq!(r.status(), 200, "{r}");
    assert!(r.header("mcp-session-id").is_some(), "{r}");
}

#[test]
fn a_body_above_the_limit_is_413() {
    let server = quickstart();
    // Only the head is sent: the announced length alone must be refused.
    let r = server.send(
        &Req::post("/mcp")
            .header("Content-Length", &(4 * 1024 * 1024 + 1).to_string())
            .body(&b"{"[..]),
    );
    assert_eq!(r.status(), 413, "{r}");
    server.assert_still_serving();
}

#[test]
fn a_body_that_is_not_json_is_400_parse_error() {
    let server = quickstart();
    let r = server.send(&Req::post("/mcp").body("this is not json"));
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32700, "{r}");
    server.assert_still_serving();
}

// ---------------------------------------------------------------------------------------------
// Deprecated HTTP+SSE (2024-11-05)
// ---------------------------------------------------------------------------------------------

/// Opens `GET /sse` and returns the stream and the endpoint it announced.
fn open_legacy(server: &HttpServer) -> (support::http::SseStream, String) {
    let mut stream = server.open_stream(&Req::get("/sse").header("Accept", "text/event-stream"));
    assert_eq!(stream.head.status, 200, "GET /sse:\n{}", stream.seen());
    assert_eq!(
        stream.head.content_type().as_deref(),
        Some("text/event-stream"),
        "GET /sse:\n{}",
        stream.seen()
    );
    let endpoint = loop {
        let event = stream.expect_event("an `endpoint` event");
        if event.event.as_deref() == Some("endpoint") {
            break event.data;
        }
        // Anything before it must be a data-less priming event.
        assert!(
            event.data.is_empty(),
            "an event with data before `endpoint`:\n{}",
            stream.seen()
        );
    };
    (stream, endpoint)
}

#[test]
fn legacy_sse_announces_the_message_endpoint() {
    let server = quickstart();
    let (stream, endpoint) = open_legacy(&server);
    let id = endpoint
        .strip_prefix("/messages?sessionId=")
        .unwrap_or_else(|| {
            panic!(
                "endpoint {endpoint:?} is not /messages?sessionId=…:\n{}",
                stream.seen()
            )
        });
    assert!(!id.is_empty(), "empty sessionId:\n{}", stream.seen());
}

#[test]
fn legacy_sse_responses_arrive_on_the_stream() {
    let server = quickstart();
    let (mut stream, endpoint) = open_legacy(&server);
    let r = server.send(&Req::post(&endpoint).json(&initialize_request("2024-11-05")));
    assert_eq!(r.status(), 202, "POST {endpoint}: {r}");
    let event = loop {
        let event = stream.expect_event("the initialize response");
        if !event.data.is_empty() {
            break event;
        }
    };
    assert_eq!(
        event.event.as_deref(),
        Some("message"),
        "not a `message` event:\n{}",
        stream.seen()
    );
    let body = event.json();
    assert_eq!(body["id"], 0, "{}", stream.seen());
    assert_eq!(
        body["result"]["protocolVersion"],
        "2024-11-05",
        "{}",
        stream.seen()
    );
    // And the session works on: initialized, then a call.
    let r = server.send(&Req::post(&endpoint).json(&notification("notifications/initialized")));
    assert_eq!(r.status(), 202, "{r}");
    let r = server.send(&Req::post(&endpoint).json(&add_call(7)));
    assert_eq!(r.status(), 202, "{r}");
    let event = stream.expect_event("the tools/call response");
    let body = event.json();
    assert_eq!(body["id"], 7, "{}", stream.seen());
    assert_eq!(
        body["result"]["content"][0]["text"],
        "5",
        "{}",
        stream.seen()
    );
}

#[test]
fn legacy_post_with_an_unknown_session_id_is_404() {
    let server = quickstart();
    let r = server.send(
        &Req::post("/messages?sessionId=0123456789abcdef0123456789abcdef")
            .json(&initialize_request("2024-11-05")),
    );
    assert_eq!(r.status(), 404, "{r}");
}

#[test]
fn a_legacy_session_ends_with_its_stream() {
    let server = quickstart();
    let (stream, endpoint) = open_legacy(&server);
    drop(stream);
    // The server notices the closed stream at its next write or poll; give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = server.send(&Req::post(&endpoint).json(&initialize_request("2024-11-05")));
        if r.status() == 404 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "POST {endpoint} still accepted 5 s after its SSE stream closed: {r}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------------
// Shutdown
// ---------------------------------------------------------------------------------------------

#[test]
fn sigterm_with_an_open_get_stream_exits_zero() {
    let mut server = quickstart();
    let id = server.open_session();
    let mut stream = server.open_stream(&Req::get("/mcp").headers(&[
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", &id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]));
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    let _priming = stream.expect_event("a priming event");
    let start = Instant::now();
    server.proc.signal(15);
    let limit = Duration::from_secs(8);
    let code = loop {
        if let Some(status) = server.proc.child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > limit {
            let log = server.log();
            panic!("no exit within {limit:?} of SIGTERM with a GET stream open; stderr:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let log = server.log();
    assert_eq!(
        code,
        Some(0),
        "exit status after SIGTERM (None = killed by a signal); stderr:\n{log}"
    );
    // The stream was ended, not left hanging.
    match stream.next_event(Duration::from_secs(2)) {
        Err(ReadError::Closed) => {}
        other => panic!(
            "the GET stream is still open after exit: {other:?}\n{}",
            stream.seen()
        ),
    }
}

#[test]
fn delete_closes_the_sessions_open_streams() {
    let server = quickstart();
    let id = server.open_session();
    let mut stream = server.open_stream(&Req::get("/mcp").headers(&[
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", &id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]));
    stream.expect_event("priming event");
    let r = server.send(&Req::new("DELETE", "/mcp").headers(&[("Mcp-Session-Id", &id)]));
    assert_eq!(r.status(), 200, "DELETE: {r}");
    let next = stream.next_event(std::time::Duration::from_secs(3));
    assert!(
        matches!(next, Err(support::http::ReadError::Closed)),
        "the stream should end with its session, got {next:?}"
    );
}

#[test]
fn errors_before_dispatch_echo_the_request_id() {
    let server = quickstart();
    let r = server.post(
        &stateless_add(),
        &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Name", "add")],
    );
    assert_eq!((r.status(), r.json()["id"].clone()), (400, json!(1)), "{r}");
    let r = server.post(&add_call(7), &[]);
    assert_eq!(
        (r.status(), r.json()["id"].clone()),
        (400, json!(7)),
        "no session: {r}"
    );
}

#[test]
fn a_2026_request_without_meta_is_400_invalid_params() {
    let server = quickstart();
    for params in [
        json!({"name": "add"}),
        json!({"name": "add", "_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
    ] {
        let r = server.post(&rpc(3, "tools/call", params), &STATELESS_HEADERS);
        assert_eq!((r.status(), r.error_code()), (400, -32602), "{r}");
        assert_eq!(r.json()["id"], 3, "{r}");
    }
}

#[test]
fn initialize_does_not_exist_in_2026_and_changes_nothing() {
    let server = quickstart();
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}, "_meta": stateless_meta()}),
    );
    for _ in 0..2 {
        let r = server.post(
            &init,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "initialize"),
            ],
        );
        assert_eq!((r.status(), r.error_code()), (404, -32601), "{r}");
        assert_eq!(r.header("mcp-session-id"), None, "{r}");
    }
    // Ordinary clients are unaffected.
    server.open_session();
    assert_add_result(&server.post(&stateless_add(), &STATELESS_HEADERS));
}

#[test]
fn the_era_comes_from_meta_not_from_argument_text() {
    let server = quickstart();
    let id = server.open_session();
    let call = rpc(
        2,
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "io.modelcontextprotocol/protocolVersion"}}),
    );
    let r = server.post(
        &call,
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    assert_eq!(r.status(), 200, "{r}");
    assert!(
        r.json()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("io.modelcontextprotocol"),
        "{r}"
    );
}
