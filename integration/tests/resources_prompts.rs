//! Resources, templates, prompts and completion through the in-process client, in both eras.

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{McpError, ProtocolVersion, Server};
use serde_json::{Value, json};

/// The app's settings.
#[resource("config://app", mime_type = "application/json", annotations(audience = ["user"], priority = 0.5))]
fn settings() -> serde_json::Value {
    json!({"theme": "dark"})
}

/// A plain text note.
#[resource("notes://today", title = "Today's note", size = 5)]
async fn note() -> &'static str {
    "hello"
}

/// Raw bytes.
#[resource("blobs://logo", mime_type = "image/png")]
fn logo() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

#[derive(Serialize)]
struct Item {
    id: u64,
    name: String,
}

/// An item by id; ids above 100 do not exist.
#[resource("items://{id}", list = list_items, complete(id = complete_ids))]
async fn item(id: u64) -> Option<Item> {
    (id <= 100).then(|| Item {
        id,
        name: format!("item {id}"),
    })
}

fn list_items() -> Vec<Resource> {
    (1..=3)
        .map(|i| Resource::new(format!("items://{i}"), format!("item {i}")))
        .collect()
}

fn complete_ids(req: &CompletionRequest) -> Vec<String> {
    (1..=150)
        .map(|i| i.to_string())
        .filter(|v| v.starts_with(&req.value))
        .collect()
}

/// A file under a base directory.
#[resource("files://{+path}")]
fn file(path: String) -> Result<String, McpError> {
    let safe = mcp_runtime::resource::safe_join(std::path::Path::new("/srv"), &path)
        .map_err(|e| McpError::invalid_params(e.to_string()))?;
    Ok(safe.display().to_string())
}

/// A search with optional query parameters.
#[resource("search://items{?q,limit}")]
fn search(q: Option<String>, limit: Option<u32>) -> Vec<String> {
    vec![
        q.unwrap_or_default(),
        limit.map_or("none".into(), |l| l.to_string()),
    ]
}

/// Several contents at once.
#[resource("multi://pair")]
fn pair() -> Vec<ResourceContents> {
    vec![
        ResourceContents::text("multi://pair#a", "a"),
        ResourceContents::text("multi://pair#b", "b"),
    ]
}

/// Triage a ticket.
#[prompt(title = "Triage", complete(priority = complete_priority))]
fn triage(
    /// The ticket number.
    id: u64,
    /// How urgent, if known.
    priority: Option<String>,
) -> GetPromptResult {
    GetPromptResult {
        description: Some(format!("Triage of #{id}")),
        messages: vec![
            PromptMessage::user(format!(
                "Ticket {id}, priority {}",
                priority.unwrap_or_else(|| "unknown".into())
            )),
            PromptMessage::new(
                Role::User,
                Content::resource(ResourceContents::text("items://1", "{}")),
            ),
        ],
    }
}

fn complete_priority(req: &CompletionRequest) -> Vec<String> {
    let base = ["low", "medium", "high"]
        .iter()
        .filter(|p| p.starts_with(&req.value))
        .map(|p| p.to_string());
    match req.arguments.get("id").map(String::as_str) {
        Some("1") => base.chain(["critical".to_owned()]).collect(),
        _ => base.collect(),
    }
}

/// Say hello.
#[prompt]
async fn hello(name: String) -> String {
    format!("Say hello to {name}")
}

#[prompt]
fn failing() -> Result<String, String> {
    Err("the prompt store is down".into())
}

fn code(e: &McpError) -> i32 {
    e.code.0
}

async fn session() -> TestClient {
    TestClient::connect().await
}

#[tokio::test]
async fn capabilities_follow_registrations() {
    let fresh = TestClient::connect_to(
        Server::builder().build().unwrap(),
        ProtocolVersion::V2026_07_28,
    )
    .await
    .unwrap();
    let init = fresh
        .send_request(
            json!(1),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await
        .unwrap();
    assert_eq!(
        init["result"]["capabilities"],
        json!({"resources": {"subscribe": true, "listChanged": true}, "prompts": {"listChanged": true}, "completions": {}, "logging": {}})
    );
    let stateless = TestClient::stateless().await;
    let d = stateless
        .request("server/discover", json!({}))
        .await
        .unwrap();
    assert_eq!(
        d["capabilities"],
        json!({"resources": {"subscribe": true, "listChanged": true}, "prompts": {"listChanged": true}, "completions": {}, "logging": {}})
    );
}

#[tokio::test]
async fn static_resources_and_listed_instances_are_listed() {
    let client = session().await;
    let list = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "blobs://logo",
            "config://app",
            "multi://pair",
            "notes://today",
            "items://1",
            "items://2",
            "items://3"
        ]
    );
    let config = &list["resources"][1];
    assert_eq!(config["name"], "settings");
    assert_eq!(config["description"], "The app's settings.");
    assert_eq!(config["mimeType"], "application/json");
    assert_eq!(
        config["annotations"],
        json!({"audience": ["user"], "priority": 0.5})
    );
    assert_eq!(list["resources"][3]["title"], "Today's note");
    assert_eq!(list["resources"][3]["size"], 5);
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    let names: Vec<&str> = templates["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "files://{+path}",
            "items://{id}",
            "lookups://{id}",
            "search://items{?q,limit}"
        ]
    );
}

#[tokio::test]
async fn reading_gives_contents_of_every_shape() {
    let client = session().await;
    let read = |uri: &'static str| {
        let client = &client;
        async move { client.request("resources/read", json!({"uri": uri})).await }
    };
    assert_eq!(
        read("notes://today").await.unwrap()["contents"],
        json!([{"uri": "notes://today", "mimeType": "text/plain", "text": "hello"}])
    );
    assert_eq!(
        read("blobs://logo").await.unwrap()["contents"],
        json!([{"uri": "blobs://logo", "mimeType": "image/png", "blob": "iVBORw=="}])
    );
    assert_eq!(
        read("items://7").await.unwrap()["contents"],
        json!([{"uri": "items://7", "mimeType": "application/json", "text": "{\"id\":7,\"name\":\"item 7\"}"}])
    );
    assert_eq!(
        read("files://docs/a%20b.md").await.unwrap()["contents"][0]["text"],
        "/srv/docs/a b.md"
    );
    assert_eq!(
        read("search://items?limit=3&q=red").await.unwrap()["contents"][0]["text"],
        "[\"red\",\"3\"]"
    );
    assert_eq!(
        read("search://items").await.unwrap()["contents"][0]["text"],
        "[\"\",\"none\"]"
    );
    assert_eq!(
        read("multi://pair").await.unwrap()["contents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn missing_resources_are_errors_with_the_uri_in_both_eras() {
    for (client, expected) in [
        (session().await, -32002),
        (TestClient::stateless().await, -32602),
    ] {
        for uri in ["items://101", "nothing://here", "items://abc"] {
            let e = client
                .request("resources/read", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_eq!(code(&e), expected, "{uri}");
            assert_eq!(e.data, Some(json!({"uri": uri})));
        }
        let e = client
            .request("resources/read", json!({"uri": "items://abc"}))
            .await
            .unwrap_err();
        assert!(e.message.contains("`id`"), "{}", e.message);
        let e = client
            .request("resources/read", json!({"uri": "files://../etc/passwd"}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602, "the path guard refuses traversal");
    }
}

/// A `resources/read` of a long URI is matched in linear time, and one past the limit (64 KiB)
/// is refused before any template is tried; the session serves the next read.
#[tokio::test]
async fn long_uris_are_matched_or_refused_in_both_eras() {
    for client in [session().await, TestClient::stateless().await] {
        let long = format!("files://{}", "a/".repeat(30_000));
        let read = client
            .request("resources/read", json!({"uri": long}))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["uri"], long.as_str());
        let too_long = format!("files://{}", "a/".repeat(40_000));
        let e = client
            .request("resources/read", json!({"uri": too_long}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
        assert!(e.message.contains("too long"), "{}", e.message);
        assert!(e.message.len() < 200, "the URI is not echoed back");
        client
            .request("resources/read", json!({"uri": "notes://today"}))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn stateless_reads_and_lists_carry_cache_hints() {
    let client = TestClient::stateless().await;
    let read = client
        .request("resources/read", json!({"uri": "notes://today"}))
        .await
        .unwrap();
    assert_eq!(
        (read["resultType"].clone(), read["ttlMs"].clone()),
        (json!("complete"), json!(0)),
        "resource data is not cached by default"
    );
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(templates["ttlMs"], 60000, "listings are");
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let list = client.request(method, json!({})).await.unwrap();
        assert_eq!(list["cacheScope"], "private", "{method}");
    }
    let got = client
        .request(
            "prompts/get",
            json!({"name": "hello", "arguments": {"name": "x"}}),
        )
        .await
        .unwrap();
    assert_eq!(got["resultType"], "complete");
}

#[tokio::test]
async fn lists_page_with_opaque_cursors() {
    let server = Server::builder().page_size(2).build().unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    for (method, key, total) in [
        ("resources/list", "resources", 7),
        ("resources/templates/list", "resourceTemplates", 4),
        ("prompts/list", "prompts", 3),
    ] {
        let mut seen = 0;
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
            let page = client.request(method, params).await.unwrap();
            seen += page[key].as_array().unwrap().len();
            match page["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert_eq!(seen, total, "{method}");
        let e = client
            .request(method, json!({"cursor": "junk"}))
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602, "{method}");
    }
}

#[tokio::test]
async fn prompts_list_their_arguments_and_render() {
    let client = session().await;
    let list = client.request("prompts/list", json!({})).await.unwrap();
    let triage = list["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "triage")
        .unwrap();
    assert_eq!(triage["title"], "Triage");
    assert_eq!(
        triage["arguments"],
        json!([
            {"name": "id", "description": "The ticket number.", "required": true},
            {"name": "priority", "description": "How urgent, if known.", "required": false}
        ])
    );
    let got = client
        .request(
            "prompts/get",
            json!({"name": "triage", "arguments": {"id": "7", "priority": "high"}}),
        )
        .await
        .unwrap();
    assert_eq!(got["description"], "Triage of #7");
    assert_eq!(
        got["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "Ticket 7, priority high"}})
    );
    assert_eq!(got["messages"][1]["content"]["type"], "resource");
    let got = client
        .request(
            "prompts/get",
            json!({"name": "hello", "arguments": {"name": "Ann"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        got["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Say hello to Ann"}}])
    );
}

#[tokio::test]
async fn prompt_errors_name_the_argument() {
    let client = session().await;
    let e = client
        .request("prompts/get", json!({"name": "triage", "arguments": {}}))
        .await
        .unwrap_err();
    assert_eq!(
        (
            code(&e),
            e.message.contains("Missing required argument `id`")
        ),
        (-32602, true),
        "{}",
        e.message
    );
    let e = client
        .request(
            "prompts/get",
            json!({"name": "triage", "arguments": {"id": "seven"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (code(&e), e.message.contains("Invalid argument `id`")),
        (-32602, true),
        "{}",
        e.message
    );
    let e = client
        .request("prompts/get", json!({"name": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(code(&e), -32602);
    let e = client
        .request("prompts/get", json!({"name": "failing"}))
        .await
        .unwrap_err();
    assert_eq!(
        (code(&e), e.message.as_ref()),
        (-32603, "the prompt store is down")
    );
}

#[tokio::test]
async fn completion_for_prompts_and_templates() {
    let client = session().await;
    let complete = |reference: Value, name: &str, value: &str, context: Value| {
        let params = json!({"ref": reference, "argument": {"name": name, "value": value}, "context": {"arguments": context}});
        let client = &client;
        async move { client.request("completion/complete", params).await }
    };
    let r = complete(
        json!({"type": "ref/prompt", "name": "triage"}),
        "priority",
        "",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(
        r["completion"],
        json!({"values": ["low", "medium", "high"], "total": 3, "hasMore": false})
    );
    let r = complete(
        json!({"type": "ref/prompt", "name": "triage"}),
        "priority",
        "",
        json!({"id": "1"}),
    )
    .await
    .unwrap();
    assert_eq!(
        r["completion"]["values"][3], "critical",
        "the other arguments reach the completion fn"
    );
    let r = complete(
        json!({"type": "ref/resource", "uri": "items://{id}"}),
        "id",
        "1",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(r["completion"]["values"].as_array().unwrap().len(), 62);
    let r = complete(
        json!({"type": "ref/resource", "uri": "items://{id}"}),
        "id",
        "",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(r["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(
        (
            r["completion"]["total"].clone(),
            r["completion"]["hasMore"].clone()
        ),
        (json!(150), json!(true))
    );
    let r = complete(
        json!({"type": "ref/prompt", "name": "hello"}),
        "name",
        "A",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(r["completion"]["values"], json!([]));
    let e = complete(
        json!({"type": "ref/prompt", "name": "nope"}),
        "x",
        "",
        json!({}),
    )
    .await
    .unwrap_err();
    assert_eq!(code(&e), -32602);
}

#[tokio::test]
async fn resource_data_may_be_cached_when_the_server_says_so() {
    let server = Server::builder()
        .resource_cache_ttl(std::time::Duration::from_secs(5))
        .build()
        .unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let read = client
        .request("resources/read", json!({"uri": "notes://today"}))
        .await
        .unwrap();
    assert_eq!(read["ttlMs"], 5000);
}

/// A lookup that can fail: `Ok(None)` is not found, `Err` an internal error.
#[resource("lookups://{id}")]
fn lookup(id: u64) -> Result<Option<String>, String> {
    match id {
        0 => Err("store offline".into()),
        1 => Ok(Some("one".into())),
        _ => Ok(None),
    }
}

#[tokio::test]
async fn result_of_option_resources() {
    let client = session().await;
    assert_eq!(
        client
            .request("resources/read", json!({"uri": "lookups://1"}))
            .await
            .unwrap()["contents"][0]["text"],
        "one"
    );
    assert_eq!(
        code(
            &client
                .request("resources/read", json!({"uri": "lookups://2"}))
                .await
                .unwrap_err()
        ),
        -32002
    );
    let e = client
        .request("resources/read", json!({"uri": "lookups://0"}))
        .await
        .unwrap_err();
    assert_eq!((code(&e), e.message.as_ref()), (-32603, "store offline"));
}

#[tokio::test]
async fn the_users_fns_stay_callable() {
    assert_eq!(note().await, "hello");
    assert_eq!(hello("x".into()).await, "Say hello to x");
    assert!(item(101).await.is_none());
}
