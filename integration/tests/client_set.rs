//! `mcp_runtime::client::Clients`: many servers from one `mcpServers` file (issue 28 §5),
//! this project's examples over stdio and HTTP, and an entry that cannot start.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use mcp_runtime::client::{Client, ClientError, Clients, ServerTransport, ServersConfig, Stderr};
use serde_json::json;
use support::http::HttpServer;

/// A directory of this test's own under cargo's temporary directory, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `sh -c` that marks `mark` started in `dir`, waits until `other` is started too, then
/// runs `program`: two such servers start only when both are being started, so they connect
/// only when connected at once.
fn rendezvous_args(dir: &str, mark: &str, other: &str, program: &str) -> serde_json::Value {
    json!([
        "-c",
        r#"touch "$0/$1"; while [ ! -e "$0/$2" ]; do sleep 0.05; done; exec "$3""#,
        dir,
        mark,
        other,
        program
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_file_connects_every_server_and_routes_namespaced_tools() {
    let quickstart = support::example("quickstart").display().to_string();
    let http = HttpServer::start("conformance");
    let dir = scratch("client_set");
    let meet = dir.display().to_string();
    let file = json!({
        "mcpServers": {
            "a": {"command": "sh", "args": rendezvous_args(&meet, "a", "c", &quickstart)},
            "b": {"url": http.url("/mcp"), "headers": {"X-Host": "client-set-test"}},
            "c": {
                "type": "stdio",
                "command": "sh",
                "args": rendezvous_args(&meet, "c", "a", &quickstart),
                "env": {"RUST_LOG": "warn"},
                "cwd": meet,
            },
            "d": {"type": "sse", "url": http.url("/sse")},
            "broken": {"command": "/nonexistent/mcp-server", "args": ["--stdio"]},
            "off": {"command": "/nonexistent/too", "disabled": true}
        }
    });
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    let config = ServersConfig::read(&path).unwrap();

    // `a` and `c` wait for each other: connected one after the other, neither would start.
    let builder = Client::builder()
        .info("client-set-test", "1.0.0")
        .stderr(Stderr::Null)
        .connect_timeout(Duration::from_secs(30));
    let clients = Clients::connect(&config, builder).await;
    let connected: Vec<&str> = clients.iter().map(|(name, _)| name).collect();
    assert_eq!(connected, ["a", "b", "c", "d"], "{:?}", clients.failures());
    assert_eq!(
        clients.get("d").unwrap().era(),
        mcp_runtime::protocol::ProtocolEra::Session,
        "`type: sse` is the deprecated HTTP+SSE transport"
    );
    let failures: Vec<_> = clients
        .failures()
        .iter()
        .map(|f| (f.server.as_str(), f.error.to_string()))
        .collect();
    assert_eq!(
        failures.len(),
        1,
        "only the broken entry fails: {failures:?}"
    );
    assert_eq!(failures[0].0, "broken");
    assert!(
        failures[0].1.contains("/nonexistent/mcp-server"),
        "the failure names the command: {}",
        failures[0].1
    );

    let listed = clients.list_tools().await;
    assert!(listed.failures.is_empty(), "{:?}", listed.failures);
    let names: Vec<&str> = listed.tools.iter().map(|t| t.name.as_str()).collect();
    for name in ["a.add", "c.add", "b.test_simple_text", "d.test_simple_text"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(
        names
            .iter()
            .all(|n| ["a.", "b.", "c.", "d."].iter().any(|p| n.starts_with(p))),
        "every name is namespaced: {names:?}"
    );

    let sum: i64 = clients
        .call_tool_as("a.add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum, 5);
    let r = clients
        .call_tool("b.test_simple_text", json!({}))
        .await
        .unwrap();
    assert_eq!(r.text(), "This is a simple text response for testing.");
    // `a.add` reached `a`: `b` has no `add`.
    let err = clients.call_tool("b.add", json!({"a": 1, "b": 1})).await;
    assert!(err.is_err() || err.unwrap().is_error());
    // A name for the broken server is its failure; one for no server says so.
    let err = clients.call_tool("broken.x", json!({})).await.unwrap_err();
    assert!(matches!(err, ClientError::Transport(_)), "{err}");
    let err = clients
        .call_tool("nobody.add", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::UnknownServer(_)), "{err}");
    assert!(clients.get("off").is_none());

    // Another separator, for model APIs that allow no dots in tool names.
    let clients = clients.separator("__");
    let listed = clients.list_tools().await;
    assert!(listed.tools.iter().any(|t| t.name == "a__add"));
    let sum: i64 = clients
        .call_tool_as("c__add", json!({"a": 4, "b": 5}))
        .await
        .unwrap();
    assert_eq!(sum, 9);
    assert_eq!(clients.route("a__add"), Some(("a", "add")));
    clients.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn vs_code_servers_spelling_connects_too() {
    let quickstart = support::example("quickstart").display().to_string();
    let config: ServersConfig = json!({
        "inputs": [{"type": "promptString", "id": "key", "password": true}],
        "servers": {
            "calc": {"type": "stdio", "command": quickstart, "args": [], "env": {"KEY": "${input:key}"}},
            "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp", "disabled": true}
        }
    })
    .to_string()
    .parse()
    .unwrap();
    assert!(matches!(
        &config.get("calc").unwrap().transport,
        ServerTransport::Stdio { env, .. } if env["KEY"] == "${input:key}"
    ));
    let clients = Clients::connect(&config, Client::builder().stderr(Stderr::Null)).await;
    assert!(clients.failures().is_empty(), "{:?}", clients.failures());
    let sum: i64 = clients
        .call_tool_as("calc.add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum, 3);
    clients.close().await;
}
