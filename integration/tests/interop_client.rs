//! `mcp_runtime::client` against servers written with the official SDKs
//! (`tests/interop/py_server.py`: Python `mcp` 2.3.0 `MCPServer`; `tests/interop/ts_server.mjs`:
//! TypeScript `@modelcontextprotocol/sdk` 1.32.2 `McpServer`), over stdio, Streamable HTTP and
//! the deprecated HTTP+SSE, in every era each SDK serves. Both servers have the same tools
//! (`add`, `count` with progress, `greet` that elicits a form, `fail`), a resource
//! (`config://app`), a template (`greeting://{name}`), a prompt (`review`) and completions.

mod support;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::{
    Client, ClientBuilder, ClientError, CompletionRef, ElicitResult, ProtocolChoice, Stderr,
};
use mcp_runtime::protocol::{Content, ResourceContents};
use serde_json::{Map, Value, json};
use support::interop::{ROOT, install_clients, python};

const SESSION: ProtocolChoice = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sdk {
    Python,
    TypeScript,
}

impl Sdk {
    /// The server's program and arguments, plus `extra` (`--http PORT`, …).
    fn command(self, extra: &[String]) -> (PathBuf, Vec<String>) {
        let (program, script) = match self {
            Sdk::Python => (python(), "tests/interop/py_server.py"),
            Sdk::TypeScript => (PathBuf::from("node"), "tests/interop/ts_server.mjs"),
        };
        let mut args = vec![Path::new(ROOT).join(script).display().to_string()];
        args.extend(extra.iter().cloned());
        (program, args)
    }

    fn name(self) -> &'static str {
        match self {
            Sdk::Python => "py-interop",
            Sdk::TypeScript => "ts-interop",
        }
    }
}

/// A client that fills every form field `name` with "Ada".
fn builder(protocol: ProtocolChoice) -> ClientBuilder {
    Client::builder()
        .info("interop-client-test", "1.0.0")
        .protocol(protocol)
        .request_timeout(Duration::from_secs(10))
        .on_elicitation(|req| async move {
            let mut content = Map::new();
            if let Some(props) = req
                .requested_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
            {
                for name in props.keys() {
                    content.insert(name.clone(), json!("Ada"));
                }
            }
            Ok(ElicitResult::accept(content))
        })
}

async fn spawn(sdk: Sdk, protocol: ProtocolChoice) -> Result<Client, ClientError> {
    install_clients();
    let (program, args) = sdk.command(&[]);
    let mut command = tokio::process::Command::new(program);
    command.args(args).current_dir(ROOT).env(
        "MCP_INTEROP_NODE_DIR",
        Path::new(ROOT).join(".interop/node"),
    );
    builder(protocol).stderr(Stderr::Null).spawn(command).await
}

/// An SDK server on a free loopback port, killed on drop.
struct HttpSdkServer {
    child: Child,
    port: u16,
}

impl HttpSdkServer {
    /// `mode`: `--http` or `--sse`. Waits until the port accepts connections.
    fn start(sdk: Sdk, mode: &str) -> HttpSdkServer {
        install_clients();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let (program, args) = sdk.command(&[mode.to_owned(), port.to_string()]);
        let mut child = Command::new(program)
            .args(args)
            .current_dir(ROOT)
            .env(
                "MCP_INTEROP_NODE_DIR",
                Path::new(ROOT).join(".interop/node"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting the SDK server");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{sdk:?} {mode} server exited with {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{sdk:?} {mode} server not listening on {port} after 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpSdkServer { child, port }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for HttpSdkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Everything the servers offer, through `client`, which was connected at `at`.
async fn exercise(sdk: Sdk, client: &Client, at: &str) {
    assert_eq!(
        client.server_info().map(|i| i.name).as_deref(),
        Some(sdk.name()),
        "{at}"
    );
    client
        .ping()
        .await
        .unwrap_or_else(|e| panic!("{at}: ping: {e}"));

    // Tools and their schemas.
    let tools = client.list_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["add", "count", "fail", "greet"], "{at}");
    let add = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(add.input_schema["type"], "object", "{at}");
    for arg in ["a", "b"] {
        assert_eq!(
            add.input_schema["properties"][arg]["type"], "integer",
            "{at}: {add:?}"
        );
    }
    let mut required: Vec<&str> = add.input_schema["required"]
        .as_array()
        .unwrap_or_else(|| panic!("{at}: add has no `required`: {add:?}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    required.sort();
    assert_eq!(required, ["a", "b"], "{at}");
    assert!(add.output_schema.is_some(), "{at}: add has no outputSchema");

    // Structured output.
    let sum: i64 = client
        .call_tool_as("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap_or_else(|e| panic!("{at}: add: {e}"));
    assert_eq!(sum, 42, "{at}");

    // Progress.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool_with_progress("count", json!({"steps": 3}), move |p| {
            sink.lock().unwrap().push((p.progress, p.total, p.message));
        })
        .await
        .unwrap_or_else(|e| panic!("{at}: count: {e}"));
    assert_eq!(text(&result.content), "counted 3", "{at}");
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<_> = (1..=3)
        .map(|i| (f64::from(i), Some(3.0), Some(format!("step {i}"))))
        .collect();
    assert_eq!(seen, expected, "{at}: progress");

    // Elicitation: the handler's answer comes back in the result.
    let result = client
        .call_tool("greet", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: greet: {e}"));
    assert!(!result.is_error(), "{at}: {result:?}");
    assert_eq!(text(&result.content), "Hello, Ada!", "{at}");

    // A failing tool is a result with isError, not a protocol error.
    let result = client
        .call_tool("fail", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: fail: {e}"));
    assert!(result.is_error(), "{at}: {result:?}");
    assert!(
        text(&result.content).contains("this tool always fails"),
        "{at}: {result:?}"
    );

    // Resources and templates.
    let resources = client.list_resources().await.unwrap();
    assert!(
        resources.iter().any(|r| r.uri == "config://app"),
        "{at}: {resources:?}"
    );
    let templates = client.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "greeting://{name}"),
        "{at}: {templates:?}"
    );
    for (uri, want) in [
        ("config://app", "debug=true"),
        ("greeting://Bob", "Hello, Bob!"),
    ] {
        let contents = client
            .read_resource(uri)
            .await
            .unwrap_or_else(|e| panic!("{at}: read {uri}: {e}"));
        match contents.as_slice() {
            [ResourceContents::Text { uri: got, text, .. }] => {
                assert_eq!((got.as_str(), text.as_str()), (uri, want), "{at}")
            }
            other => panic!("{at}: {uri}: {other:?}"),
        }
    }

    // Prompts.
    let prompts = client.list_prompts().await.unwrap();
    let review = prompts.iter().find(|p| p.name == "review");
    assert!(review.is_some(), "{at}: {prompts:?}");
    let prompt = client
        .get_prompt("review", json!({"code": "fn main() {}"}))
        .await
        .unwrap_or_else(|e| panic!("{at}: review: {e}"));
    assert_eq!(prompt.messages.len(), 1, "{at}: {prompt:?}");
    assert_eq!(
        text(std::slice::from_ref(&prompt.messages[0].content)),
        "Please review this code:\n\nfn main() {}",
        "{at}"
    );

    // Completions, of a prompt argument and of a template variable.
    let done = client
        .complete(CompletionRef::Prompt("review"), "code", "r", Map::new())
        .await
        .unwrap_or_else(|e| panic!("{at}: complete prompt: {e}"));
    assert_eq!(done.values, ["rust", "ruby"], "{at}");
    let done = client
        .complete(
            CompletionRef::Resource("greeting://{name}"),
            "name",
            "a",
            Map::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: complete template: {e}"));
    assert_eq!(done.values, ["ada", "alan"], "{at}");
}

fn expected_version(protocol: ProtocolChoice, auto: ProtocolVersion) -> ProtocolVersion {
    match protocol {
        ProtocolChoice::Session(v) => v,
        ProtocolChoice::Stateless => ProtocolVersion::V2026_07_28,
        _ => auto,
    }
}

async fn stdio_case(sdk: Sdk, protocol: ProtocolChoice, auto: ProtocolVersion) {
    let at = format!("{sdk:?} stdio {protocol:?}");
    let client = spawn(sdk, protocol)
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    assert_eq!(
        client.protocol_version(),
        expected_version(protocol, auto),
        "{at}"
    );
    exercise(sdk, &client, &at).await;
    client.close().await;
}

async fn http_case(
    sdk: Sdk,
    server: &HttpSdkServer,
    protocol: ProtocolChoice,
    auto: ProtocolVersion,
) {
    let at = format!("{sdk:?} http {protocol:?}");
    let client = builder(protocol)
        .connect(&server.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    assert_eq!(
        client.protocol_version(),
        expected_version(protocol, auto),
        "{at}"
    );
    if client.protocol_version() != ProtocolVersion::V2026_07_28 {
        assert!(client.session_id().is_some(), "{at}: no Mcp-Session-Id");
    }
    exercise(sdk, &client, &at).await;
    client.close().await;
}

async fn sse_case(sdk: Sdk) {
    let server = HttpSdkServer::start(sdk, "--sse");
    let at = format!("{sdk:?} legacy HTTP+SSE");
    let client = builder(ProtocolChoice::Auto)
        .connect_sse(&server.url("/sse"))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    // HTTP+SSE is a session-era transport: `initialize`, at the newest version both know.
    assert_eq!(
        client.protocol_version(),
        ProtocolVersion::V2025_11_25,
        "{at}"
    );
    exercise(sdk, &client, &at).await;
    client.close().await;
}

/// Forcing 2026-07-28 against a server that only has sessions fails, soon and with a reason.
async fn stateless_refused(
    client: impl std::future::Future<Output = Result<Client, ClientError>>,
    at: &str,
) {
    match tokio::time::timeout(Duration::from_secs(15), client).await {
        Err(_) => panic!("{at}: ProtocolChoice::Stateless hung against a session-only server"),
        Ok(Ok(c)) => panic!("{at}: connected in {:?}", c.protocol_version()),
        // The server's own JSON-RPC error (TS stdio: -32601 for `server/discover`; TS HTTP:
        // -32000 "Server not initialized"), not a timeout or a transport failure.
        Ok(Err(e)) => {
            assert!(matches!(e, ClientError::Rpc(_)), "{at}: {e:?}");
            eprintln!("{at}: refused as expected: {e}");
        }
    }
}

// ---------- Python SDK ----------

#[tokio::test(flavor = "multi_thread")]
async fn python_stdio() {
    for protocol in [ProtocolChoice::Auto, SESSION, ProtocolChoice::Stateless] {
        stdio_case(Sdk::Python, protocol, PY_STDIO_AUTO).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn python_http() {
    let server = HttpSdkServer::start(Sdk::Python, "--http");
    for protocol in [ProtocolChoice::Auto, SESSION, ProtocolChoice::Stateless] {
        http_case(Sdk::Python, &server, protocol, ProtocolVersion::V2026_07_28).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn python_legacy_sse() {
    sse_case(Sdk::Python).await;
}

// ---------- TypeScript SDK (session era only) ----------

#[tokio::test(flavor = "multi_thread")]
async fn typescript_stdio() {
    for protocol in [ProtocolChoice::Auto, SESSION] {
        stdio_case(Sdk::TypeScript, protocol, ProtocolVersion::V2025_11_25).await;
    }
    stateless_refused(
        spawn(Sdk::TypeScript, ProtocolChoice::Stateless),
        "TypeScript stdio Stateless",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_http() {
    let server = HttpSdkServer::start(Sdk::TypeScript, "--http");
    for protocol in [ProtocolChoice::Auto, SESSION] {
        http_case(
            Sdk::TypeScript,
            &server,
            protocol,
            ProtocolVersion::V2025_11_25,
        )
        .await;
    }
    stateless_refused(
        builder(ProtocolChoice::Stateless).connect(&server.url("/mcp")),
        "TypeScript http Stateless",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_legacy_sse() {
    sse_case(Sdk::TypeScript).await;
}

// ---------- Both SDKs, slow to start ----------

/// Issue 28 §3 against the SDKs' own servers: each started 5 s late (as under `npx` or `uvx`
/// on a first run), past the 2 s probe timeout, is reached by `ProtocolChoice::Auto` in the
/// era it gets when it starts at once (the Python SDK's server refused the `initialize` sent
/// after the probe it had taken up, failing the connection). Both start at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_slow_to_start_is_reached_in_the_same_era() {
    install_clients();
    let runs = [
        (Sdk::Python, PY_STDIO_AUTO),
        (Sdk::TypeScript, ProtocolVersion::V2025_11_25),
    ]
    .map(|(sdk, version)| {
        tokio::spawn(async move {
            let at = format!("{sdk:?} stdio Auto, started 5 s late");
            let (program, args) = sdk.command(&[]);
            let mut command = tokio::process::Command::new("sh");
            command
                .args(["-c", r#"sleep 5; exec "$@""#, "sh"])
                .arg(program)
                .args(args)
                .current_dir(ROOT)
                .env(
                    "MCP_INTEROP_NODE_DIR",
                    Path::new(ROOT).join(".interop/node"),
                );
            let client = builder(ProtocolChoice::Auto)
                .stderr(Stderr::Null)
                .spawn(command)
                .await
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(client.protocol_version(), version, "{at}");
            exercise(sdk, &client, &at).await;
            client.close().await;
        })
    });
    for run in runs {
        run.await.expect("the run does not panic");
    }
}

/// What `ProtocolChoice::Auto` settles on with the Python SDK over stdio.
const PY_STDIO_AUTO: ProtocolVersion = ProtocolVersion::V2026_07_28;
