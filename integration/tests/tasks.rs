//! Tasks (`#[tool(task = …)]`) in both eras, through the in-process client: creation, polling,
//! results and errors, input, cancellation, TTL, limits and isolation between sessions.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// Works for `ms` milliseconds, then answers; counts cancellations it saw.
#[tool(task = "optional")]
async fn work(ms: u64, ctx: Context) -> Result<String, String> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("worked {ms} ms")),
        _ = ctx.cancelled() => {
            CANCELLED.fetch_add(1, Ordering::SeqCst);
            Err("cancelled".into())
        }
    }
}

static CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Holds until cancelled (only the two-instance test runs it: its count is its own).
#[tool(task = "optional")]
async fn held(ctx: Context) -> Result<String, String> {
    ctx.cancelled().await;
    HELD_CANCELLED.fetch_add(1, Ordering::SeqCst);
    Err("cancelled".into())
}

static HELD_CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Reports progress and logs, then answers.
#[tool(task = "optional")]
async fn chatty(ctx: Context) -> String {
    ctx.info("halfway");
    ctx.progress(1.0, Some(1.0), Some("done"));
    "chatted".into()
}

/// Always a task; fails as a tool (`isError`).
#[tool(task = "required")]
async fn flaky() -> Result<String, String> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Err("it broke".into())
}

/// Fails with a protocol error.
#[tool(task = "optional")]
async fn broken() -> Result<String, McpError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Err(McpError::invalid_params("no good"))
}

/// A never-task tool.
#[tool]
async fn quick() -> String {
    "quick".into()
}

#[derive(Deserialize, JsonSchema)]
struct Pick {
    /// A word.
    word: String,
}

/// Asks twice at once, then joins the answers.
#[tool(task = "required")]
async fn two_questions(ctx: Context) -> Result<String, McpError> {
    let (a, b) = tokio::join!(
        ctx.ask_as("first").elicit::<Pick>("First word?"),
        ctx.ask_as("second").elicit::<Pick>("Second word?"),
    );
    let word = |e: Elicitation<Pick>| e.accepted().map_or("-".into(), |p| p.word);
    Ok(format!("{} {}", word(a?), word(b?)))
}

/// Asks upfront (before the task exists), then works.
#[tool(task = "required")]
async fn upfront(ctx: Context) -> Result<String, McpError> {
    let who = ctx
        .ask_upfront("who")
        .elicit::<Pick>("Who?")
        .await?
        .accepted()
        .map_or("nobody".into(), |p| p.word);
    tokio::time::sleep(Duration::from_millis(30)).await;
    Ok(format!("for {who}"))
}

/// Waits until cancelled, counting that it was.
#[tool(task = "required")]
async fn linger(ctx: Context) -> String {
    ctx.cancelled().await;
    LINGER_CANCELLED.fetch_add(1, Ordering::SeqCst);
    "cancelled".into()
}

static LINGER_CANCELLED: AtomicUsize = AtomicUsize::new(0);

const EXT: &str = "io.modelcontextprotocol/tasks";

fn server() -> Server {
    Server::builder().build().unwrap()
}

async fn stateless_with_tasks(server: Server) -> TestClient {
    TestClient::connect_answering(
        server,
        ProtocolVersion::V2026_07_28,
        json!({ "extensions": { EXT: {} }, "elicitation": {} }),
        None,
    )
    .await
    .unwrap()
}

async fn session_2025(server: Server) -> TestClient {
    TestClient::connect_answering(
        server,
        ProtocolVersion::V2025_11_25,
        json!({ "elicitation": {}, "tasks": {} }),
        Some(Arc::new(|_: &str, params: &Value| {
            let message = params["message"].as_str().unwrap_or_default().to_owned();
            Ok(json!({ "action": "accept", "content": { "word": message } }))
        })),
    )
    .await
    .unwrap()
}

/// Polls `tasks/get` until the task is terminal (or `status`, when given).
async fn poll(client: &TestClient, id: &str, until: Option<&str>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let task = client
            .request("tasks/get", json!({ "taskId": id }))
            .await
            .unwrap();
        let status = task["status"].as_str().unwrap().to_owned();
        if until == Some(status.as_str())
            || matches!(status.as_str(), "completed" | "failed" | "cancelled")
        {
            return task;
        }
        assert!(Instant::now() < deadline, "task {id} stuck in {status}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn is_rfc3339(v: &Value) -> bool {
    let s = v.as_str().unwrap_or_default();
    s.len() == 24 && s.as_bytes()[10] == b'T' && s.ends_with('Z')
}

#[tokio::test]
async fn stateless_task_is_created_polled_and_completed() {
    let client = stateless_with_tasks(server()).await;
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 100 } }),
        )
        .await
        .unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working");
    assert!(created.get("task").is_none() && created.get("result").is_none());
    assert!(is_rfc3339(&created["createdAt"]) && is_rfc3339(&created["lastUpdatedAt"]));
    assert!(created["ttlMs"].as_u64().unwrap() > 0);
    assert!(created["pollIntervalMs"].as_u64().unwrap() > 0);
    assert!(created.get("ttl").is_none() && created.get("requestState").is_none());
    let id = created["taskId"].as_str().unwrap();
    assert_eq!(id.len(), 32);

    let working = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(working["status"], "working");
    assert_eq!(working["resultType"], "complete");
    assert!(working.get("result").is_none());

    let done = poll(&client, id, None).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "worked 100 ms");
    assert!(
        done["result"]["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none()
    );
}

#[tokio::test]
async fn stateless_negotiation_decides_per_request() {
    // Without the extension: an optional task tool runs as a plain call, a required one is
    // refused with -32021 naming the extension, and the tasks methods are refused too.
    let plain = TestClient::stateless().await;
    let result = plain.call_tool("work", json!({ "ms": 1 })).await.unwrap();
    assert_eq!(result.text(), "worked 1 ms");
    let e = plain.call_tool("flaky", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::MISSING_CLIENT_CAPABILITY);
    assert_eq!(
        e.data.unwrap()["requiredCapabilities"]["extensions"][EXT],
        json!({})
    );
    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let e = plain
            .request(method, json!({ "taskId": "x", "inputResponses": {} }))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::MISSING_CLIENT_CAPABILITY, "{method}");
    }
    // With it: a never-task tool still answers at once; tasks/result and tasks/list do not
    // exist in 2026-07-28.
    let client = stateless_with_tasks(server()).await;
    let quick = client
        .request("tools/call", json!({ "name": "quick", "arguments": {} }))
        .await
        .unwrap();
    assert_eq!(quick["resultType"], "complete");
    for method in ["tasks/result", "tasks/list"] {
        let e = client
            .request(method, json!({ "taskId": "x" }))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND, "{method}");
    }
    let e = client
        .request("tasks/get", json!({ "taskId": "nope" }))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    // server/discover declares the extension, and no v1 `tasks` capability.
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discovered["capabilities"]["extensions"][EXT], json!({}));
    assert!(discovered["capabilities"].get("tasks").is_none());
}

#[tokio::test]
async fn stateless_tool_errors_complete_and_protocol_errors_fail() {
    let client = stateless_with_tasks(server()).await;
    let created = client
        .request("tools/call", json!({ "name": "flaky", "arguments": {} }))
        .await
        .unwrap();
    let done = poll(&client, created["taskId"].as_str().unwrap(), None).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["isError"], true);

    let created = client
        .request("tools/call", json!({ "name": "broken", "arguments": {} }))
        .await
        .unwrap();
    let done = poll(&client, created["taskId"].as_str().unwrap(), None).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], -32602);
    assert_eq!(done["error"]["message"], "no good");
    assert!(done.get("result").is_none());
}

#[tokio::test]
async fn stateless_cancel_stops_the_work_and_is_idempotent() {
    let client = stateless_with_tasks(server()).await;
    let before = CANCELLED.load(Ordering::SeqCst);
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 60_000 } }),
        )
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    let ack = client
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
    let task = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(task["status"], "cancelled");
    // The tool saw its cancellation, and its own ending did not overwrite the status.
    let deadline = Instant::now() + Duration::from_secs(5);
    while CANCELLED.load(Ordering::SeqCst) == before {
        assert!(
            Instant::now() < deadline,
            "the tool never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let task = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(task["status"], "cancelled");
    let again = client
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(again["resultType"], "complete");
}

#[tokio::test]
async fn stateless_input_is_asked_and_answered_in_parts() {
    let client = stateless_with_tasks(server()).await;
    let created = client
        .request(
            "tools/call",
            json!({ "name": "two_questions", "arguments": {} }),
        )
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    let parked = poll(&client, id, Some("input_required")).await;
    let asks = parked["inputRequests"].as_object().unwrap();
    assert_eq!(asks.len(), 2, "{parked}");
    assert_eq!(asks["first"]["method"], "elicitation/create");
    assert_eq!(asks["second"]["params"]["message"], "Second word?");

    // One answer (and one for a key nobody asked): the task still waits for the other.
    let ack = client
        .request(
            "tasks/update",
            json!({ "taskId": id, "inputResponses": {
                "first": { "action": "accept", "content": { "word": "hello" } },
                "unknown": { "action": "accept" },
            }}),
        )
        .await
        .unwrap();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("status").is_none());
    let partial = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(partial["status"], "input_required");
    let left: Vec<&String> = partial["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(left, ["second"]);

    client
        .request(
            "tasks/update",
            json!({ "taskId": id, "inputResponses": {
                "second": { "action": "accept", "content": { "word": "world" } },
            }}),
        )
        .await
        .unwrap();
    let done = poll(&client, id, None).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "hello world");
    assert!(done.get("inputRequests").is_none());
}

#[tokio::test]
async fn stateless_upfront_asks_are_a_round_trip_before_the_task() {
    let client = stateless_with_tasks(server()).await;
    let round = client
        .request("tools/call", json!({ "name": "upfront", "arguments": {} }))
        .await
        .unwrap();
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert!(round.get("taskId").is_none());
    assert_eq!(
        round["inputRequests"]["who"]["method"],
        "elicitation/create"
    );
    let created = client
        .request(
            "tools/call",
            json!({
                "name": "upfront",
                "arguments": {},
                "inputResponses": { "who": { "action": "accept", "content": { "word": "Ada" } } },
                "requestState": round["requestState"],
            }),
        )
        .await
        .unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let done = poll(&client, created["taskId"].as_str().unwrap(), None).await;
    assert_eq!(done["result"]["content"][0]["text"], "for Ada");
}

#[tokio::test]
async fn ttl_is_kept_then_the_task_is_gone_and_its_work_cancelled() {
    let server = Server::builder()
        .task_ttl(Duration::from_secs(1), Duration::from_secs(1))
        .build()
        .unwrap();
    let client = stateless_with_tasks(server).await;
    let before = CANCELLED.load(Ordering::SeqCst);
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 60_000 } }),
        )
        .await
        .unwrap();
    assert_eq!(created["ttlMs"], 1000);
    let id = created["taskId"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let task = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(task["status"], "working", "never expired early");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let e = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    // The reaper cancelled the work still running for it.
    let deadline = Instant::now() + Duration::from_secs(3);
    while CANCELLED.load(Ordering::SeqCst) == before {
        assert!(Instant::now() < deadline, "the expired task still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_number_of_unfinished_tasks_per_client_is_limited() {
    let server = Server::builder().max_tasks(2, 100).build().unwrap();
    let client = stateless_with_tasks(server).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let created = client
            .request(
                "tools/call",
                json!({ "name": "work", "arguments": { "ms": 60_000 } }),
            )
            .await
            .unwrap();
        ids.push(created["taskId"].as_str().unwrap().to_owned());
    }
    let e = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 60_000 } }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(e.message.contains("too many tasks"), "{}", e.message);
    // A finished task no longer counts.
    client
        .request("tasks/cancel", json!({ "taskId": ids[0] }))
        .await
        .unwrap();
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 1 } }),
        )
        .await
        .unwrap();
    assert!(created["resultType"] == "task" || created["resultType"] == "complete");
    for id in &ids {
        let _ = client
            .request("tasks/cancel", json!({ "taskId": id }))
            .await;
    }
}

#[tokio::test]
async fn session_2025_11_25_tasks_on_the_wire() {
    let server = server();
    let client = session_2025(server.clone()).await;
    // The capability (in 2025-11-25 only) and each tool's execution.taskSupport.
    for (version, declared) in [("2025-11-25", true), ("2025-06-18", false)] {
        let raw = TestClient::stateless().await;
        let init = raw
            .send_raw(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
                .to_string(),
            )
            .await
            .unwrap();
        let tasks = init["result"]["capabilities"].get("tasks");
        assert_eq!(tasks.is_some(), declared, "{version}: {init}");
        if declared {
            assert_eq!(tasks.unwrap()["requests"]["tools"]["call"], json!({}));
        }
    }
    let tools = client.list_tools().await.unwrap();
    let support = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .pointer("/execution/taskSupport")
            .cloned()
    };
    assert_eq!(support("work"), Some(json!("optional")));
    assert_eq!(support("flaky"), Some(json!("required")));
    assert_eq!(support("quick"), None);

    // A task on request; the CreateTaskResult wraps the task.
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 50 }, "task": { "ttl": 60_000 } }),
        )
        .await
        .unwrap();
    let task = &created["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60_000);
    assert!(task.get("ttlMs").is_none() && created.get("resultType").is_none());
    let id = task["taskId"].as_str().unwrap().to_owned();
    // tasks/result blocks until the end, then answers the tool's result naming the task.
    let result = client
        .request("tasks/result", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "worked 50 ms");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let got = client
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(got["status"], "completed");
    // A finished task cannot be cancelled in this era.
    let e = client
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    // Without the task param a required tool is -32601; with it a never-task tool is too.
    let e = client.call_tool("flaky", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    let e = client
        .request(
            "tools/call",
            json!({ "name": "quick", "arguments": {}, "task": {} }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    // A tool error makes the task `failed` here; tasks/result still returns the result.
    let created = client
        .request(
            "tools/call",
            json!({ "name": "flaky", "arguments": {}, "task": {} }),
        )
        .await
        .unwrap();
    let id2 = created["task"]["taskId"].as_str().unwrap().to_owned();
    let result = client
        .request("tasks/result", json!({ "taskId": id2 }))
        .await
        .unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(
        client
            .request("tasks/get", json!({ "taskId": id2 }))
            .await
            .unwrap()["status"],
        "failed"
    );
    // tasks/list pages through this session's tasks, oldest first.
    let listed = client.request("tasks/list", json!({})).await.unwrap();
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [id.as_str(), id2.as_str()]);
    let e = client
        .request("tasks/list", json!({ "cursor": "bogus" }))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    // Status changes were announced.
    let statuses: Vec<Value> = client
        .take_notifications()
        .into_iter()
        .filter(|n| n["method"] == "notifications/tasks/status")
        .collect();
    assert!(
        statuses
            .iter()
            .any(|n| n["params"]["taskId"] == id.as_str() && n["params"]["status"] == "completed"),
        "{statuses:?}"
    );
}

#[tokio::test]
async fn session_2025_11_25_asks_name_their_task_and_protocol_errors_return() {
    let client = session_2025(server()).await;
    let created = client
        .request(
            "tools/call",
            json!({ "name": "two_questions", "arguments": {}, "task": {} }),
        )
        .await
        .unwrap();
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let result = client
        .request("tasks/result", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "First word? Second word?");
    let asks = client.take_asks();
    assert_eq!(asks.len(), 2);
    for ask in &asks {
        assert_eq!(
            ask["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            id.as_str()
        );
    }
    // A protocol error comes back from tasks/result as that error.
    let created = client
        .request(
            "tools/call",
            json!({ "name": "broken", "arguments": {}, "task": {} }),
        )
        .await
        .unwrap();
    let e = client
        .request(
            "tasks/result",
            json!({ "taskId": created["task"]["taskId"] }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(e.message, "no good");
}

#[tokio::test]
async fn a_task_is_invisible_to_other_sessions() {
    let server = server();
    let owner = session_2025(server.clone()).await;
    let other = session_2025(server.clone()).await;
    let created = owner
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 60_000 }, "task": {} }),
        )
        .await
        .unwrap();
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let e = other
            .request(method, json!({ "taskId": id }))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{method}");
        assert_eq!(e.message, format!("Unknown task: {id}"));
    }
    assert_eq!(
        other.request("tasks/list", json!({})).await.unwrap()["tasks"],
        json!([])
    );
    // Still running for its owner.
    let task = owner
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(task["status"], "working");
    owner
        .request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap();
}

#[tokio::test]
async fn older_sessions_never_run_tasks() {
    let client = TestClient::connect_to(server(), ProtocolVersion::V2025_06_18)
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.get("execution").is_none()));
    // The `task` param means nothing before 2025-11-25: the call runs as a plain one.
    let result = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 1 }, "task": {} }),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "worked 1 ms");
    let e = client
        .request("tasks/get", json!({ "taskId": "x" }))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
}

/// Starts `work` (150 ms) as a task; its id.
async fn work_as_a_task(client: &TestClient) -> String {
    let created = client
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 150 } }),
        )
        .await
        .unwrap();
    created["taskId"].as_str().unwrap().to_owned()
}

/// Opens listen stream 9 for the tasks `task_ids`; it runs until aborted.
fn listen_to_tasks(
    client: &Arc<TestClient>,
    task_ids: Value,
) -> tokio::task::JoinHandle<Result<Value, McpError>> {
    let listener = client.clone();
    tokio::spawn(async move {
        listener
            .request_with_id(
                9,
                "subscriptions/listen",
                json!({ "notifications": { "taskIds": task_ids } }),
            )
            .await
    })
}

/// The `notifications/tasks` that arrived, once they had a moment to.
async fn task_notifications(client: &TestClient) -> Vec<Value> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .take_notifications()
        .into_iter()
        .filter(|n| n["method"] == "notifications/tasks")
        .collect()
}

/// `heard` is one notification, on listen stream 9, of task `id` completed by `work` (150 ms).
fn assert_heard_completed(heard: &[Value], id: &str) {
    assert_eq!(heard.len(), 1, "one notification: {heard:?}");
    let params = &heard[0]["params"];
    assert_eq!(params["taskId"], id);
    assert_eq!(params["status"], "completed");
    assert_eq!(params["result"]["content"][0]["text"], "worked 150 ms");
    assert_eq!(params["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);
}

#[tokio::test]
async fn listen_streams_carry_the_status_of_the_tasks_they_watch() {
    let client = Arc::new(stateless_with_tasks(server()).await);
    let id = work_as_a_task(&client).await;
    let other = work_as_a_task(&client).await;
    let listen = listen_to_tasks(&client, json!([id]));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ack = client.take_notifications();
    assert_eq!(
        ack[0]["params"]["notifications"],
        json!({ "taskIds": [id] }),
        "{ack:?}"
    );
    poll(&client, &id, None).await;
    poll(&client, &other, None).await;
    // Only the watched task.
    assert_heard_completed(&task_notifications(&client).await, &id);
    listen.abort();
}

/// After the change bus reconnected (it may have missed a task's status announced through
/// another instance), a listen stream hears the current state of every task it watches: a
/// status is state, not a hint a later change would repeat.
#[tokio::test]
async fn after_a_bus_reconnect_listen_streams_hear_the_state_of_their_tasks() {
    let bus = mcp_runtime::catalog::LocalBus::new();
    let server = Server::builder()
        .change_bus(bus.clone())
        .max_subscriptions(2)
        .build()
        .unwrap();
    let client = Arc::new(stateless_with_tasks(server).await);
    let id = work_as_a_task(&client).await;
    poll(&client, &id, None).await;
    // Watching more tasks than the subscription limit is refused.
    let e = client
        .request(
            "subscriptions/listen",
            json!({ "notifications": { "taskIds": ["a", "b", "c"] } }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
    // Its own task and another's (of which it hears nothing).
    let listen = listen_to_tasks(&client, json!([id, "someone-elses"]));
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.take_notifications();
    bus.resync();
    assert_heard_completed(&task_notifications(&client).await, &id);
    listen.abort();
}

#[test]
fn a_sessions_tasks_end_with_the_session() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let config = mcp_runtime::transport::HttpConfig::default();
            let _ = mcp_runtime::transport::serve_http_on(server(), listener, config).await;
        });
    });
    let endpoint = support::http::Endpoint {
        port: rx.recv().unwrap(),
    };
    let session = endpoint.open_session();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = endpoint.post(
        &support::http::rpc(
            1,
            "tools/call",
            json!({ "name": "linger", "arguments": {}, "task": {} }),
        ),
        &headers,
    );
    assert_eq!(r.status(), 200, "{r}");
    assert!(r.text().contains("taskId"), "{r}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(LINGER_CANCELLED.load(Ordering::SeqCst), 0, "still running");
    let r = endpoint.send(&support::http::Req::new("DELETE", "/mcp").headers(&headers));
    assert!(r.status() < 300, "{r}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while LINGER_CANCELLED.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the task outlived its session");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn session_2025_11_25_task_notifications_name_their_task() {
    let client = session_2025(server()).await;
    let created = client
        .request(
            "tools/call",
            json!({ "name": "chatty", "arguments": {}, "task": {}, "_meta": { "progressToken": "p1" } }),
        )
        .await
        .unwrap();
    let id = created["task"]["taskId"].as_str().unwrap().to_owned();
    let result = client
        .request("tasks/result", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "chatted");
    let notes = client.take_notifications();
    for method in ["notifications/progress", "notifications/message"] {
        let note = notes
            .iter()
            .find(|n| n["method"] == method)
            .unwrap_or_else(|| panic!("no {method} in {notes:?}"));
        assert_eq!(
            note["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            id.as_str(),
            "{note}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_a_store_read_and_cancel_each_others_tasks() {
    let store = Arc::new(mcp_runtime::task::MemoryTaskStore::new());
    let instance = |lease| {
        Server::builder()
            .task_store(store.clone())
            .task_lease(lease)
            .task_poll_interval(Duration::from_millis(10))
            .build()
            .unwrap()
    };
    let lease = Duration::from_millis(600);
    let a = stateless_with_tasks(instance(lease)).await;
    let b = stateless_with_tasks(instance(lease)).await;

    // Created on A, finished there, polled through B.
    let created = a
        .request(
            "tools/call",
            json!({ "name": "work", "arguments": { "ms": 100 } }),
        )
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    let done = poll(&b, id, None).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "worked 100 ms");

    // Cancelled through B: cancelled at once everywhere, and A's work stops at its next lease
    // renewal (a third of the lease).
    let created = a
        .request("tools/call", json!({ "name": "held", "arguments": {} }))
        .await
        .unwrap();
    let id = created["taskId"].as_str().unwrap();
    b.request("tasks/cancel", json!({ "taskId": id }))
        .await
        .unwrap();
    for client in [&a, &b] {
        let task = client
            .request("tasks/get", json!({ "taskId": id }))
            .await
            .unwrap();
        assert_eq!(task["status"], "cancelled", "{task}");
    }
    let deadline = Instant::now() + lease / 3 + Duration::from_millis(500);
    while HELD_CANCELLED.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "A's work never stopped");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let task = a
        .request("tasks/get", json!({ "taskId": id }))
        .await
        .unwrap();
    assert_eq!(
        task["status"], "cancelled",
        "the work's own end did not win"
    );
}
