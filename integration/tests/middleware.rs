//! Middleware: the chain's order, short-circuits, changed params and results, a per-client rate
//! limit and a filter that hides tools, in both eras; bad params and panics in a layer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_runtime::middleware::{self, McpRequest, Next, Response, Timing};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// Echoes its text.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// A tool the filter hides.
#[tool]
async fn internal_reset() -> String {
    "reset".into()
}

/// The code the rate limit answers with (an application code, outside the reserved range).
const RATE_LIMITED: i32 = -31_000;

/// At most `per_client` `tools/call`s per caller.
fn rate_limit(per_client: usize) -> impl middleware::Middleware {
    let counts: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    middleware::from_fn(move |req: McpRequest, next: Next| {
        let counts = counts.clone();
        async move {
            if req.method() == "tools/call" {
                let mut counts = counts.lock().unwrap();
                let used = counts.entry(req.caller().to_owned()).or_default();
                if *used >= per_client {
                    return Err(McpError::new(
                        ErrorCode(RATE_LIMITED),
                        format!("Rate limited: {per_client} calls per client"),
                    ));
                }
                *used += 1;
            }
            next.run(req).await
        }
    })
}

/// Hides `internal_*` tools from lists and calls.
async fn hide_internal(req: McpRequest, next: Next) -> Result<Response, McpError> {
    if req.tool_name().is_some_and(|n| n.starts_with("internal_")) {
        return Err(McpError::invalid_params(format!(
            "Unknown tool: {}",
            req.tool_name().unwrap_or_default()
        )));
    }
    let listing = req.method() == "tools/list";
    let mut response = next.run(req).await?;
    if listing {
        response.edit_result(|result| {
            if let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) {
                tools.retain(|t| !t["name"].as_str().unwrap_or("").starts_with("internal_"));
            }
        });
    }
    Ok(response)
}

fn server_with(
    layers: Vec<Box<dyn FnOnce(mcp_runtime::ServerBuilder) -> mcp_runtime::ServerBuilder>>,
) -> Server {
    layers
        .into_iter()
        .fold(Server::builder(), |b, add| add(b))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_rate_limit_counts_per_client() {
    let server = server_with(vec![Box::new(|b| b.middleware(rate_limit(2)))]);
    let a = TestClient::connect_to(server.clone(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let b = TestClient::connect_to(server.clone(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    for _ in 0..2 {
        assert_eq!(
            a.call_tool("echo", json!({"text": "hi"}))
                .await
                .unwrap()
                .text(),
            "hi"
        );
    }
    let e = a
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode(RATE_LIMITED));
    // Other methods are not counted, and the other client has its own allowance.
    a.list_tools().await.unwrap();
    assert_eq!(
        b.call_tool("echo", json!({"text": "b"}))
            .await
            .unwrap()
            .text(),
        "b"
    );
}

#[tokio::test]
async fn a_filter_hides_tools_in_both_eras() {
    let server = server_with(vec![Box::new(|b| {
        b.middleware(middleware::from_fn(hide_internal))
    })]);
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = TestClient::connect_to(server.clone(), version)
            .await
            .unwrap();
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert!(names.contains(&"echo".to_owned()), "{version}: {names:?}");
        assert!(
            !names.iter().any(|n| n.starts_with("internal_")),
            "{version}: {names:?}"
        );
        let e = client
            .call_tool("internal_reset", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{version}");
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "ok"}))
                .await
                .unwrap()
                .text(),
            "ok"
        );
    }
    // The 2026-07-28 envelope the dispatcher wrote survives the edit.
    let client = TestClient::connect_to(server_with(vec![]), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let plain = client.request("tools/list", json!({})).await.unwrap();
    let filtered = TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
        .await
        .unwrap()
        .request("tools/list", json!({}))
        .await
        .unwrap();
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert_eq!(filtered[key], plain[key], "{key}");
    }
}

#[tokio::test]
async fn layers_run_outermost_first_and_may_change_params_and_results() {
    let order: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let (first, second) = (order.clone(), order.clone());
    let server = server_with(vec![
        Box::new(move |b| {
            b.middleware(middleware::from_fn(
                move |mut req: McpRequest, next: Next| {
                    let order = first.clone();
                    async move {
                        order.lock().unwrap().push("first in");
                        if req.tool_name() == Some("echo") {
                            let text = req.params()["arguments"]["text"]
                                .as_str()
                                .unwrap_or("")
                                .to_uppercase();
                            req.params_mut()["arguments"]["text"] = text.into();
                        }
                        let response = next.run(req).await;
                        order.lock().unwrap().push("first out");
                        response
                    }
                },
            ))
        }),
        Box::new(move |b| {
            b.middleware(middleware::from_fn(move |req: McpRequest, next: Next| {
                let order = second.clone();
                async move {
                    order.lock().unwrap().push("second in");
                    let mut response = next.run(req).await?;
                    response.edit_result(|r| {
                        if let Some(text) = r["content"][0]["text"].as_str() {
                            r["content"][0]["text"] = format!("{text}!").into();
                        }
                    });
                    order.lock().unwrap().push("second out");
                    Ok(response)
                }
            }))
        }),
        Box::new(|b| b.middleware(Timing)),
    ]);
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    order.lock().unwrap().clear(); // initialize went through too
    let result = client
        .call_tool("echo", json!({"text": "quiet"}))
        .await
        .unwrap();
    assert_eq!(result.text(), "QUIET!");
    assert_eq!(
        *order.lock().unwrap(),
        ["first in", "second in", "second out", "first out"]
    );
}

#[tokio::test]
async fn unread_responses_pass_through_unchanged() {
    let with = server_with(vec![Box::new(|b| b.middleware(Timing))]);
    let plain = server_with(vec![]);
    for (version, method, params) in [
        (
            ProtocolVersion::V2025_11_25,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
        (
            ProtocolVersion::V2025_11_25,
            "tools/call",
            json!({"name": "nope", "arguments": {}}),
        ),
        (ProtocolVersion::V2026_07_28, "tools/list", json!({})),
    ] {
        let a = TestClient::connect_to(with.clone(), version).await.unwrap();
        let b = TestClient::connect_to(plain.clone(), version)
            .await
            .unwrap();
        let (ra, rb) = (
            a.request(method, params.clone()).await,
            b.request(method, params).await,
        );
        assert_eq!(format!("{ra:?}"), format!("{rb:?}"), "{version} {method}");
    }
}

#[tokio::test]
async fn unreadable_arguments_pass_unread_and_panicking_layers_are_errors() {
    let server = server_with(vec![Box::new(|b| {
        b.middleware(middleware::from_fn(
            |req: McpRequest, next: Next| async move {
                if req.tool_name() == Some("internal_reset") {
                    panic!("the layer broke");
                }
                next.run(req).await
            },
        ))
    })]);
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    // The layers get the request as decoded, the value the dispatcher acts on: arguments a
    // value parser cannot read (`1e400`) pass them unread and meet the tool's own argument
    // check, exactly as on a server without middleware.
    let plain = TestClient::connect_to(server_with(vec![]), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let unreadable = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":1e400}}}"#;
    let r = client.send_raw(unreadable).await.unwrap();
    assert_eq!(r, plain.send_raw(unreadable).await.unwrap());
    assert_eq!(r["result"]["isError"], true, "{r}");
    let e = client
        .call_tool("internal_reset", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "still"}))
            .await
            .unwrap()
            .text(),
        "still"
    );
}

/// A layer whose `call` panics before it makes a future.
struct BrokenCall;

impl middleware::Middleware for BrokenCall {
    fn call(&self, req: McpRequest, next: Next) -> middleware::MiddlewareFuture {
        if req.tool_name() == Some("internal_reset") {
            panic!("the layer broke before its future");
        }
        Box::pin(next.run(req))
    }
}

/// The chain is polled once where the request is read: a layer that waits first (and so is
/// answered later) and one that panics before its future must come out as any other.
#[tokio::test]
async fn a_layer_that_waits_is_answered_and_one_that_panics_in_call_is_an_error() {
    let server = server_with(vec![
        Box::new(|b| b.middleware(BrokenCall)),
        Box::new(|b| {
            b.middleware(middleware::from_fn(
                |req: McpRequest, next: Next| async move {
                    tokio::task::yield_now().await;
                    let mut response = next.run(req).await?;
                    response.edit_result(|r| r["waited"] = json!(true));
                    Ok(response)
                },
            ))
        }),
    ]);
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let e = client
        .call_tool("internal_reset", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    let r = client
        .send_raw(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"late"}}}"#)
        .await
        .unwrap();
    assert_eq!(r["id"], 9, "{r}");
    assert_eq!(r["result"]["waited"], true, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "late", "{r}");
}

/// The transport checked the caller's scopes for what the client's request names: a layer
/// that changes the params may not make it name another tool (nor could it, through the
/// typed accessors, read a different name than the dispatcher acts on).
#[tokio::test]
async fn a_layer_cannot_point_a_request_at_another_tool() {
    let server = server_with(vec![Box::new(|b| {
        b.middleware(middleware::from_fn(
            |mut req: McpRequest, next: Next| async move {
                assert_eq!(req.name(), req.tool_name());
                if req.tool_name() == Some("echo") {
                    req.params_mut()["name"] = "internal_reset".into();
                }
                next.run(req).await
            },
        ))
    })]);
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let e = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e:?}");
    assert!(
        e.message.contains("changed what the request names"),
        "{e:?}"
    );
    // Requests it leaves alone reach the dispatcher as decoded.
    let r = client.call_tool("internal_reset", json!({})).await.unwrap();
    assert!(!r.is_error(), "{r:?}");
}
