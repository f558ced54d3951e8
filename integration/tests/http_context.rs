//! Context features over Streamable HTTP against the context example (`examples/context.rs`),
//! with a raw HTTP/1.1 client (`support::http`): in the session era, asks are JSON-RPC requests
//! on the SSE stream of the tool call's POST, answered by the client's POSTed responses, and
//! changes reach the session's GET stream; in 2026-07-28, asks come back as
//! `InputRequiredResult` and are answered by retries, and changes reach `subscriptions/listen`
//! streams. Every request is written by hand; failures print what came back.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};
use support::http::{HttpServer, ReadError, Req, Response, SseStream, TIMEOUT, notification, rpc};
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

fn context() -> HttpServer {
    HttpServer::start_program(context_example())
}

// ---------------------------------------------------------------------------------------------
// Session era
// ---------------------------------------------------------------------------------------------

/// A 2025-11-25 handshake declaring `capabilities`; returns the session id.
fn open_session(server: &HttpServer, capabilities: Value) -> String {
    let init = rpc(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "http-context-test", "version": "1"}}),
    );
    let r = server.post(&init, &[]);
    assert_eq!(r.status(), 200, "initialize: {r}");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25", "{r}");
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("initialize issued no Mcp-Session-Id: {r}"))
        .to_owned();
    let r = server.post(
        &notification("notifications/initialized"),
        &session_headers(&id),
    );
    assert_eq!(r.status(), 202, "notifications/initialized: {r}");
    id
}

fn session_headers(id: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    rpc(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

/// A JSON answer of a session-era request: 200, `application/json`, the id echoed.
fn json_answer(r: &Response, id: i64) -> Value {
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.content_type().as_deref(), Some("application/json"), "{r}");
    let body = r.json();
    assert_eq!(body["jsonrpc"], "2.0", "{r}");
    assert_eq!(body["id"], id, "{r}");
    body
}

/// The text of a successful `tools/call` answer.
fn tool_text(body: &Value) -> &str {
    assert!(
        body["error"].is_null(),
        "a JSON-RPC error, not a result: {body}"
    );
    assert_ne!(body["result"]["isError"], true, "the tool failed: {body}");
    body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {body}"))
}

/// The next message on an SSE stream: priming events (no data) are skipped.
fn next_message(stream: &mut SseStream, what: &str) -> Value {
    loop {
        let event = stream.expect_event(what);
        if !event.data.is_empty() {
            return event.json();
        }
        assert!(
            event.id.is_some(),
            "an event with neither data nor an id before {what}:\n{}",
            stream.seen()
        );
    }
}

/// Fails unless the server ends the stream before sending anything more.
fn assert_stream_ends(stream: &mut SseStream, after: &str) {
    match stream.next_event(TIMEOUT) {
        Err(ReadError::Closed) => {}
        other => panic!(
            "the stream should end after {after}, got {other:?}:\n{}",
            stream.seen()
        ),
    }
}

/// Opens the SSE stream of a session-era POST.
fn post_stream(server: &HttpServer, session: &str, body: &Value) -> SseStream {
    let stream = server.open_stream(
        &Req::post("/mcp")
            .headers(&session_headers(session))
            .json(body),
    );
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    assert_eq!(
        stream.head.content_type().as_deref(),
        Some("text/event-stream"),
        "an ask must turn the answer into an SSE stream:\n{}",
        stream.seen()
    );
    stream
}

/// A server-to-client request: `jsonrpc`, an id, the method.
fn assert_client_request(message: &Value, method: &str, stream: &SseStream) -> Value {
    assert_eq!(message["jsonrpc"], "2.0", "{}", stream.seen());
    assert_eq!(
        message["method"],
        method,
        "expected a {method} request:\n{}",
        stream.seen()
    );
    let id = message["id"].clone();
    assert!(
        id.is_i64() || id.is_string(),
        "the {method} request has no usable id:\n{}",
        stream.seen()
    );
    id
}

/// The elicitation request is a JSON-RPC request on the POST's SSE stream; the client's answer,
/// POSTed with the session id, gets 202 and resumes the tool, whose result ends that stream.
#[test]
fn session_elicitation_travels_on_the_posts_stream() {
    let server = context();
    let session = open_session(&server, json!({"elicitation": {}}));
    let mut stream = post_stream(&server, &session, &call(1, "greet", json!({})));
    let ask = next_message(&mut stream, "the elicitation/create request");
    let ask_id = assert_client_request(&ask, "elicitation/create", &stream);
    let params = &ask["params"];
    assert_eq!(params["mode"], "form", "{}", stream.seen());
    assert_eq!(params["message"], "What is your name?", "{}", stream.seen());
    assert_eq!(
        params["requestedSchema"]["type"],
        "object",
        "{}",
        stream.seen()
    );
    assert_eq!(
        params["requestedSchema"]["properties"]["name"]["type"],
        "string",
        "{}",
        stream.seen()
    );
    let r = server.post(
        &json!({"jsonrpc": "2.0", "id": ask_id, "result": {"action": "accept", "content": {"name": "Ada"}}}),
        &session_headers(&session),
    );
    assert_eq!(r.status(), 202, "the client's response: {r}");
    assert!(r.body.is_empty(), "202 with a body: {r}");
    let result = next_message(&mut stream, "the tools/call result");
    assert_eq!(result["id"], 1, "{}", stream.seen());
    assert_eq!(tool_text(&result), "Hello, Ada!", "{}", stream.seen());
    assert_stream_ends(&mut stream, "the tools/call result");
}

/// A JSON-RPC error from the client fails the ask; the tool returns it with `?`, so the tool
/// call's answer is that error, code and message unchanged.
#[test]
fn session_client_error_becomes_the_tools_error() {
    let server = context();
    let session = open_session(&server, json!({"sampling": {}}));
    let mut stream = post_stream(
        &server,
        &session,
        &call(4, "summarize", json!({"text": "A long story."})),
    );
    let ask = next_message(&mut stream, "the sampling/createMessage request");
    let ask_id = assert_client_request(&ask, "sampling/createMessage", &stream);
    let params = &ask["params"];
    assert_eq!(params["maxTokens"], 200, "{}", stream.seen());
    assert_eq!(
        params["systemPrompt"],
        "You are concise.",
        "{}",
        stream.seen()
    );
    assert_eq!(
        params["messages"][0]["content"]["text"],
        "Summarize in one sentence:\n\nA long story.",
        "{}",
        stream.seen()
    );
    let r = server.post(
        &json!({"jsonrpc": "2.0", "id": ask_id, "error": {"code": -1, "message": "User rejected sampling"}}),
        &session_headers(&session),
    );
    assert_eq!(r.status(), 202, "the client's error response: {r}");
    let answer = next_message(&mut stream, "the tools/call answer");
    assert_eq!(answer["id"], 4, "{}", stream.seen());
    assert!(
        answer["result"].is_null(),
        "a result for a failed ask:\n{}",
        stream.seen()
    );
    assert_eq!(
        (
            answer["error"]["code"].clone(),
            answer["error"]["message"].clone()
        ),
        (json!(-1), json!("User rejected sampling")),
        "{}",
        stream.seen()
    );
    assert_stream_ends(&mut stream, "the tools/call answer");
}

/// Without the capability nothing is sent: `?` gives -32021 naming the capability, and a tool
/// that handles it carries on.
#[test]
fn session_missing_capability_is_32021_or_a_fallback() {
    let server = context();
    let session = open_session(&server, json!({}));
    let r = server.post(
        &call(2, "summarize", json!({"text": "t"})),
        &session_headers(&session),
    );
    let body = json_answer(&r, 2);
    assert_eq!(body["error"]["code"], -32021, "{r}");
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{r}"
    );
    let r = server.post(&call(3, "greet", json!({})), &session_headers(&session));
    assert_eq!(tool_text(&json_answer(&r, 3)), "Hello, stranger!", "{r}");
}

/// Session-era changes go to the GET stream: `resources/updated` for a subscribed URI, and
/// `tools/list_changed` when a tool is switched on or off, which the lists and calls follow.
#[test]
fn session_changes_reach_the_get_stream() {
    let server = context();
    let session = open_session(&server, json!({}));
    let headers = session_headers(&session);
    let mut get = server.open_stream(
        &Req::get("/mcp")
            .headers(&headers)
            .header("Accept", "text/event-stream"),
    );
    assert_eq!(get.head.status, 200, "{}", get.seen());
    assert_eq!(
        get.head.content_type().as_deref(),
        Some("text/event-stream"),
        "{}",
        get.seen()
    );
    let priming = get.expect_event("the priming event");
    assert!(priming.data.is_empty(), "{}", get.seen());

    let r = server.post(
        &rpc(1, "resources/subscribe", json!({"uri": "notes://board"})),
        &headers,
    );
    assert_eq!(json_answer(&r, 1)["result"], json!({}), "{r}");
    let r = server.post(&call(2, "pin_note", json!({"text": "x"})), &headers);
    assert_eq!(tool_text(&json_answer(&r, 2)), "1 note(s) on the board");
    let note = next_message(&mut get, "notifications/resources/updated");
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://board"}}),
        "{}",
        get.seen()
    );

    let tool_names = |id: i64| -> Vec<String> {
        let r = server.post(&rpc(id, "tools/list", json!({})), &headers);
        json_answer(&r, id)["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools: {r}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let assert_list_changed = |get: &mut SseStream, what: &str| {
        let note = next_message(get, what);
        assert_eq!(
            note["method"],
            "notifications/tools/list_changed",
            "{}",
            get.seen()
        );
        assert!(
            note.get("params").is_none_or(|p| p == &json!({})),
            "a session-era list_changed carries no params:\n{}",
            get.seen()
        );
    };
    assert!(!tool_names(3).contains(&"beta_feature".to_owned()));
    let r = server.post(&call(4, "set_beta", json!({"enabled": true})), &headers);
    assert_eq!(tool_text(&json_answer(&r, 4)), "beta_feature is on");
    assert_list_changed(&mut get, "notifications/tools/list_changed (on)");
    assert!(tool_names(5).contains(&"beta_feature".to_owned()));
    let r = server.post(&call(6, "beta_feature", json!({})), &headers);
    assert_eq!(
        tool_text(&json_answer(&r, 6)),
        "You found the beta feature."
    );

    let r = server.post(&call(7, "set_beta", json!({"enabled": false})), &headers);
    assert_eq!(tool_text(&json_answer(&r, 7)), "beta_feature is off");
    assert_list_changed(&mut get, "notifications/tools/list_changed (off)");
    assert!(!tool_names(8).contains(&"beta_feature".to_owned()));
    let r = server.post(&call(9, "beta_feature", json!({})), &headers);
    let body = json_answer(&r, 9);
    assert_eq!(body["error"]["code"], -32602, "{r}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Unknown tool")),
        "{r}"
    );

    let r = server.post(
        &rpc(10, "resources/subscribe", json!({"uri": "notes://nope"})),
        &headers,
    );
    assert_eq!(json_answer(&r, 10)["error"]["code"], -32002, "{r}");
}

// ---------------------------------------------------------------------------------------------
// Stateless era (2026-07-28)
// ---------------------------------------------------------------------------------------------

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 `tools/call` with `extra` params (`inputResponses`, `requestState`).
fn stateless_call(
    server: &HttpServer,
    id: i64,
    tool: &str,
    arguments: Value,
    capabilities: Value,
    extra: Value,
) -> Response {
    let mut params = json!({"_meta": meta(capabilities), "name": tool, "arguments": arguments});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    let r = server.post(
        &rpc(id, "tools/call", params),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ],
    );
    assert_eq!(
        r.header("mcp-session-id"),
        None,
        "a 2026-07-28 request got a session: {r}"
    );
    r
}

/// An ask with no answer yet ends the call with `InputRequiredResult`; the retry with the
/// answer and the sealed `requestState` completes it; an altered state is refused.
#[test]
fn stateless_elicitation_is_input_required_then_a_retry() {
    let server = context();
    let caps = json!({"elicitation": {}});
    let r = stateless_call(&server, 1, "greet", json!({}), caps.clone(), json!({}));
    let body = json_answer(&r, 1);
    let result = &body["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    let requests = result["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("no inputRequests: {r}"));
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["elicit-0"], "{r}");
    let ask = &requests["elicit-0"];
    assert_eq!(ask["method"], "elicitation/create", "{r}");
    assert_eq!(ask["params"]["mode"], "form", "{r}");
    assert_eq!(ask["params"]["message"], "What is your name?", "{r}");
    assert_eq!(
        ask["params"]["requestedSchema"]["properties"]["name"]["type"], "string",
        "{r}"
    );
    let state = result["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState string: {r}"))
        .to_owned();
    assert!(!state.is_empty(), "{r}");
    for key in ["ttlMs", "cacheScope"] {
        assert!(
            result.get(key).is_none(),
            "an InputRequiredResult is not cacheable, yet has {key}: {r}"
        );
    }

    let answers = json!({"elicit-0": {"action": "accept", "content": {"name": "Ada"}}});
    let r = stateless_call(
        &server,
        2,
        "greet",
        json!({}),
        caps.clone(),
        json!({"inputResponses": answers, "requestState": state}),
    );
    let body = json_answer(&r, 2);
    assert_eq!(body["result"]["resultType"], "complete", "{r}");
    assert_eq!(tool_text(&body), "Hello, Ada!", "{r}");

    // The state is sealed: appended to, one character changed, or replayed for other arguments,
    // it is refused (-32602, an ordinary error: HTTP 200).
    let mut flipped: Vec<char> = state.chars().collect();
    let at = 5; // inside the payload, after "v1."
    flipped[at] = if flipped[at] == 'A' { 'B' } else { 'A' };
    let flipped: String = flipped.into_iter().collect();
    for (id, bad, arguments) in [
        (3, format!("{state}x"), json!({})),
        (4, flipped, json!({})),
        (5, state.clone(), json!({"name": "Bob"})),
    ] {
        let r = stateless_call(
            &server,
            id,
            "greet",
            arguments,
            caps.clone(),
            json!({"inputResponses": answers, "requestState": bad}),
        );
        let body = json_answer(&r, id);
        assert!(
            body["result"].is_null(),
            "an altered state was accepted: {r}"
        );
        assert_eq!(body["error"]["code"], -32602, "{r}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("requestState")),
            "{r}"
        );
    }
}

/// A 2026-07-28 ask the request's capabilities do not allow is -32021, which is HTTP 400.
#[test]
fn stateless_missing_capability_is_400_32021() {
    let server = context();
    let r = stateless_call(
        &server,
        1,
        "summarize",
        json!({"text": "t"}),
        json!({}),
        json!({}),
    );
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32021, "{r}");
    let body = r.json();
    assert_eq!(body["id"], 1, "{r}");
    assert!(
        body["error"]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{r}"
    );
}

/// Opens a `subscriptions/listen` stream with request id `id` and returns it with its
/// acknowledgement's params.
fn listen(server: &HttpServer, id: &str, notifications: Value) -> (SseStream, Value) {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": notifications},
    });
    let mut stream = server.open_stream(&Req::post("/mcp").json(&body).headers(&[
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ]));
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    assert_eq!(
        stream.head.content_type().as_deref(),
        Some("text/event-stream"),
        "{}",
        stream.seen()
    );
    assert_eq!(
        stream.head.header("mcp-session-id"),
        None,
        "{}",
        stream.seen()
    );
    let first = stream.expect_event("notifications/subscriptions/acknowledged");
    let ack = first.json();
    assert_eq!(
        ack["method"],
        "notifications/subscriptions/acknowledged",
        "the first event is not the acknowledgement:\n{}",
        stream.seen()
    );
    assert!(ack.get("id").is_none(), "{}", stream.seen());
    assert_eq!(
        ack["params"]["_meta"][SUBSCRIPTION_ID],
        id,
        "{}",
        stream.seen()
    );
    (stream, ack["params"].clone())
}

/// A stateless listen stream acknowledges what it will send (only what this server has), then
/// carries exactly the changes asked for, tagged with its subscription id; closing it leaves the
/// server serving.
#[test]
fn stateless_listen_streams_carry_what_they_asked_for() {
    let server = context();
    let (mut all, ack) = listen(
        &server,
        "listen-all",
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["notes://board"]}),
    );
    assert_eq!(
        ack["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["notes://board"]}),
        "the example has no prompts, so promptsListChanged cannot be honoured:\n{}",
        all.seen()
    );
    let tag = |id: &str| json!({ SUBSCRIPTION_ID: id });
    let updated = |id: &str| json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://board", "_meta": tag(id)}});
    let tools_changed = |id: &str| json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": tag(id)}});
    let text = |r: &Response, id: i64| tool_text(&json_answer(r, id)).to_owned();

    let r = stateless_call(
        &server,
        1,
        "pin_note",
        json!({"text": "x"}),
        json!({}),
        json!({}),
    );
    assert_eq!(text(&r, 1), "1 note(s) on the board");
    assert_eq!(
        next_message(&mut all, "notifications/resources/updated"),
        updated("listen-all"),
        "{}",
        all.seen()
    );
    let r = stateless_call(
        &server,
        2,
        "set_beta",
        json!({"enabled": true}),
        json!({}),
        json!({}),
    );
    assert_eq!(text(&r, 2), "beta_feature is on");
    assert_eq!(
        next_message(&mut all, "notifications/tools/list_changed"),
        tools_changed("listen-all"),
        "{}",
        all.seen()
    );

    // A stream that asked only for tool list changes: the board's update passes it by, so the
    // next thing it carries is the tools change announced after it.
    let (mut tools_only, ack) = listen(&server, "listen-tools", json!({"toolsListChanged": true}));
    assert_eq!(
        ack["notifications"],
        json!({"toolsListChanged": true}),
        "{}",
        tools_only.seen()
    );
    let r = stateless_call(
        &server,
        3,
        "pin_note",
        json!({"text": "y"}),
        json!({}),
        json!({}),
    );
    assert_eq!(text(&r, 3), "2 note(s) on the board");
    let r = stateless_call(
        &server,
        4,
        "set_beta",
        json!({"enabled": false}),
        json!({}),
        json!({}),
    );
    assert_eq!(text(&r, 4), "beta_feature is off");
    assert_eq!(
        next_message(&mut tools_only, "notifications/tools/list_changed"),
        tools_changed("listen-tools"),
        "the tools-only stream carried something else first:\n{}",
        tools_only.seen()
    );
    assert_eq!(
        next_message(&mut all, "notifications/resources/updated"),
        updated("listen-all"),
        "{}",
        all.seen()
    );
    assert_eq!(
        next_message(&mut all, "notifications/tools/list_changed"),
        tools_changed("listen-all"),
        "{}",
        all.seen()
    );

    // Closing the streams (the cancellation of a stateless listen) breaks nothing.
    drop(all);
    drop(tools_only);
    let r = stateless_call(
        &server,
        5,
        "pin_note",
        json!({"text": "z"}),
        json!({}),
        json!({}),
    );
    assert_eq!(text(&r, 5), "3 note(s) on the board");
    let (mut again, _) = listen(&server, "listen-again", json!({"toolsListChanged": true}));
    let r = stateless_call(
        &server,
        6,
        "set_beta",
        json!({"enabled": true}),
        json!({}),
        json!({}),
    );
    assert_eq!(text(&r, 6), "beta_feature is on");
    assert_eq!(
        next_message(&mut again, "notifications/tools/list_changed"),
        tools_changed("listen-again"),
        "{}",
        again.seen()
    );
    let r = stateless_call(&server, 7, "beta_feature", json!({}), json!({}), json!({}));
    assert_eq!(text(&r, 7), "You found the beta feature.");
}
