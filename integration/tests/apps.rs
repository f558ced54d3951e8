//! MCP Apps (SEP-1865) on the server, through the in-process client in both eras: a `ui://`
//! resource is listed and read as `text/html;profile=mcp-app` with its `_meta.ui`, linked tools
//! carry `_meta.ui` (and the deprecated flat key) with their visibility, the extension is
//! declared once an app is registered, a tool knows whether the client renders apps, and a
//! tool linked to no resource fails the build, naming the tool. (The browser test,
//! `browser.rs`, renders an app in the ext-apps host.)

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{BuildError, ProtocolVersion, Server};
use serde_json::{Value, json};

const PAGE: &str = "<!doctype html><title>Board</title><p>board</p>";

/// The board's page.
#[resource(
    "ui://board/app.html",
    ui(
        csp(connect_domains = ["https://api.example.com"], resource_domains = "https://*.cdn.example"),
        permissions(clipboard_write, camera),
        domain = "board.apps.example",
        prefers_border = false
    )
)]
fn board_page() -> &'static str {
    PAGE
}

/// A page whose fn sets its own `_meta.ui` on the contents, which the declared one must not
/// overwrite.
#[resource("ui://board/own-meta.html", ui(prefers_border = true))]
fn own_meta() -> ResourceContents {
    ResourceContents::text("ui://board/own-meta.html", PAGE)
        .with_mime_type("text/html;profile=mcp-app")
        .with_meta("ui", json!({ "prefersBorder": false }))
}

/// Charts, one page per kind (a template: a link resolves through it).
#[resource("ui://charts/{kind}")]
fn chart(kind: String) -> String {
    format!("<!doctype html><title>{kind}</title>")
}

/// Show the board: the app where the client renders them, text where it does not.
#[tool(ui = "ui://board/app.html")]
async fn show_board(ctx: Context) -> String {
    if ctx.client_supports_apps() {
        "apps".into()
    } else {
        "text".into()
    }
}

/// Move a card; the board's buttons call it.
#[tool(ui = "ui://board/app.html", visibility = ["app"])]
async fn move_card() -> &'static str {
    "moved"
}

/// The model only.
#[tool(visibility = "model")]
async fn summarize() -> &'static str {
    "summary"
}

/// A bar chart.
#[tool(ui = "ui://charts/bar")]
async fn bar_chart() -> &'static str {
    "bars"
}

/// Linked to nothing: every server here but the one in the build test leaves it out.
#[tool(ui = "ui://nowhere/app.html")]
async fn broken() -> &'static str {
    "never listed"
}

fn server() -> Server {
    Server::builder()
        .tool_filter(|t| t.name != "broken")
        .build()
        .unwrap()
}

const UI: &str = "io.modelcontextprotocol/ui";

fn renders_apps() -> Value {
    json!({ "extensions": { UI: { "mimeTypes": ["text/html;profile=mcp-app"] } } })
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap()
}

#[tokio::test]
async fn tools_and_resources_carry_their_apps_meta_in_both_eras() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = TestClient::connect_to(server(), version).await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert_eq!(
            tool(&tools, "show_board")["_meta"],
            json!({
                "ui": { "resourceUri": "ui://board/app.html" },
                "ui/resourceUri": "ui://board/app.html"
            }),
            "{version}"
        );
        assert_eq!(
            tool(&tools, "move_card")["_meta"]["ui"],
            json!({ "resourceUri": "ui://board/app.html", "visibility": ["app"] }),
            "{version}"
        );
        // Visibility without an app; the host enforces it, so the tool is still listed.
        assert_eq!(
            tool(&tools, "summarize")["_meta"],
            json!({ "ui": { "visibility": ["model"] } }),
            "{version}"
        );
        let listed = client.request("resources/list", json!({})).await.unwrap();
        let board = listed["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == "ui://board/app.html")
            .unwrap();
        let ui = json!({
            "csp": {
                "connectDomains": ["https://api.example.com"],
                "resourceDomains": ["https://*.cdn.example"]
            },
            "permissions": { "clipboardWrite": {}, "camera": {} },
            "domain": "board.apps.example",
            "prefersBorder": false
        });
        assert_eq!(board["mimeType"], "text/html;profile=mcp-app", "{version}");
        assert_eq!(board["_meta"]["ui"], ui, "{version}");
        let read = client
            .request("resources/read", json!({ "uri": "ui://board/app.html" }))
            .await
            .unwrap();
        assert_eq!(
            read["contents"],
            json!([{
                "uri": "ui://board/app.html",
                "mimeType": "text/html;profile=mcp-app",
                "text": PAGE,
                "_meta": { "ui": ui }
            }]),
            "{version}"
        );
        // A template's pages are apps too.
        let read = client
            .request("resources/read", json!({ "uri": "ui://charts/bar" }))
            .await
            .unwrap();
        assert_eq!(
            read["contents"][0]["mimeType"], "text/html;profile=mcp-app",
            "{version}"
        );
    }
}

#[tokio::test]
async fn what_the_fn_sets_on_its_contents_wins() {
    let client = TestClient::connect_to(server(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let read = client
        .request(
            "resources/read",
            json!({ "uri": "ui://board/own-meta.html" }),
        )
        .await
        .unwrap();
    assert_eq!(
        read["contents"][0]["_meta"],
        json!({ "ui": { "prefersBorder": false } }),
        "{read}"
    );
}

#[tokio::test]
async fn the_extension_is_declared_in_both_eras() {
    let expected = json!({ "mimeTypes": ["text/html;profile=mcp-app"] });
    let client = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let discover = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(
        discover["capabilities"]["extensions"][UI], expected,
        "{discover}"
    );
    for version in ["2025-11-25", "2025-06-18", "2024-11-05"] {
        let client = TestClient::connect_to(server(), ProtocolVersion::V2026_07_28)
            .await
            .unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": renders_apps(),
            "clientInfo": {"name": "host", "version": "1"},
        }});
        let r = client.send_raw(&init.to_string()).await.unwrap();
        let capabilities = &r["result"]["capabilities"];
        assert_eq!(capabilities["extensions"][UI], expected, "{version}: {r}");
        assert!(capabilities["resources"].is_object(), "{version}: {r}");
    }
}

#[tokio::test]
async fn a_tool_knows_whether_the_client_renders_apps() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let host = TestClient::connect_answering(server(), version, renders_apps(), None)
            .await
            .unwrap();
        let r = host.call_tool("show_board", json!({})).await.unwrap();
        assert_eq!(r.text(), "apps", "{version}");
        let plain = TestClient::connect_to(server(), version).await.unwrap();
        let r = plain.call_tool("show_board", json!({})).await.unwrap();
        assert_eq!(r.text(), "text", "{version}");
        // The extension without the MIME type is not apps.
        let other = json!({ "extensions": { UI: { "mimeTypes": ["text/uri-list"] } } });
        let odd = TestClient::connect_answering(server(), version, other, None)
            .await
            .unwrap();
        let r = odd.call_tool("show_board", json!({})).await.unwrap();
        assert_eq!(r.text(), "text", "{version}");
    }
}

#[test]
fn a_tool_linked_to_no_resource_fails_the_build() {
    match Server::builder().build() {
        Err(e @ BuildError::MissingAppResource { .. }) => {
            let BuildError::MissingAppResource {
                tool,
                uri,
                location,
            } = &e
            else {
                unreachable!()
            };
            assert_eq!(tool, "broken");
            assert_eq!(uri, "ui://nowhere/app.html");
            assert!(location.contains("apps.rs"), "{location}");
            let message = e.to_string();
            assert!(
                message.contains("`broken`") && message.contains("ui://nowhere/app.html"),
                "{message}"
            );
        }
        other => panic!("{:?}", other.map(|_| "built")),
    }
}
