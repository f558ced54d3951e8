//! Extensions (SEP-2133) in both eras: what the server declares with
//! `ServerBuilder::extension` comes back under `capabilities.extensions` from `initialize`
//! (2025-11-25 included, as the conformance scenario `server-legacy-extensions` wants) and from
//! `server/discover`, and a tool reads what the client declared with
//! `Context::client_extension` (from `initialize` in the session era, from each request's
//! `_meta` in 2026-07-28).

mod support;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{BuildError, ProtocolVersion, Server};
use serde_json::{Value, json};
use support::http::{HttpServer, notification, rpc};

/// The client's extensions as the tool sees them, and whether it declared the Apps one.
#[tool]
async fn client_extensions(ctx: Context) -> Json<Value> {
    Json(json!({
        "extensions": ctx.client_extensions().cloned().map_or(Value::Null, Value::Object),
        "ui": ctx.client_extension("io.modelcontextprotocol/ui").cloned(),
    }))
}

/// The conformance fixture's client extensions (`legacy-extensions.ts`).
fn client_declared() -> Value {
    json!({
        "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] },
        "com.example/conformance": { "nested": { "enabled": false, "limit": 0 }, "values": ["a", 2, null] },
        "com.example/empty": {}
    })
}

/// The conformance fixture's server extensions.
fn server_declared() -> Value {
    json!({
        "io.modelcontextprotocol/ui": {},
        "com.example/conformance": { "nested": { "enabled": true, "limit": 3 }, "values": [null, "b", 4] },
        "com.example/empty": {}
    })
}

fn server() -> Server {
    let mut builder = Server::builder().name("extensions-test").version("1");
    for (id, settings) in server_declared().as_object().unwrap() {
        builder = builder.extension(id, settings.clone());
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn initialize_declares_the_servers_extensions_at_every_session_version() {
    for version in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        let client = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
            .await
            .unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": {"extensions": client_declared()},
            "clientInfo": {"name": "t", "version": "1"},
        }});
        let r = client.send_raw(&init.to_string()).await.unwrap();
        assert_eq!(r["result"]["protocolVersion"], version, "{r}");
        assert_eq!(
            r["result"]["capabilities"]["extensions"],
            server_declared(),
            "{r}"
        );
    }
}

#[tokio::test]
async fn discover_declares_the_servers_extensions() {
    let client = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let r = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(r["capabilities"]["extensions"], server_declared(), "{r}");
}

#[tokio::test]
async fn a_tool_reads_the_clients_extensions_in_both_eras() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let capabilities = json!({"extensions": client_declared()});
        let client = TestClient::connect_answering(server(), version, capabilities, None)
            .await
            .unwrap();
        let r = client
            .call_tool("client_extensions", json!({}))
            .await
            .unwrap();
        // A `Value` (whose schema is not an object's) is wrapped in `result`.
        let seen = &r.structured().unwrap()["result"];
        assert_eq!(seen["extensions"], client_declared(), "{version}: {seen}");
        assert_eq!(
            seen["ui"],
            json!({"mimeTypes": ["text/html;profile=mcp-app"]}),
            "{version}"
        );
        // A client that declares none: no extensions, and no Apps.
        let plain = TestClient::connect_to(server(), version).await.unwrap();
        let r = plain
            .call_tool("client_extensions", json!({}))
            .await
            .unwrap();
        let seen = &r.structured().unwrap()["result"];
        assert_eq!(seen, &json!({"extensions": null, "ui": null}), "{version}");
    }
}

#[tokio::test]
async fn without_a_declaration_no_extension_is_claimed() {
    let server = Server::builder().build().unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let r = client.request("server/discover", json!({})).await.unwrap();
    assert!(
        r["capabilities"].get("extensions").is_none(),
        "nothing declared, nothing claimed: {r}"
    );
}

#[test]
fn a_malformed_declaration_fails_the_build() {
    let bad = |id: &str, settings: Value| match Server::builder().extension(id, settings).build() {
        Err(BuildError::InvalidExtension { id: named, reason }) => {
            assert_eq!(named, id);
            reason
        }
        other => panic!("{id}: {:?}", other.map(|_| "built")),
    };
    assert!(bad("ui", json!({})).contains("vendor-prefix"));
    assert!(bad("com.example/x", json!([])).contains("JSON object"));
}

#[tokio::test]
async fn declaring_again_replaces_the_settings() {
    let server = Server::builder()
        .extension("com.example/x", json!({"a": 1}))
        .extension("com.example/x", json!({"a": 2}))
        .build()
        .unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let r = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(
        r["capabilities"]["extensions"],
        json!({"com.example/x": {"a": 2}}),
        "{r}"
    );
}

/// The `server-legacy-extensions` scenario as the suite's main branch runs it, against the
/// conformance example over HTTP: a 2025-11-25 `initialize` with the fixture's extensions, the
/// server's declared ones in its result, and the echo tool reporting the client's. (The
/// example declares the fixture's extensions only when asked: the scenario is opt-in.)
#[test]
fn the_conformance_example_passes_server_legacy_extensions() {
    let program = support::example("conformance");
    let server = HttpServer::start_with_env(&program, &[("CONFORMANCE_LEGACY_EXTENSIONS", "1")]);
    let init = rpc(
        1,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": client_declared()},
            "clientInfo": {"name": "legacy-extension-conformance", "version": "1.0.0"},
        }),
    );
    let r = server.post(&init, &[("MCP-Protocol-Version", "2025-11-25")]);
    assert_eq!(r.status(), 200, "{r}");
    let result = &r.json()["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25", "{r}");
    let extensions = &result["capabilities"]["extensions"];
    for (id, settings) in server_declared().as_object().unwrap() {
        assert_eq!(&extensions[id], settings, "{id}: {r}");
    }
    let session = r.header("mcp-session-id").unwrap().to_owned();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = server.post(&notification("notifications/initialized"), &headers);
    assert_eq!(r.status(), 202, "{r}");
    let call = rpc(
        2,
        "tools/call",
        json!({"name": "test_legacy_extension_capabilities", "arguments": {}}),
    );
    let r = server.post(&call, &headers);
    assert_eq!(r.status(), 200, "{r}");
    let text = r.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text block: {r}"))
        .to_owned();
    let reported: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reported["extensions"], client_declared(), "{text}");
}
