//! `mcp_runtime::client` against servers whose protocol code nobody here wrote:
//!
//! - servers written with the official SDKs (`tests/interop/py_server.py`: Python `mcp` 2.3.0
//!   `MCPServer`; `tests/interop/ts_server.mjs`: TypeScript `@modelcontextprotocol/sdk` 1.32.2
//!   `McpServer`; `tests/interop/ts2_server.mjs`: TypeScript SDK v2, `@modelcontextprotocol/server`
//!   2.4.0), over stdio, Streamable HTTP and the deprecated HTTP+SSE, in every era each SDK
//!   serves. They have the same tools (`add`, `count` with progress, `greet` that elicits a form,
//!   `fail`), a resource (`config://app`), a template (`greeting://{name}`), a prompt (`review`)
//!   and completions. The Python and v2 servers also ask for sampling (`sample`) and roots
//!   (`roots`), which their SDKs send as `InputRequiredResult` rounds in 2026-07-28 and as
//!   server-to-client requests in the session era, like `greet`'s form. The v2 server also asks,
//!   in one call, for a form then a sampling over two rounds, sends a log message, and announces
//!   resource changes (on `subscriptions/listen` streams in 2026-07-28);
//! - the reference server `@modelcontextprotocol/server-everything` 2026.8.31 (the servers
//!   repository's test server for client builders), over stdio and Streamable HTTP: its tools
//!   (structured output, images, resource links, a failing call), resources, templates, prompts,
//!   completions, logging, progress, resource subscriptions, and the sampling, elicitation (form
//!   and URL) and roots it asks of the client, answered by our handlers.
//!
//! Every package is pinned in tests/interop/package.json and installed by
//! tests/interop/setup.sh (a no-op when installed), as for the other interop tests.

mod support;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::{
    CacheScope, Client, ClientBuilder, ClientError, CompletionRef, ElicitRequest, ElicitResult,
    Listen, ProtocolChoice, Root, SampledMessage, ServerNotification, Stderr,
};
use mcp_runtime::protocol::{Content, LogLevel, ResourceContents, Role};
use serde_json::{Map, Value, json};
use support::interop::{ROOT, install_clients, python};

const SESSION: ProtocolChoice = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sdk {
    Python,
    TypeScript,
    /// The TypeScript SDK v2 (`@modelcontextprotocol/server`).
    TypeScriptV2,
}

impl Sdk {
    /// The server's program and arguments, plus `extra` (`--http PORT`, …).
    fn command(self, extra: &[String]) -> (PathBuf, Vec<String>) {
        let (program, script) = match self {
            Sdk::Python => (python(), "tests/interop/py_server.py"),
            Sdk::TypeScript => (PathBuf::from("node"), "tests/interop/ts_server.mjs"),
            Sdk::TypeScriptV2 => (PathBuf::from("node"), "tests/interop/ts2_server.mjs"),
        };
        let mut args = vec![Path::new(ROOT).join(script).display().to_string()];
        args.extend(extra.iter().cloned());
        (program, args)
    }

    fn name(self) -> &'static str {
        match self {
            Sdk::Python => "py-interop",
            Sdk::TypeScript => "ts-interop",
            Sdk::TypeScriptV2 => "ts2-interop",
        }
    }
}

/// A client that fills every form field `name` with "Ada", answers sampling with
/// [`sampled`] and declares [`project_root`].
fn builder(protocol: ProtocolChoice) -> ClientBuilder {
    Client::builder()
        .info("interop-client-test", "1.0.0")
        .protocol(protocol)
        .request_timeout(Duration::from_secs(10))
        .on_sampling(|params| async move { Ok(sampled(&params)) })
        .roots(vec![project_root()])
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
    let expected: &[&str] = match sdk {
        Sdk::Python => &["add", "count", "fail", "greet", "roots", "sample"],
        Sdk::TypeScript => &["add", "count", "fail", "greet"],
        Sdk::TypeScriptV2 => &[
            "add", "count", "fail", "greet", "log", "plan", "roots", "sample", "touch",
        ],
    };
    assert_eq!(names, expected, "{at}");
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

    // Sampling and roots, asked of the client as elicitation is (the TypeScript SDK v1 server
    // has no such tools).
    if sdk != Sdk::TypeScript {
        let result = client
            .call_tool("sample", json!({"topic": "rust"}))
            .await
            .unwrap_or_else(|e| panic!("{at}: sample: {e}"));
        assert_eq!(
            text(&result.content),
            format!("{SAMPLING_MODEL} wrote: sampled: Write a haiku about rust"),
            "{at}: {result:?}"
        );
        let result = client
            .call_tool("roots", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{at}: roots: {e}"));
        assert_eq!(
            text(&result.content),
            "project=file:///work/project",
            "{at}: {result:?}"
        );
    }

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

// ---------- Every SDK, slow to start ----------

/// Issue 28 §3 against the SDKs' own servers: each started 5 s late (as under `npx` or `uvx`
/// on a first run), past the 2 s probe timeout, is reached by `ProtocolChoice::Auto` in the
/// era it gets when it starts at once (the Python SDK's server refused the `initialize` sent
/// after the probe it had taken up, failing the connection). All start at once.
///
/// The TypeScript SDK v2's `serveStdio` is the exception: it answers the probe from an
/// instance it throws away if an `initialize` follows, and an `initialize` then selects the
/// session era for the whole process (as the spec lets a dual-era server do), after which
/// 2026-07-28 requests are unknown methods. Started late, it reads the probe and the
/// `initialize` sent beside it together, so it is reached in the session era, and works there
/// (the client took the probe's answer and spoke 2026-07-28 to a session-era server: every
/// request failed with -32601).
#[tokio::test(flavor = "multi_thread")]
async fn a_server_slow_to_start_is_reached_in_the_same_era() {
    install_clients();
    let runs = [
        (Sdk::Python, PY_STDIO_AUTO),
        (Sdk::TypeScript, ProtocolVersion::V2025_11_25),
        (Sdk::TypeScriptV2, ProtocolVersion::V2025_11_25),
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

// ---------- Answering what a server asks: sampling, elicitation, roots ----------

/// The model name our sampling handler answers with; the servers echo it back.
const SAMPLING_MODEL: &str = "rust-interop-model";

/// The root our client declares.
fn project_root() -> Root {
    Root {
        uri: "file:///work/project".into(),
        name: Some("project".into()),
    }
}

/// What the server sent (every notification) and asked (URL elicitations), as the handlers saw
/// it; tests wait on it for an event, never for a fixed time.
#[derive(Clone, Default)]
struct Seen {
    notes: Arc<Mutex<Vec<ServerNotification>>>,
    urls: Arc<Mutex<Vec<String>>>,
    changed: Arc<tokio::sync::Notify>,
}

impl Seen {
    /// Waits up to 20 s for the notifications to satisfy `done`.
    async fn wait_until(&self, at: &str, what: &str, done: impl Fn(&[ServerNotification]) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if done(&self.notes.lock().unwrap()) {
                return;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                panic!(
                    "{at}: no {what} within 20 s; the notifications were {:#?}",
                    self.notes.lock().unwrap()
                );
            }
        }
    }

    /// The first notification `matches` accepts, waiting up to 20 s for it.
    async fn wait_for(
        &self,
        at: &str,
        what: &str,
        matches: impl Fn(&ServerNotification) -> bool,
    ) -> ServerNotification {
        self.wait_until(at, what, |notes| notes.iter().any(&matches))
            .await;
        let notes = self.notes.lock().unwrap();
        notes.iter().find(|n| matches(n)).cloned().expect("seen")
    }
}

/// The last user message's text of a `sampling/createMessage`.
fn sampling_prompt(params: &Value) -> String {
    params["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"]["text"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// What our "model" answers: "sampled: <the prompt>", from [`SAMPLING_MODEL`].
fn sampled(params: &Value) -> SampledMessage {
    SampledMessage {
        role: Role::Assistant,
        content: json!({"type": "text", "text": format!("sampled: {}", sampling_prompt(params))}),
        model: SAMPLING_MODEL.into(),
        stop_reason: Some("endTurn".into()),
    }
}

/// A form answer: each field's default when it has one, else a value of its type (and format).
fn fill_form(req: &ElicitRequest) -> Map<String, Value> {
    let mut content = req.defaults();
    let props = req
        .requested_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        if content.contains_key(name) {
            continue;
        }
        let value = match (prop["type"].as_str(), prop["format"].as_str()) {
            (Some("string"), Some("email")) => json!("ada@example.com"),
            (Some("string"), Some("uri")) => json!("https://example.com/ada"),
            (Some("string"), Some("date")) => json!("1815-12-10"),
            (Some("string"), _) => json!("Ada"),
            (Some("boolean"), _) => json!(true),
            (Some("integer"), _) => json!(7),
            (Some("number"), _) => json!(1.5),
            _ => continue,
        };
        content.insert(name.clone(), value);
    }
    content
}

/// A client that answers sampling ("sampled: <the prompt>", from [`SAMPLING_MODEL`]), form
/// elicitation ([`fill_form`]), URL elicitation (accepted, the URL kept in `seen`) and roots
/// ([`project_root`]), keeps every notification in `seen`, and keeps lists as long as their
/// 2026-07-28 cache hints allow.
fn asking_builder(protocol: ProtocolChoice, seen: &Seen) -> ClientBuilder {
    let (urls, notes, changed) = (seen.urls.clone(), seen.notes.clone(), seen.changed.clone());
    Client::builder()
        .info("interop-client-test", "1.0.0")
        .protocol(protocol)
        .request_timeout(Duration::from_secs(20))
        .cache(true)
        .roots(vec![project_root()])
        .url_elicitation(true)
        .on_elicitation(move |req| {
            let urls = urls.clone();
            async move {
                if req.is_url() {
                    urls.lock()
                        .unwrap()
                        .push(req.url.clone().unwrap_or_default());
                    return Ok(ElicitResult::accept_url());
                }
                Ok(ElicitResult::accept(fill_form(&req)))
            }
        })
        .on_sampling(|params| async move { Ok(sampled(&params)) })
        .on_notification(move |n| {
            notes.lock().unwrap().push(n.clone());
            changed.notify_waiters();
        })
}

// ---------- TypeScript SDK v2 ----------

/// What only the v2 server has: a two-round call carrying `requestState`, and a log message,
/// through `client` (built with [`asking_builder`]).
async fn exercise_v2_asks(client: &Client, seen: &Seen, at: &str) {
    // Round 1 elicits a name, round 2 samples with it (the name carried in `requestState`).
    let result = client
        .call_tool("plan", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: plan: {e}"));
    assert!(!result.is_error(), "{at}: {result:?}");
    assert_eq!(
        text(&result.content),
        "plan for Ada: sampled: Plan a day for Ada",
        "{at}"
    );

    client
        .set_logging_level(LogLevel::Info)
        .await
        .unwrap_or_else(|e| panic!("{at}: logging level: {e}"));
    let result = client
        .call_tool("log", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: log: {e}"));
    assert_eq!(text(&result.content), "logged", "{at}");
    let log = seen
        .wait_for(at, "log message", |n| n.method == "notifications/message")
        .await;
    assert_eq!(
        (
            &log.params["level"],
            &log.params["data"],
            &log.params["logger"]
        ),
        (
            &json!("warning"),
            &json!("a warning from the v2 server"),
            &json!("ts2-interop")
        ),
        "{at}: {log:?}"
    );
}

/// A resource change, as the v2 server announces it: on a 2026-07-28 `subscriptions/listen`
/// stream that asked for that resource (and not for another), or as is in the session era.
async fn exercise_v2_changes(client: &Client, seen: &Seen, at: &str) {
    let touch = |uri: &'static str| async move {
        let result = client
            .call_tool("touch", json!({ "uri": uri }))
            .await
            .unwrap_or_else(|e| panic!("{at}: touch {uri}: {e}"));
        assert_eq!(text(&result.content), format!("touched {uri}"), "{at}");
    };
    if client.protocol_version() != ProtocolVersion::V2026_07_28 {
        touch("config://app").await;
        let updated = seen
            .wait_for(at, "resources/updated", |n| {
                n.method == "notifications/resources/updated"
            })
            .await;
        assert_eq!(updated.params["uri"], "config://app", "{at}");
        return;
    }
    let mut listen = client
        .listen(json!({"resourceSubscriptions": ["config://app"]}))
        .await
        .unwrap_or_else(|e| panic!("{at}: listen: {e}"));
    let ack = listen_next(&mut listen, at).await;
    assert_eq!(
        ack.method, "notifications/subscriptions/acknowledged",
        "{at}"
    );
    // A change to another resource is not sent on this stream; this one is.
    touch("greeting://ada").await;
    touch("config://app").await;
    let updated = listen_next(&mut listen, at).await;
    assert_eq!(
        (updated.method.as_str(), &updated.params["uri"]),
        ("notifications/resources/updated", &json!("config://app")),
        "{at}: {updated:?}"
    );
}

/// The next notification of a `subscriptions/listen` stream, within 20 s.
async fn listen_next(listen: &mut Listen, at: &str) -> ServerNotification {
    tokio::time::timeout(Duration::from_secs(20), listen.next())
        .await
        .unwrap_or_else(|_| panic!("{at}: nothing on the listen stream within 20 s"))
        .unwrap_or_else(|| panic!("{at}: the listen stream ended"))
}

async fn v2_case(client: Client, seen: &Seen, at: &str, version: ProtocolVersion) {
    assert_eq!(client.protocol_version(), version, "{at}");
    exercise(Sdk::TypeScriptV2, &client, at).await;
    // The tool list's cache hint (2026-07-28 only): `exercise` listed the tools, and the
    // client (built with `cache(true)`) keeps them for the minute the server allows.
    let listed = client
        .list_tools_listed()
        .await
        .unwrap_or_else(|e| panic!("{at}: list_tools_listed: {e}"));
    if version == ProtocolVersion::V2026_07_28 {
        let hint = listed
            .cache
            .unwrap_or_else(|| panic!("{at}: no cache hint"));
        assert_eq!(
            (hint.ttl, hint.scope),
            (Duration::from_secs(60), CacheScope::Public),
            "{at}"
        );
        assert!(listed.from_cache, "{at}: listed again within the minute");
    } else {
        assert!(listed.cache.is_none() && !listed.from_cache, "{at}");
    }
    exercise_v2_asks(&client, seen, at).await;
    exercise_v2_changes(&client, seen, at).await;
    client.close().await;
}

async fn spawn_v2(protocol: ProtocolChoice, seen: &Seen) -> Client {
    install_clients();
    let (program, args) = Sdk::TypeScriptV2.command(&[]);
    let mut command = tokio::process::Command::new(program);
    command.args(args).current_dir(ROOT).env(
        "MCP_INTEROP_NODE_DIR",
        Path::new(ROOT).join(".interop/node"),
    );
    asking_builder(protocol, seen)
        .stderr(Stderr::Null)
        .spawn(command)
        .await
        .unwrap_or_else(|e| panic!("TypeScript v2 stdio {protocol:?}: {e}"))
}

/// The v2 SDK's `serveStdio` lets the client's first message pick the era: `Auto`'s
/// `server/discover` gets 2026-07-28 (asks as `InputRequiredResult` rounds), `initialize` the
/// session era (asks as `elicitation/create`, `sampling/createMessage`, `roots/list` requests).
#[tokio::test(flavor = "multi_thread")]
async fn typescript_v2_stdio() {
    for (protocol, version) in [
        (ProtocolChoice::Auto, ProtocolVersion::V2026_07_28),
        (SESSION, ProtocolVersion::V2025_11_25),
    ] {
        let seen = Seen::default();
        let client = spawn_v2(protocol, &seen).await;
        v2_case(
            client,
            &seen,
            &format!("TypeScript v2 stdio {protocol:?}"),
            version,
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_v2_http() {
    let server = HttpSdkServer::start(Sdk::TypeScriptV2, "--http");
    let seen = Seen::default();
    let at = "TypeScript v2 http Auto";
    let client = asking_builder(ProtocolChoice::Auto, &seen)
        .connect(&server.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    assert_eq!(client.session_id(), None, "{at}");
    v2_case(client, &seen, at, ProtocolVersion::V2026_07_28).await;

    // A declined form, in an input round: the server reads the action from `inputResponses`.
    let at = "TypeScript v2 http Auto, declining";
    let client = Client::builder()
        .info("interop-client-test", "1.0.0")
        .on_elicitation(|_| async { Ok(ElicitResult::decline()) })
        .connect(&server.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    let result = client
        .call_tool("greet", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: greet: {e}"));
    assert_eq!(text(&result.content), "no name (decline)", "{at}");
    client.close().await;

    // The session era over HTTP: the v2 SDK serves it statelessly (a fresh instance per
    // request, no `Mcp-Session-Id`), so what needs no input works, and what asks the client
    // cannot: it has nowhere to send a request (the SDK says so in an isError result).
    let at = "TypeScript v2 http Session";
    let client = asking_builder(SESSION, &seen)
        .connect(&server.url("/mcp"))
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    assert_eq!(
        (client.protocol_version(), client.session_id()),
        (ProtocolVersion::V2025_11_25, None),
        "{at}"
    );
    let sum: i64 = client
        .call_tool_as("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap_or_else(|e| panic!("{at}: add: {e}"));
    assert_eq!(sum, 42, "{at}");
    let result = client
        .call_tool("greet", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: greet: {e}"));
    assert!(
        result.is_error()
            && text(&result.content)
                .contains("per-request legacy serving cannot receive server-to-client requests"),
        "{at}: {result:?}"
    );
    client.close().await;
}

// ---------- The reference server: @modelcontextprotocol/server-everything ----------

/// `node …/server-everything/dist/index.js <transport>`.
fn everything_command(transport: &str) -> (PathBuf, Vec<String>) {
    let script = Path::new(ROOT)
        .join(".interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    (
        PathBuf::from("node"),
        vec![script.display().to_string(), transport.to_owned()],
    )
}

/// server-everything's Streamable HTTP mode on a free port (it listens on `$PORT`), killed on
/// drop. Ready when it logs that it listens; a port taken meanwhile is tried again with another.
struct EverythingHttp {
    child: Child,
    port: u16,
}

impl EverythingHttp {
    fn start() -> EverythingHttp {
        install_clients();
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let (program, args) = everything_command("streamableHttp");
            let mut child = Command::new(program)
                .args(args)
                .env("PORT", port.to_string())
                .current_dir(ROOT)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starting server-everything");
            // The stderr lines until it listens (or exits), read on a thread so that a server
            // that hangs is caught by the deadline; the rest is drained and dropped.
            let (tx, rx) = std::sync::mpsc::channel();
            let stderr = child.stderr.take().expect("piped stderr");
            std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    let _ = tx.send(line);
                }
            });
            let mut log = String::new();
            let ready = loop {
                match rx.recv_timeout(Duration::from_secs(30)) {
                    Ok(line) if line.contains("listening on port") => break true,
                    Ok(line) if line.contains("already in use") => break false,
                    Ok(line) => log.push_str(&format!("{line}\n")),
                    Err(e) => panic!("server-everything did not listen on {port} ({e}):\n{log}"),
                }
            };
            if ready {
                return EverythingHttp { child, port };
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("server-everything found no free port in 5 tries")
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Weather {
    temperature: f64,
    conditions: String,
    humidity: f64,
}

/// The kind of each content block, for error messages.
fn content_kinds(content: &[Content]) -> Vec<&'static str> {
    content
        .iter()
        .map(|c| match c {
            Content::Text { .. } => "text",
            Content::Image { .. } => "image",
            Content::Audio { .. } => "audio",
            Content::ResourceLink { .. } => "resource_link",
            Content::Resource { .. } => "resource",
            _ => "other",
        })
        .collect()
}

/// Everything server-everything offers and asks, through `client` (built with
/// [`asking_builder`] into `seen`), which was connected at `at`.
async fn exercise_everything(client: &Client, seen: &Seen, at: &str) {
    assert_eq!(
        client.protocol_version(),
        ProtocolVersion::V2025_11_25,
        "{at}"
    );
    let info = client.server_info().expect("serverInfo");
    assert_eq!(info.name, "mcp-servers/everything", "{at}");
    assert!(
        client.instructions().is_some_and(|i| !i.trim().is_empty()),
        "{at}: no instructions"
    );
    assert_eq!(
        client.server_capabilities()["resources"]["subscribe"],
        true,
        "{at}"
    );
    client
        .ping()
        .await
        .unwrap_or_else(|e| panic!("{at}: ping: {e}"));

    // The roots it asked for right after `initialized`, or on the first call that needs them,
    // announced in a log message.
    let result = client
        .call_tool("get-roots-list", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: get-roots-list: {e}"));
    assert!(
        text(&result.content)
            .contains("Current MCP Roots (1 total):\n\n1. project\n   URI: file:///work/project"),
        "{at}: {result:?}"
    );
    let log = seen
        .wait_for(at, "roots log message", |n| {
            n.method == "notifications/message"
                && n.params["data"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("Roots updated"))
        })
        .await;
    assert_eq!(
        log.params["data"], "Roots updated: 1 root(s) received from client",
        "{at}"
    );
    // Told that the roots changed, it asks for them again (and says so once more).
    let roots_logs = |notes: &[ServerNotification]| {
        notes
            .iter()
            .filter(|n| n.params["data"] == "Roots updated: 1 root(s) received from client")
            .count()
    };
    let before = roots_logs(&seen.notes.lock().unwrap());
    client
        .roots_changed()
        .await
        .unwrap_or_else(|e| panic!("{at}: roots_changed: {e}"));
    seen.wait_until(at, "roots asked for again", |notes| {
        roots_logs(notes) > before
    })
    .await;

    // Tools: the ones it registers only for a client that can sample, elicit and list roots
    // are there, since this one declared all three.
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for name in [
        "echo",
        "get-sum",
        "get-structured-content",
        "get-tiny-image",
        "get-resource-links",
        "trigger-long-running-operation",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-url-elicitation",
    ] {
        assert!(names.contains(&name), "{at}: no {name} in {names:?}");
    }
    let echo = client
        .call_tool("echo", json!({"message": "hello"}))
        .await
        .unwrap_or_else(|e| panic!("{at}: echo: {e}"));
    assert_eq!(text(&echo.content), "Echo: hello", "{at}");

    // Structured output, read through its output schema's shape.
    let weather = tools
        .iter()
        .find(|t| t.name == "get-structured-content")
        .unwrap();
    assert!(weather.output_schema.is_some(), "{at}: {weather:?}");
    let got: Weather = client
        .call_tool_as("get-structured-content", json!({"location": "Chicago"}))
        .await
        .unwrap_or_else(|e| panic!("{at}: get-structured-content: {e}"));
    assert_eq!(
        got,
        Weather {
            temperature: 36.0,
            conditions: "Light rain / drizzle".into(),
            humidity: 82.0
        },
        "{at}"
    );

    // Other content kinds: an image, resource links.
    let image = client
        .call_tool("get-tiny-image", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: get-tiny-image: {e}"));
    let png = image.content.iter().find_map(|c| match c {
        Content::Image {
            data, mime_type, ..
        } => Some((data.clone(), mime_type.clone())),
        _ => None,
    });
    let (data, mime) = png.unwrap_or_else(|| panic!("{at}: {:?}", content_kinds(&image.content)));
    assert_eq!(mime, "image/png", "{at}");
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    assert!(bytes.starts_with(b"\x89PNG"), "{at}: not a PNG");
    let links = client
        .call_tool("get-resource-links", json!({"count": 2}))
        .await
        .unwrap_or_else(|e| panic!("{at}: get-resource-links: {e}"));
    let uris: Vec<&str> = links
        .content
        .iter()
        .filter_map(|c| match c {
            Content::ResourceLink { uri, .. } => Some(uri.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(uris.len(), 2, "{at}: {:?}", content_kinds(&links.content));

    // Calls that fail: arguments the tool's schema refuses, and a tool that does not exist.
    // (Its SDK answers both with a result flagged isError, not a JSON-RPC error.)
    let bad = client
        .call_tool("get-sum", json!({"a": "two", "b": 2}))
        .await
        .unwrap_or_else(|e| panic!("{at}: get-sum: {e}"));
    assert!(bad.is_error(), "{at}: {bad:?}");
    assert!(
        text(&bad.content).contains("Input validation error"),
        "{at}: {bad:?}"
    );
    match client.call_tool("no-such-tool", json!({})).await {
        Ok(result) => assert!(result.is_error(), "{at}: {result:?}"),
        Err(ClientError::Rpc(e)) => assert_eq!(e.code.0, -32602, "{at}: {e:?}"),
        Err(e) => panic!("{at}: no-such-tool: {e}"),
    }
    match client
        .call_tool_as::<i64>("get-sum", json!({"a": "two", "b": 2}))
        .await
    {
        Err(ClientError::Tool(_)) => {}
        other => panic!("{at}: call_tool_as of a failing call: {other:?}"),
    }

    // Progress of a long-running operation (0.3 s in 3 steps).
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let result = client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 0.3, "steps": 3}),
            move |p| sink.lock().unwrap().push((p.progress, p.total)),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: trigger-long-running-operation: {e}"));
    assert!(
        text(&result.content).starts_with("Long running operation completed"),
        "{at}: {result:?}"
    );
    assert_eq!(
        *progress.lock().unwrap(),
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
        "{at}"
    );

    // Sampling: the server puts our handler's answer (text and model) in its result.
    let result = client
        .call_tool(
            "trigger-sampling-request",
            json!({"prompt": "a haiku", "maxTokens": 50}),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: trigger-sampling-request: {e}"));
    let got = text(&result.content);
    for want in [
        "sampled: Resource trigger-sampling-request context: a haiku",
        SAMPLING_MODEL,
        "endTurn",
    ] {
        assert!(got.contains(want), "{at}: no {want:?} in {got}");
    }

    // Form elicitation: every field answered (defaults kept), as the server reports them.
    let result = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: trigger-elicitation-request: {e}"));
    let got = text(&result.content);
    for want in [
        "User provided the requested information",
        "- Name: Ada",
        "- Agreed to terms: true",
        "- Email: ada@example.com",
        "- Birthdate: 1815-12-10",
        "- Favorite Integer: 42",
        "- Favorite Number: 3.14",
    ] {
        assert!(got.contains(want), "{at}: no {want:?} in {got}");
    }

    // URL elicitation: our handler sees the URL and accepts.
    let result = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/consent"}),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: trigger-url-elicitation: {e}"));
    assert!(
        text(&result.content).contains("User completed the URL elicitation flow"),
        "{at}: {result:?}"
    );
    assert_eq!(
        *seen.urls.lock().unwrap(),
        ["https://example.com/consent"],
        "{at}"
    );
    // Its error path: -32042 naming the URL to open first, which the caller gets as is.
    match client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/consent", "errorPath": true}),
        )
        .await
    {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code.0, -32042, "{at}: {e:?}");
            let data = e.data.unwrap_or_default();
            assert_eq!(
                data["elicitations"][0]["url"], "https://modelcontextprotocol.io",
                "{at}: {data}"
            );
        }
        other => panic!("{at}: trigger-url-elicitation errorPath: {other:?}"),
    }

    // Resources (one page: this version lists its 7 documents at once), templates, reads.
    let resources = client.list_resources().await.unwrap();
    let features = "demo://resource/static/document/features.md";
    assert!(
        resources.iter().any(|r| r.uri == features),
        "{at}: {resources:?}"
    );
    match client.read_resource(features).await.unwrap().as_slice() {
        [ResourceContents::Text { uri, text, .. }] => {
            assert_eq!(uri, features, "{at}");
            assert!(text.contains("# Everything Server - Features"), "{at}");
        }
        other => panic!("{at}: {other:?}"),
    }
    let templates = client.list_resource_templates().await.unwrap();
    let mut uri_templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    uri_templates.sort();
    assert_eq!(
        uri_templates,
        [
            "demo://resource/dynamic/blob/{resourceId}",
            "demo://resource/dynamic/text/{resourceId}"
        ],
        "{at}"
    );
    match client
        .read_resource("demo://resource/dynamic/text/5")
        .await
        .unwrap()
        .as_slice()
    {
        [ResourceContents::Text { text, .. }] => assert!(
            text.starts_with("Resource 5: This is a plaintext resource"),
            "{at}: {text}"
        ),
        other => panic!("{at}: {other:?}"),
    }
    match client
        .read_resource("demo://resource/dynamic/blob/2")
        .await
        .unwrap()
        .as_slice()
    {
        [ResourceContents::Blob { blob, .. }] => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .expect("base64");
            assert!(
                bytes.starts_with(b"Resource 2: This is a base64 blob"),
                "{at}: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        other => panic!("{at}: {other:?}"),
    }
    assert!(
        matches!(
            client.read_resource("demo://resource/dynamic/text/0").await,
            Err(ClientError::Rpc(_))
        ),
        "{at}: resource 0 does not exist"
    );

    // Prompts: with arguments, and with an embedded resource.
    let prompts = client.list_prompts().await.unwrap();
    let args = prompts
        .iter()
        .find(|p| p.name == "args-prompt")
        .unwrap_or_else(|| panic!("{at}: {prompts:?}"));
    let arguments: Vec<(&str, bool)> = args
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("city", true), ("state", false)], "{at}");
    let prompt = client
        .get_prompt("args-prompt", json!({"city": "Paris", "state": "Texas"}))
        .await
        .unwrap_or_else(|e| panic!("{at}: args-prompt: {e}"));
    assert_eq!(
        text(std::slice::from_ref(&prompt.messages[0].content)),
        "What's weather in Paris, Texas?",
        "{at}"
    );
    let prompt = client
        .get_prompt(
            "resource-prompt",
            json!({"resourceType": "Text", "resourceId": "3"}),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: resource-prompt: {e}"));
    match prompt.messages.get(1).map(|m| &m.content) {
        Some(Content::Resource {
            resource: ResourceContents::Text { uri, .. },
            ..
        }) => assert_eq!(uri, "demo://resource/dynamic/text/3", "{at}"),
        other => panic!("{at}: {other:?}"),
    }

    // Completion: a prompt argument narrowed by the one chosen before it, a template variable.
    let mut context = Map::new();
    context.insert("department".into(), json!("Sales"));
    let done = client
        .complete(
            CompletionRef::Prompt("completable-prompt"),
            "name",
            "",
            context,
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: complete prompt: {e}"));
    assert_eq!(done.values, ["David", "Eve", "Frank"], "{at}");
    let done = client
        .complete(
            CompletionRef::Prompt("completable-prompt"),
            "department",
            "S",
            Map::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: complete department: {e}"));
    assert_eq!(done.values, ["Sales", "Support"], "{at}");
    let done = client
        .complete(
            CompletionRef::Resource("demo://resource/dynamic/text/{resourceId}"),
            "resourceId",
            "7",
            Map::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{at}: complete template: {e}"));
    assert_eq!(done.values, ["7"], "{at}");

    // Logging: at `debug`, the simulated log sends one message at once (at a random level).
    client
        .set_logging_level(LogLevel::Debug)
        .await
        .unwrap_or_else(|e| panic!("{at}: logging/setLevel: {e}"));
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: toggle-simulated-logging: {e}"));
    let log = seen
        .wait_for(at, "simulated log message", |n| {
            n.method == "notifications/message"
                && n.params["data"]
                    .as_str()
                    .is_some_and(|d| d.contains("-level message") || d.contains("level-message"))
        })
        .await;
    assert!(log.params["level"].is_string(), "{at}: {log:?}");
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: toggle-simulated-logging off: {e}"));

    // Subscriptions: the simulated updates are sent at once for what we subscribed to.
    client
        .subscribe(features)
        .await
        .unwrap_or_else(|e| panic!("{at}: subscribe: {e}"));
    client
        .call_tool("toggle-subscriber-updates", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: toggle-subscriber-updates: {e}"));
    let updated = seen
        .wait_for(at, "resources/updated", |n| {
            n.method == "notifications/resources/updated"
        })
        .await;
    assert_eq!(updated.params["uri"], features, "{at}");
    client
        .call_tool("toggle-subscriber-updates", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{at}: toggle-subscriber-updates off: {e}"));
    client
        .unsubscribe(features)
        .await
        .unwrap_or_else(|e| panic!("{at}: unsubscribe: {e}"));
}

/// server-everything over stdio. `Auto` probes with `server/discover`, which this session-era
/// server refuses, and connects with `initialize`.
#[tokio::test(flavor = "multi_thread")]
async fn everything_stdio() {
    install_clients();
    let seen = Seen::default();
    let at = "server-everything stdio";
    let (program, args) = everything_command("stdio");
    let mut command = tokio::process::Command::new(program);
    command.args(args).current_dir(ROOT);
    let client = asking_builder(ProtocolChoice::Auto, &seen)
        .stderr(Stderr::Capture)
        .spawn(command)
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    exercise_everything(&client, &seen, at).await;
    client.close().await;

    // Pinned to 2026-07-28, the client is refused at once (`server/discover` is -32601).
    let (program, args) = everything_command("stdio");
    let mut command = tokio::process::Command::new(program);
    command.args(args).current_dir(ROOT);
    stateless_refused(
        asking_builder(ProtocolChoice::Stateless, &seen)
            .stderr(Stderr::Null)
            .spawn(command),
        "server-everything stdio Stateless",
    )
    .await;
}

/// server-everything over Streamable HTTP (sessions, with an event store for resumption).
#[tokio::test(flavor = "multi_thread")]
async fn everything_http() {
    let server = EverythingHttp::start();
    let seen = Seen::default();
    let at = "server-everything Streamable HTTP";
    let client = asking_builder(ProtocolChoice::Auto, &seen)
        .connect(&server.url())
        .await
        .unwrap_or_else(|e| panic!("{at}: {e}"));
    assert!(client.session_id().is_some(), "{at}: no Mcp-Session-Id");
    exercise_everything(&client, &seen, at).await;
    client.close().await;
}
