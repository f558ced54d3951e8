//! Tasks over Streamable HTTP against the conformance fixture (`examples/conformance`): a
//! 2026-07-28 task belongs to its caller (its `Authorization`), survives the connection that
//! created it, and its id must come in `Mcp-Name`; a session-era task belongs to its session.

mod support;

use serde_json::{Value, json};
use support::http::{HttpServer, Response, rpc};

const EXT: &str = "io.modelcontextprotocol/tasks";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "extensions": { EXT: {} }, "elicitation": {} },
    })
}

/// A 2026-07-28 request with its routing headers, as `caller` (an `Authorization` value).
fn call(server: &HttpServer, method: &str, mut params: Value, caller: &str) -> Response {
    params["_meta"] = meta();
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
        ("Authorization", caller.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    server.post(&rpc(1, method, params), &headers)
}

/// The JSON-RPC message of a response: its JSON body, or the last event of an SSE one.
fn message(r: &Response) -> Value {
    if r.content_type()
        .is_some_and(|t| t.starts_with("text/event-stream"))
    {
        let text = r.text();
        let data = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .next_back()
            .unwrap_or_else(|| panic!("no SSE data: {r}"));
        return serde_json::from_str(data.trim()).unwrap();
    }
    r.json()
}

fn result(r: &Response) -> Value {
    let body = message(r);
    assert!(body.get("error").is_none(), "{r}");
    body["result"].clone()
}

#[test]
fn stateless_tasks_belong_to_their_caller_and_outlive_the_connection() {
    let server = HttpServer::start("conformance");
    let alice = "Bearer alice";
    let created = call(
        &server,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 0.3, "label": "x" } }),
        alice,
    );
    let created = result(&created);
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();

    // Another caller: the same answer as for an id that does not exist.
    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let r = call(
            &server,
            method,
            json!({ "taskId": id, "inputResponses": {} }),
            "Bearer mallory",
        );
        let body = message(&r);
        assert_eq!(body["error"]["code"], -32602, "{method}: {r}");
        assert_eq!(body["error"]["message"], format!("Unknown task: {id}"));
    }

    // Each request above was its own connection: the owner polls on new ones until done.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let done = loop {
        let task = result(&call(&server, "tasks/get", json!({ "taskId": id }), alice));
        if task["status"] == "completed" {
            break task;
        }
        assert_eq!(task["status"], "working");
        assert!(std::time::Instant::now() < deadline, "never completed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(done["result"]["content"][0]["text"], "x: done after 0.3 s");
}

#[test]
fn stateless_task_methods_check_mcp_name_against_the_task_id() {
    let server = HttpServer::start("conformance");
    let created = result(&call(
        &server,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 30 } }),
        "Bearer a",
    ));
    let id = created["taskId"].as_str().unwrap().to_owned();
    let mut params = json!({ "taskId": id, "_meta": meta() });
    params["_meta"] = meta();
    let wrong = server.post(
        &rpc(2, "tasks/get", params.clone()),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tasks/get"),
            ("Mcp-Name", "another-task"),
            ("Authorization", "Bearer a"),
        ],
    );
    assert_eq!(wrong.status(), 400, "{wrong}");
    assert_eq!(wrong.json()["error"]["code"], -32020);
    let missing = server.post(
        &rpc(3, "tasks/get", params),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tasks/get"),
            ("Authorization", "Bearer a"),
        ],
    );
    assert_eq!(missing.status(), 400, "{missing}");
    let ack = result(&call(
        &server,
        "tasks/cancel",
        json!({ "taskId": id }),
        "Bearer a",
    ));
    assert_eq!(ack["resultType"], "complete");
}

#[test]
fn session_tasks_belong_to_their_session() {
    let server = HttpServer::start("conformance");
    let (one, two) = (server.open_session(), server.open_session());
    let post = |session: &str, id: i64, method: &str, params: Value| {
        server.post(
            &rpc(id, method, params),
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
        )
    };
    let created = post(
        &one,
        1,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": { "seconds": 30 }, "task": { "ttl": 60000 } }),
    );
    let created = result(&created);
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let theirs = post(&two, 2, "tasks/get", json!({ "taskId": id }));
    assert_eq!(message(&theirs)["error"]["code"], -32602, "{theirs}");
    let mine = result(&post(&one, 3, "tasks/get", json!({ "taskId": id })));
    assert_eq!(mine["status"], "working");
    let cancelled = result(&post(&one, 4, "tasks/cancel", json!({ "taskId": id })));
    assert_eq!(cancelled["status"], "cancelled");
}

#[test]
fn stateless_round_trip_create_get_update_complete() {
    let server = HttpServer::start("conformance");
    let caller = "Bearer round-trip";
    let created = result(&call(
        &server,
        "tools/call",
        json!({ "name": "confirm_delete", "arguments": { "filename": "a.txt" } }),
        caller,
    ));
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let parked = loop {
        let task = result(&call(&server, "tasks/get", json!({ "taskId": id }), caller));
        if task["status"] == "input_required" {
            break task;
        }
        assert_eq!(task["status"], "working", "{task}");
        assert!(std::time::Instant::now() < deadline, "never asked");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (key, ask) = parked["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Delete a.txt?");
    let ack = result(&call(
        &server,
        "tasks/update",
        json!({ "taskId": id, "inputResponses": { key.clone(): { "action": "accept", "content": { "confirm": true } } } }),
        caller,
    ));
    assert_eq!(ack["resultType"], "complete");
    let done = loop {
        let task = result(&call(&server, "tasks/get", json!({ "taskId": id }), caller));
        if task["status"] == "completed" {
            break task;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never completed: {task}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");
    assert!(done.get("inputRequests").is_none());
}
