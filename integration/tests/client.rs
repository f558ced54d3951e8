//! `mcp_runtime::client` against this project's own servers (the conformance fixture and the
//! quickstart), spawned over stdio and started over HTTP, in both eras.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::{
    Client, ClientBuilder, ClientError, CompletionRef, ElicitResult, ProtocolChoice, Root,
    SampledMessage, Stderr,
};
use mcp_runtime::protocol::{ResourceContents, Role};
use serde_json::{Map, Value, json};
use support::http::HttpServer;

const SESSION: ProtocolChoice = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);
const ERAS: [ProtocolChoice; 3] = [SESSION, ProtocolChoice::Stateless, ProtocolChoice::Auto];

/// A client that answers every ask: forms with a fixed account (or `confirm: true`), sampling
/// with a fixed message, roots with one root.
fn builder(protocol: ProtocolChoice) -> ClientBuilder {
    Client::builder()
        .info("client-test", "1.0.0")
        .protocol(protocol)
        .request_timeout(Duration::from_secs(20))
        .on_elicitation(|req| async move {
            let props = req
                .requested_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut content = Map::new();
            for (name, prop) in props {
                let value = match (name.as_str(), prop.get("type").and_then(Value::as_str)) {
                    ("username", _) => json!("ada"),
                    ("email", _) => json!("ada@example.com"),
                    ("name", _) => json!("Ada"),
                    ("color", _) => json!("green"),
                    (_, Some("boolean")) => json!(true),
                    _ => json!("x"),
                };
                content.insert(name, value);
            }
            Ok(ElicitResult::accept(content))
        })
        .on_sampling(|_params| async move {
            Ok(SampledMessage {
                role: Role::Assistant,
                content: json!({"type": "text", "text": "Paris"}),
                model: "test-model".into(),
                stop_reason: None,
            })
        })
        .roots(vec![Root {
            uri: "file:///work".into(),
            name: Some("work".into()),
        }])
}

async fn spawn(name: &str, protocol: ProtocolChoice) -> Client {
    builder(protocol)
        .stderr(Stderr::Null)
        .spawn(tokio::process::Command::new(support::example(name)))
        .await
        .unwrap_or_else(|e| panic!("spawning {name} with {protocol:?}: {e}"))
}

async fn connect(server: &HttpServer, protocol: ProtocolChoice) -> Client {
    builder(protocol)
        .connect(&server.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("connecting with {protocol:?}: {e}"))
}

/// One client per transport (stdio, HTTP) for `protocol`; the HTTP server lives as long as
/// the returned value.
async fn both_transports(protocol: ProtocolChoice) -> (HttpServer, Vec<(&'static str, Client)>) {
    let server = HttpServer::start("conformance");
    let clients = vec![
        ("stdio", spawn("conformance", protocol).await),
        ("http", connect(&server, protocol).await),
    ];
    (server, clients)
}

fn text(result: &mcp_runtime::CallToolResult) -> String {
    result.text()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_era_on_both_transports_lists_and_calls_tools() {
    for protocol in ERAS {
        let (_server, clients) = both_transports(protocol).await;
        for (transport, client) in clients {
            let at = format!("{transport} {protocol:?}");
            let expected = match protocol {
                ProtocolChoice::Session(v) => v,
                _ => ProtocolVersion::V2026_07_28,
            };
            assert_eq!(client.protocol_version(), expected, "{at}");
            let info = client
                .server_info()
                .unwrap_or_else(|| panic!("{at}: no serverInfo"));
            // run!() names it after its package (examples/conformance).
            assert_eq!(info.name, "example-conformance", "{at}");
            let tools = client.list_tools().await.unwrap();
            assert!(
                tools.iter().any(|t| t.name == "test_simple_text"),
                "{at}: {tools:?}"
            );
            // Listed in source order, every page followed (the fixture has more than a page
            // worth of tools only if pages are small; at least the order must hold).
            let result = client
                .call_tool("test_simple_text", json!({}))
                .await
                .unwrap();
            assert_eq!(
                text(&result),
                "This is a simple text response for testing.",
                "{at}"
            );
            client
                .ping()
                .await
                .unwrap_or_else(|e| panic!("{at}: ping: {e}"));
            client.close().await;
            let after = client.call_tool("test_simple_text", json!({})).await;
            assert!(matches!(after, Err(ClientError::Closed)), "{at}: {after:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_handler_answers_server_requests_and_input_rounds() {
    for protocol in [SESSION, ProtocolChoice::Stateless] {
        let (_server, clients) = both_transports(protocol).await;
        for (transport, client) in clients {
            let at = format!("{transport} {protocol:?}");
            // Session era: `elicitation/create` requests; 2026-07-28: InputRequiredResult
            // rounds, retried with inputResponses and the requestState echoed.
            let r = client
                .call_tool("test_elicitation", json!({"message": "Who are you?"}))
                .await
                .unwrap();
            assert!(
                text(&r).contains(
                    r#"action=accept, content={"username":"ada","email":"ada@example.com"}"#
                ),
                "{at}: {r:?}"
            );
            let r = client
                .call_tool("test_input_required_result_multi_round", json!({}))
                .await
                .unwrap();
            assert_eq!(text(&r), "Done: name=Ada, color=green", "{at}");
            let r = client
                .call_tool("test_sampling", json!({"prompt": "Capital of France?"}))
                .await
                .unwrap();
            assert_eq!(text(&r), "LLM response: Paris", "{at}");
            let r = client
                .call_tool("test_input_required_result_list_roots", json!({}))
                .await
                .unwrap();
            assert_eq!(text(&r), "Found 1 root(s)", "{at}");
            client.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_and_log_messages_reach_the_caller() {
    for protocol in [SESSION, ProtocolChoice::Stateless] {
        let (_server, clients) = both_transports(protocol).await;
        for (transport, client) in clients {
            let at = format!("{transport} {protocol:?}");
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sink = seen.clone();
            let r = client
                .call_tool_with_progress("test_tool_with_progress", json!({}), move |p| {
                    sink.lock().unwrap().push((p.progress, p.total))
                })
                .await
                .unwrap();
            assert_eq!(text(&r), "Progress test completed", "{at}");
            assert_eq!(
                *seen.lock().unwrap(),
                vec![
                    (0.0, Some(100.0)),
                    (50.0, Some(100.0)),
                    (100.0, Some(100.0))
                ],
                "{at}"
            );

            let mut notes = client.notifications();
            client
                .set_logging_level(mcp_runtime::protocol::LogLevel::Info)
                .await
                .unwrap();
            client
                .call_tool("test_tool_with_logging", json!({}))
                .await
                .unwrap();
            let mut logged = Vec::new();
            while let Ok(n) = notes.try_recv() {
                if n.method == "notifications/message" {
                    logged.push(n.params["data"].clone());
                }
            }
            assert_eq!(
                logged,
                vec![
                    json!("Tool execution started"),
                    json!("Tool processing data"),
                    json!("Tool execution completed")
                ],
                "{at}"
            );
            client.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn typed_calls_read_structured_content_and_report_tool_errors() {
    for protocol in [SESSION, ProtocolChoice::Stateless] {
        let client = spawn("quickstart", protocol).await;
        let sum: i64 = client
            .call_tool_as("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(sum, 42);
        #[derive(serde::Deserialize)]
        struct Measurement {
            distance: f64,
        }
        let m: Measurement = client
            .call_tool_as(
                "measure",
                json!({"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}}),
            )
            .await
            .unwrap();
        assert_eq!(m.distance, 5.0);
        let greeting: String = client
            .call_tool_as("greet", json!({"name": "Ada", "excitement": 2}))
            .await
            .unwrap();
        assert_eq!(greeting, "Hi Ada!!");
        // A tool error: a result from call_tool, an error from call_tool_as.
        let failed = client
            .call_tool("divide", json!({"dividend": 1, "divisor": 0}))
            .await
            .unwrap();
        assert!(failed.is_error());
        let err = client
            .call_tool_as::<f64>("divide", json!({"dividend": 1, "divisor": 0}))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ClientError::Tool(r) if text(r) == "cannot divide by zero"),
            "{err}"
        );
        // A protocol error: the server's JSON-RPC error.
        let err = client
            .call_tool("no_such_tool", json!({}))
            .await
            .unwrap_err();
        assert_eq!(err.rpc().map(|e| e.code.0), Some(-32602), "{err}");
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_prompts_and_completion() {
    for protocol in [SESSION, ProtocolChoice::Stateless] {
        let (_server, clients) = both_transports(protocol).await;
        for (transport, client) in clients {
            let at = format!("{transport} {protocol:?}");
            let resources = client.list_resources().await.unwrap();
            assert!(
                resources.iter().any(|r| r.uri == "test://static-text"),
                "{at}"
            );
            let contents = client.read_resource("test://static-text").await.unwrap();
            assert_eq!(
                contents,
                vec![
                    ResourceContents::text(
                        "test://static-text",
                        "This is the content of the static text resource."
                    )
                    .with_mime_type("text/plain")
                ],
                "{at}"
            );
            let templates = client.list_resource_templates().await.unwrap();
            assert!(
                templates
                    .iter()
                    .any(|t| t.uri_template == "test://template/{id}/data"),
                "{at}"
            );
            let prompts = client.list_prompts().await.unwrap();
            let with_args = prompts
                .iter()
                .find(|p| p.name == "test_prompt_with_arguments")
                .unwrap_or_else(|| panic!("{at}: {prompts:?}"));
            assert!(
                with_args
                    .arguments
                    .iter()
                    .any(|a| a.name == "arg1" && a.required),
                "{at}"
            );
            let got = client
                .get_prompt("test_simple_prompt", json!({}))
                .await
                .unwrap();
            assert_eq!(got.messages.len(), 1, "{at}");
            let done = client
                .complete(
                    CompletionRef::Prompt("test_prompt_with_arguments"),
                    "arg1",
                    "test",
                    Map::new(),
                )
                .await
                .unwrap();
            assert_eq!(done.values, vec!["testValue1", "testValue2"], "{at}");
            let missing = client
                .read_resource("test://nothing-here")
                .await
                .unwrap_err();
            assert!(missing.rpc().is_some(), "{at}: {missing}");
            client.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn http_headers_sessions_and_resumed_streams() {
    let mut server = HttpServer::start("conformance");
    // 2026-07-28: the tool mirrors `value` into `Mcp-Param-Value`; the server refuses a call
    // without it. A call before any listing is retried once with the header.
    let stateless = connect(&server, ProtocolChoice::Stateless).await;
    let r = stateless
        .call_tool("test_custom_header", json!({"value": "Grüße"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Received value: Grüße");
    stateless.close().await;

    // Session era: a POST answer whose stream the server closes after its priming event is
    // resumed with GET and Last-Event-ID; close() DELETEs the session.
    let session = connect(&server, SESSION).await;
    let r = session
        .call_tool("test_reconnection", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Reconnection test completed successfully");
    session.close().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.log();
        if log.contains(r#"method=DELETE path="/mcp" status=200"#) {
            assert!(
                log.contains(r#"method=GET path="/mcp" status=200"#),
                "{log}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no DELETE in the log:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_streams_list_changes() {
    let server = HttpServer::start("conformance");
    let client = connect(&server, ProtocolChoice::Stateless).await;
    let mut listen = client
        .listen(json!({"toolsListChanged": true}))
        .await
        .unwrap();
    let ack = listen.next().await.unwrap();
    assert_eq!(ack.method, "notifications/subscriptions/acknowledged");
    client
        .call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    let change = tokio::time::timeout(Duration::from_secs(10), listen.next())
        .await
        .expect("a change within 10 s")
        .unwrap();
    assert_eq!(change.method, "notifications/tools/list_changed");
    drop(listen);
    // The session era has no listen.
    let session = connect(&server, SESSION).await;
    assert!(matches!(
        session.listen(json!({})).await,
        Err(ClientError::Protocol(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn timeouts_cancel_and_the_connection_lives_on() {
    for protocol in [SESSION, ProtocolChoice::Stateless] {
        // Long enough for the `add` after the timeout on a loaded machine (the same client's
        // timer bounds it), far shorter than the sleep.
        let client = builder(protocol)
            .request_timeout(Duration::from_secs(2))
            .stderr(Stderr::Null)
            .spawn(tokio::process::Command::new(support::example("quickstart")))
            .await
            .unwrap();
        let err = client
            .call_tool("sleep", json!({"ms": 10_000}))
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout(_)), "{err}");
        let sum: i64 = client
            .call_tool_as("add", json!({"a": 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(sum, 2);
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_dies_is_a_clear_error() {
    // Exits before answering: connecting fails, quoting its stderr.
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", "echo 'fatal: no database' >&2; exit 3"]);
    let err = Client::builder()
        .stderr(Stderr::Capture)
        .spawn(command)
        .await
        .err()
        .expect("a server that exits cannot be connected to");
    let message = err.to_string();
    assert!(message.contains("exited"), "{message}");
    assert!(message.contains("fatal: no database"), "{message}");

    // Not a command at all.
    let err = Client::builder()
        .spawn(tokio::process::Command::new("/nonexistent/server"))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, ClientError::Transport(_)), "{err}");

    // Nothing listening.
    let err = Client::builder()
        .connect("http://127.0.0.1:1/mcp")
        .await
        .err()
        .unwrap();
    assert!(matches!(err, ClientError::Transport(_)), "{err}");
    // Not a URL this client speaks (https:// is tests/client_tls.rs's).
    let err = Client::builder()
        .connect("ftp://127.0.0.1:1/mcp")
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("not an http:// or https:// URL"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn old_http_sse_servers_are_reached_through_the_fallback() {
    let server = HttpServer::start("conformance");
    // `/sse` refuses POST (405): connect() falls back to HTTP+SSE at the same URL.
    for client in [
        connect_url(&server.url("/sse"), ProtocolChoice::Auto).await,
        builder(SESSION)
            .connect_sse(&server.url("/sse"))
            .await
            .unwrap(),
    ] {
        assert_eq!(client.era(), mcp_runtime::protocol::ProtocolEra::Session);
        let r = client
            .call_tool("test_simple_text", json!({}))
            .await
            .unwrap();
        assert_eq!(text(&r), "This is a simple text response for testing.");
        // Server requests come on the one stream, answers go to the endpoint.
        let r = client
            .call_tool("test_elicitation", json!({"message": "Who?"}))
            .await
            .unwrap();
        assert!(text(&r).contains("action=accept"), "{r:?}");
        client.close().await;
    }
    // A 2026-07-28-only client does not fall back.
    let err = builder(ProtocolChoice::Stateless)
        .connect(&server.url("/sse"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, ClientError::Status { status: 405, .. }),
        "{err}"
    );
}

async fn connect_url(url: &str, protocol: ProtocolChoice) -> Client {
    builder(protocol)
        .connect(url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url} with {protocol:?}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forgotten_session_is_an_error_or_a_new_session() {
    use support::http::Req;
    let server = HttpServer::start("conformance");
    let end = |session: &str| {
        let r = server.send(&Req::new("DELETE", "/mcp").header("Mcp-Session-Id", session));
        assert_eq!(r.status(), 200, "{r}");
    };
    let plain = connect(&server, SESSION).await;
    let first = plain.session_id().expect("a session id");
    end(&first);
    let err = plain
        .call_tool("test_simple_text", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::SessionExpired), "{err}");

    let renewing = builder(SESSION)
        .renew_sessions(true)
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    let first = renewing.session_id().unwrap();
    end(&first);
    let r = renewing
        .call_tool("test_simple_text", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&r), "This is a simple text response for testing.");
    let second = renewing.session_id().unwrap();
    assert_ne!(first, second);
    renewing.close().await;
}

/// A stdio server that sleeps `delay` before it reads anything (tests/fixtures/slow_server.py
/// in `mode`: which era it speaks, and how it treats the other era's handshake).
fn slow_script(mode: &str, delay: Duration) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("python3");
    command
        .arg(std::path::Path::new(support::ROOT).join("tests/fixtures/slow_server.py"))
        .arg(mode)
        .arg(delay.as_secs_f64().to_string());
    command
}

/// This project's example `name` (it speaks both eras on one pipe, each message in its own),
/// started after `delay`: stdin waits unread in the pipe meanwhile.
fn slow_example(name: &str, delay: Duration) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command
        .args(["-c", r#"sleep "$0"; exec "$1""#])
        .arg(delay.as_secs_f64().to_string())
        .arg(support::example(name));
    command
}

/// Issue 28 §3: `ProtocolChoice::Auto` reaches the era the server speaks however long the
/// server takes to start, past the probe timeout included: a 5 s start against the default
/// 2 s probe in each era (2026-07-28 only, session only, both), and a shorter start past a
/// shorter probe for the other ways a server treats the other era's handshake, and a start
/// slower than the request timeout (it counts against the connect timeout). All start at
/// once, so the test takes about as long as the slowest.
#[tokio::test(flavor = "multi_thread")]
async fn auto_reaches_the_right_era_whatever_the_start_up_time() {
    use mcp_runtime::protocol::ProtocolEra::{Session, Stateless};
    let five = Duration::from_secs(5);
    let one = Duration::from_secs(1);
    let three = Duration::from_secs(3);
    let short_probe = Some(Duration::from_millis(200));
    let cases = vec![
        (
            "2026-07-28 only, 5 s",
            slow_script("modern", five),
            None,
            None,
            Stateless,
        ),
        (
            "session era only, 5 s",
            slow_script("session", five),
            None,
            None,
            Session,
        ),
        (
            "both eras (quickstart), 5 s",
            slow_example("quickstart", five),
            None,
            None,
            Stateless,
        ),
        (
            "2026-07-28 only, initialize an unknown method",
            slow_script("modern-strict", one),
            short_probe,
            None,
            Stateless,
        ),
        (
            "session era only, silent to server/discover",
            slow_script("session-silent", one),
            short_probe,
            None,
            Session,
        ),
        (
            "both eras, the first message deciding",
            slow_script("first", one),
            short_probe,
            None,
            Stateless,
        ),
        // The probe answered without committing, and the `initialize` beside it committing
        // the connection to the session era (the TypeScript SDK v2's serveStdio): 2026-07-28
        // is no longer served, so the session is used.
        (
            "both eras, the probe answered, the initialize beside it deciding",
            slow_script("probe", one),
            short_probe,
            None,
            Session,
        ),
        // A start-up counts against the connect timeout, not each request's.
        (
            "2026-07-28 only, slower to start than the request timeout",
            slow_script("modern", three),
            short_probe,
            Some(Duration::from_millis(1500)),
            Stateless,
        ),
        (
            "session era only, slower to start than the request timeout",
            slow_script("session", three),
            short_probe,
            Some(Duration::from_millis(1500)),
            Session,
        ),
    ];
    let mut runs = Vec::new();
    for (what, command, probe, request_timeout, era) in cases {
        runs.push(tokio::spawn(async move {
            let mut builder = builder(ProtocolChoice::Auto).stderr(Stderr::Capture);
            if let Some(probe) = probe {
                builder = builder.probe_timeout(probe);
            }
            if let Some(timeout) = request_timeout {
                builder = builder.request_timeout(timeout);
            }
            let client = match builder.spawn(command).await {
                Ok(client) => client,
                Err(e) => return Err(format!("{what}: connecting failed: {e}")),
            };
            let outcome = async {
                if client.era() != era {
                    return Err(format!(
                        "{what}: connected in {:?}, not {era:?}",
                        client.era()
                    ));
                }
                let sum: i64 = client
                    .call_tool_as("add", json!({"a": 2, "b": 3}))
                    .await
                    .map_err(|e| format!("{what}: tools/call failed: {e}"))?;
                if sum != 5 {
                    return Err(format!("{what}: add(2, 3) = {sum}"));
                }
                Ok(())
            }
            .await;
            client.close().await;
            outcome
        }));
    }
    let mut failures = Vec::new();
    for run in runs {
        if let Err(e) = run.await.expect("the run does not panic") {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
