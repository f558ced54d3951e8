//! The MCP endpoint mounted in an existing app (issue #14, embedding): `McpService` nested in
//! an axum router under `/api`, next to an app route and behind an app middleware (which tags
//! every answer, turns away requests it is told to, and hands the peer address to the service),
//! served by axum's own `serve`, and shut down by the app.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, McpService};
use serde_json::json;
use support::http::{Endpoint, Req, initialize_request, notification, rpc, stateless_meta};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

const APP: &str = "https://app.example.com";

/// The app's own middleware: `x-block` gets 401 before anything else runs; every other answer
/// carries `x-app: seen`; the connection's peer address goes to the MCP service the documented
/// way (a `SocketAddr` in the request's extensions).
async fn app_middleware(mut req: Request, next: Next) -> Response {
    if req.headers().contains_key("x-block") {
        return (axum::http::StatusCode::UNAUTHORIZED, "blocked by the app").into_response();
    }
    if let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        req.extensions_mut().insert(peer);
    }
    let mut res = next.run(req).await;
    res.headers_mut()
        .insert("x-app", axum::http::HeaderValue::from_static("seen"));
    res
}

struct App {
    endpoint: Endpoint,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<()>,
    mcp: McpService,
}

/// The app on a free port, on a runtime of its own (the test talks to it with blocking I/O).
fn start() -> App {
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let server = mcp_runtime::Server::builder()
                .name("embedded")
                .version("1")
                .build()
                .unwrap();
            let mcp = McpService::new(
                server,
                HttpConfig::default()
                    .mount_prefix("/api")
                    .allowed_origins([APP]),
            );
            let app = axum::Router::new()
                .route("/health", get(|| async { "ok" }))
                .nest_service("/api", mcp.clone())
                .layer(middleware::from_fn(app_middleware));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
            tx.send((listener.local_addr().unwrap().port(), stop_tx, mcp.clone()))
                .unwrap();
            // The app drives shutdown: its signal stops the MCP endpoint too, whose SSE streams
            // would otherwise keep axum's drain waiting.
            let shutdown = {
                let mcp = mcp.clone();
                async move {
                    let _ = stop_rx.await;
                    mcp.shutdown().await;
                }
            };
            axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(shutdown)
            .await
            .unwrap();
            let _ = done_tx.send(());
        });
    });
    let (port, stop, mcp) = rx.recv().unwrap();
    App {
        endpoint: Endpoint { port },
        stop: Some(stop),
        done,
        mcp,
    }
}

fn post(app: &App, body: &serde_json::Value, headers: &[(&str, &str)]) -> support::http::Response {
    app.endpoint
        .send(&Req::post("/api/mcp").headers(headers).json(body))
}

#[test]
fn the_mounted_endpoint_serves_both_eras_next_to_the_apps_routes() {
    let app = start();
    // The session era: initialize, initialized, tools/call, under the app's prefix.
    let r = post(&app, &initialize_request("2025-11-25"), &[]);
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(
        r.header("x-app"),
        Some("seen"),
        "the middleware did not run: {r}"
    );
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = post(
        &app,
        &notification("notifications/initialized"),
        &in_session,
    );
    assert_eq!(r.status(), 202, "{r}");
    let call = rpc(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let r = post(&app, &call, &in_session);
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.json()["result"]["structuredContent"]["result"], 5, "{r}");

    // The 2026-07-28 era on the same mount.
    let mut params = json!({"name": "add", "arguments": {"a": 40, "b": 2}});
    params["_meta"] = stateless_meta();
    let r = post(
        &app,
        &rpc(2, "tools/call", params),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "add"),
        ],
    );
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.json()["result"]["structuredContent"]["result"], 42, "{r}");

    // The app's own route, and the app's middleware in front of the endpoint.
    let r = app.endpoint.send(&Req::get("/health"));
    assert_eq!((r.status(), r.text().as_str()), (200, "ok"), "{r}");
    let r = app.endpoint.send(
        &Req::post("/api/mcp")
            .header("x-block", "1")
            .json(&initialize_request("2025-11-25")),
    );
    assert_eq!(r.status(), 401, "{r}");
    assert_eq!(r.text(), "blocked by the app");

    // The guards, CORS and the router's 404 are the endpoint's as ever.
    let r = post(
        &app,
        &initialize_request("2025-11-25"),
        &[("Origin", "https://evil.example.com")],
    );
    assert_eq!(r.status(), 403, "{r}");
    let r = app.endpoint.send(
        &Req::new("OPTIONS", "/api/mcp")
            .header("Origin", APP)
            .header("Access-Control-Request-Method", "POST"),
    );
    assert_eq!(r.status(), 204, "{r}");
    assert_eq!(r.header("access-control-allow-origin"), Some(APP), "{r}");
    let r = app.endpoint.send(
        &Req::post("/api/mcp")
            .header("Host", "evil.example.com")
            .json(&initialize_request("2025-11-25")),
    );
    assert_eq!(
        r.status(),
        403,
        "a mounted endpoint keeps the Host check: {r}"
    );
    let r = app
        .endpoint
        .send(&Req::post("/mcp").json(&initialize_request("2025-11-25")));
    assert_eq!(r.status(), 404, "only the mount serves MCP: {r}");
}

#[test]
fn http_sse_under_the_prefix_announces_the_prefixed_endpoint() {
    let app = start();
    let mut stream = app
        .endpoint
        .open_stream(&Req::get("/api/sse").header("Accept", "text/event-stream"));
    assert_eq!(stream.head.status, 200, "{}", stream.head);
    let first = stream.next_event(Duration::from_secs(5)).unwrap();
    assert_eq!(
        first.event.as_deref(),
        Some("endpoint"),
        "{}",
        stream.seen()
    );
    assert!(
        first.data.starts_with("/api/messages?sessionId="),
        "{}",
        first.data
    );
    // The client posts where it was told; the answer comes on the stream.
    let r = app
        .endpoint
        .send(&Req::post(&first.data).json(&initialize_request("2024-11-05")));
    assert_eq!(r.status(), 202, "{r}");
    let answer = stream.next_event(Duration::from_secs(5)).unwrap();
    assert_eq!(
        answer.json()["result"]["protocolVersion"],
        "2024-11-05",
        "{}",
        stream.seen()
    );
}

#[test]
fn the_app_shuts_the_endpoint_down_and_its_streams_end() {
    let mut app = start();
    let session = {
        let r = post(&app, &initialize_request("2025-11-25"), &[]);
        assert_eq!(r.status(), 200, "{r}");
        r.header("mcp-session-id").unwrap().to_owned()
    };
    let mut stream = app.endpoint.open_stream(
        &Req::get("/api/mcp")
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", "2025-11-25"),
    );
    assert_eq!(stream.head.status, 200, "{}", stream.head);
    assert!(!app.mcp.is_shut_down());

    app.stop.take().unwrap().send(()).unwrap();
    assert!(
        stream.closes_within(Duration::from_secs(5)),
        "the SSE stream outlived the shutdown: {}",
        stream.seen()
    );
    app.done
        .recv_timeout(Duration::from_secs(5))
        .expect("axum's graceful shutdown finished");
    assert!(app.mcp.is_shut_down());

    // The service itself, called directly after the shutdown: 503, not a hang or a panic.
    let mcp = app.mcp.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let response = runtime.block_on(async move {
        let req = axum::http::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .body(axum::body::Body::from("{}"))
            .unwrap();
        hyper::service::Service::call(&mcp, req).await.unwrap()
    });
    assert_eq!(response.status(), 503);
}
