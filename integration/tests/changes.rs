//! Change notifications and run-time enable/disable through the in-process client: resource
//! subscriptions and list changes in the session era, `subscriptions/listen` in 2026-07-28.

use std::sync::Arc;
use std::time::Duration;

use mcp_runtime::catalog::Catalog;
use mcp_runtime::catalog::ItemKind;
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// A file.
#[resource("file:///docs/{name}")]
fn doc(name: String) -> String {
    format!("doc {name}")
}

/// The board.
#[resource("memo://board")]
fn board() -> String {
    "board".into()
}

/// A tool that can be switched off.
#[tool]
fn optional_tool() -> &'static str {
    "here"
}

/// Another tool.
#[tool]
fn other_tool() -> &'static str {
    "other"
}

/// A prompt that can be switched off.
#[prompt]
fn optional_prompt() -> String {
    "prompt".into()
}

fn server(changes: &Catalog) -> Server {
    Server::builder().catalog(changes.clone()).build().unwrap()
}

async fn session(changes: &Catalog) -> TestClient {
    TestClient::connect_to(server(changes), ProtocolVersion::V2025_11_25)
        .await
        .unwrap()
}

/// The notifications received within a short while (the forwarder is a task of its own).
async fn notes(client: &TestClient) -> Vec<Value> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.take_notifications()
}

fn methods(notes: &[Value]) -> Vec<&str> {
    notes
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn capabilities_advertise_list_changes_and_subscriptions() {
    let c = session(&Catalog::new()).await;
    let r = c.request("server/discover", json!({})).await;
    assert!(r.is_err(), "session era has no discover");
    let stateless = TestClient::connect_to(server(&Catalog::new()), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let caps = &stateless
        .request("server/discover", json!({}))
        .await
        .unwrap()["capabilities"];
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
}

#[tokio::test]
async fn subscribers_hear_of_updates_to_their_resources_and_sub_resources() {
    let changes = Catalog::new();
    let c = session(&changes).await;
    let r = c
        .request("resources/subscribe", json!({"uri": "file:///docs/a"}))
        .await
        .unwrap();
    assert_eq!(r, json!({}));
    changes.resource_updated("file:///docs/a");
    changes.resource_updated("file:///docs/a#section");
    changes.resource_updated("file:///docs/ab");
    changes.resource_updated("memo://board");
    let got = notes(&c).await;
    let uris: Vec<&str> = got
        .iter()
        .map(|n| n["params"]["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["file:///docs/a", "file:///docs/a#section"]);
    assert!(
        got.iter()
            .all(|n| n["method"] == "notifications/resources/updated")
    );
    // After unsubscribing, nothing.
    c.request("resources/unsubscribe", json!({"uri": "file:///docs/a"}))
        .await
        .unwrap();
    changes.resource_updated("file:///docs/a");
    assert!(notes(&c).await.is_empty());
    // Unknown resources cannot be subscribed to.
    let e = c
        .request("resources/subscribe", json!({"uri": "nope://x"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode(-32002));
    let e = c
        .request("resources/subscribe", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn disabling_hides_an_item_and_announces_the_change() {
    let changes = Catalog::new();
    let c = session(&changes).await;
    assert!(changes.disable(ItemKind::Tool, "optional_tool"));
    assert_eq!(
        methods(&notes(&c).await),
        ["notifications/tools/list_changed"]
    );
    let names: Vec<String> = c
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !names.contains(&"optional_tool".to_owned()) && names.contains(&"other_tool".to_owned())
    );
    let e = c.call_tool("optional_tool", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("Unknown tool"));
    // Disabling twice changes nothing and announces nothing.
    assert!(!changes.disable(ItemKind::Tool, "optional_tool"));
    assert!(notes(&c).await.is_empty());

    // Prompts and resources (by URI or template) likewise.
    changes.disable(ItemKind::Prompt, "optional_prompt");
    changes.disable(ItemKind::Resource, "file:///docs/{name}");
    changes.disable(ItemKind::Resource, "board");
    assert_eq!(
        methods(&notes(&c).await),
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/list_changed"
        ]
    );
    let prompts = c.request("prompts/list", json!({})).await.unwrap();
    assert!(!prompts.to_string().contains("optional_prompt"));
    assert!(
        c.request("prompts/get", json!({"name": "optional_prompt"}))
            .await
            .is_err()
    );
    let templates = c
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(templates["resourceTemplates"], json!([]));
    let listed = c.request("resources/list", json!({})).await.unwrap();
    assert!(!listed.to_string().contains("memo://board"), "{listed}");
    for uri in ["file:///docs/a", "memo://board"] {
        let e = c
            .request("resources/read", json!({"uri": uri}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode(-32002), "{uri}");
        let e = c
            .request("resources/subscribe", json!({"uri": uri}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode(-32002), "{uri}");
    }

    // Enabled again: back, announced.
    assert!(changes.enable(ItemKind::Tool, "optional_tool"));
    assert_eq!(
        methods(&notes(&c).await),
        ["notifications/tools/list_changed"]
    );
    assert_eq!(
        c.call_tool("optional_tool", json!({}))
            .await
            .unwrap()
            .text(),
        "here"
    );
}

#[tokio::test]
async fn cursors_from_before_a_change_are_refused() {
    let changes = Catalog::new();
    let server = Server::builder()
        .catalog(changes.clone())
        .page_size(1)
        .build()
        .unwrap();
    let c = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    changes.disable(ItemKind::Tool, "nothing_by_this_name");
    let first = c.request("tools/list", json!({})).await.unwrap();
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    changes.disable(ItemKind::Tool, "optional_tool");
    let e = c
        .request("tools/list", json!({"cursor": cursor}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn a_handle_is_shared_by_the_servers_given_it_and_only_them() {
    let shared = Catalog::new();
    let a = session(&shared).await;
    let b = session(&shared).await;
    let alone = session(&Catalog::new()).await;
    shared.tools_changed();
    assert_eq!(
        methods(&notes(&a).await),
        ["notifications/tools/list_changed"]
    );
    assert_eq!(
        methods(&notes(&b).await),
        ["notifications/tools/list_changed"]
    );
    assert!(notes(&alone).await.is_empty());
    // The handle in a tool's context is the server's: its announcements reach the others.
    alone.call_tool("announce", json!({})).await.unwrap();
    assert_eq!(
        methods(&notes(&alone).await),
        ["notifications/prompts/list_changed"]
    );
    assert!(notes(&a).await.is_empty());
    a.call_tool("announce", json!({})).await.unwrap();
    assert_eq!(
        methods(&notes(&b).await),
        ["notifications/prompts/list_changed"]
    );
}

/// Announces that the prompts changed.
#[tool]
fn announce(ctx: Context) -> &'static str {
    ctx.catalog().prompts_changed();
    "announced"
}

#[tokio::test]
async fn listen_acknowledges_then_sends_only_what_was_asked_tagged() {
    let changes = Catalog::new();
    let c = Arc::new(
        TestClient::connect_to(server(&changes), ProtocolVersion::V2026_07_28)
            .await
            .unwrap(),
    );
    let listener = c.clone();
    let listen = tokio::spawn(async move {
        listener
            .request_with_id(
                77,
                "subscriptions/listen",
                json!({"notifications": {
                    "promptsListChanged": true,
                    "resourceSubscriptions": ["file:///docs/"],
                    "unknownKind": true
                }}),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ack = c.take_notifications();
    assert_eq!(methods(&ack), ["notifications/subscriptions/acknowledged"]);
    assert_eq!(
        ack[0]["params"],
        json!({
            "notifications": {"promptsListChanged": true, "resourceSubscriptions": ["file:///docs/"]},
            "_meta": {"io.modelcontextprotocol/subscriptionId": 77}
        })
    );
    changes.tools_changed(); // not asked for
    changes.prompts_changed();
    changes.resource_updated("file:///docs/a");
    changes.resource_updated("memo://board"); // not asked for
    let got = notes(&c).await;
    assert_eq!(
        methods(&got),
        [
            "notifications/prompts/list_changed",
            "notifications/resources/updated"
        ]
    );
    assert!(
        got.iter()
            .all(|n| n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 77)
    );
    assert_eq!(got[1]["params"]["uri"], "file:///docs/a");
    // The client cancels: no response, and nothing more is sent.
    c.notify("notifications/cancelled", json!({"requestId": 77}));
    let result = tokio::time::timeout(Duration::from_secs(5), listen)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_err(), "a cancelled listen gets no response");
    changes.prompts_changed();
    assert!(notes(&c).await.is_empty());
}

#[tokio::test]
async fn listen_and_subscribe_belong_to_their_era() {
    let session = session(&Catalog::new()).await;
    let e = session
        .request("subscriptions/listen", json!({"notifications": {}}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    let stateless = TestClient::connect_to(server(&Catalog::new()), ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let e = stateless
        .request("resources/subscribe", json!({"uri": "memo://board"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    let e = stateless
        .request("subscriptions/listen", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn a_server_served_again_on_a_new_runtime_still_passes_changes_on() {
    let changes = Catalog::new();
    let server = server(&changes);
    let run = |server: Server| {
        let changes = changes.clone();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let c = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
                    .await
                    .unwrap();
                changes.tools_changed();
                methods(&notes(&c).await).len()
            })
    };
    assert_eq!(run(server.clone()), 1);
    // The first runtime, and the forwarding task on it, are gone.
    assert_eq!(run(server), 1);
}

#[tokio::test]
async fn subscriptions_and_listens_have_limits_of_their_own() {
    let changes = Catalog::new();
    let server = Server::builder()
        .catalog(changes.clone())
        .max_subscriptions(2)
        .max_in_flight(1)
        .max_listens(1)
        .build()
        .unwrap();
    let session = TestClient::connect_to(server.clone(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    for uri in ["file:///docs/a", "file:///docs/b", "file:///docs/a"] {
        session
            .request("resources/subscribe", json!({"uri": uri}))
            .await
            .unwrap();
    }
    let e = session
        .request("resources/subscribe", json!({"uri": "file:///docs/c"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("Too many subscriptions"), "{e}");

    // An open listen does not take the one request slot; a second listen is refused.
    let c = Arc::new(
        TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
            .await
            .unwrap(),
    );
    let listener = c.clone();
    let listen = tokio::spawn(async move {
        listener
            .request_with_id(
                5,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        c.call_tool("other_tool", json!({})).await.unwrap().text(),
        "other"
    );
    let e = c
        .request(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await
        .unwrap_err();
    assert!(e.message.contains("subscriptions/listen streams"), "{e}");
    let e = c
        .request(
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["a", "b", "c"]}}),
        )
        .await
        .unwrap_err();
    assert!(e.message.contains("Too many resourceSubscriptions"), "{e}");
    c.notify("notifications/cancelled", json!({"requestId": 5}));
    let _ = tokio::time::timeout(Duration::from_secs(5), listen)
        .await
        .unwrap();
}

#[test]
fn the_forwarder_ends_with_its_server_even_if_nothing_changes() {
    let changes = Catalog::new(); // outlives the server, like the process-wide handle
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = session(&changes).await; // starts the server's forwarder
        assert!(
            tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks()
                >= 1
        );
        drop(client);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks(),
            0
        );
    });
    drop(changes);
}
