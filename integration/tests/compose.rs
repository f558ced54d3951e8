//! Composition: servers mounted into one (`ServerBuilder::mount`), in both protocol eras,
//! through the in-process client.
//!
//! One test binary for composition (mounts, proxies, bridges): each binary costs a link.

#[path = "compose/weather.rs"]
mod weather;

#[path = "compose/upstream.rs"]
mod upstream;

#[path = "compose/linker.rs"]
mod linker;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::middleware::{self, McpRequest, Next};
use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{BuildError, ProtocolVersion, Server};
use serde_json::{Value, json};

/// Says hello (the main server's own tool).
#[tool]
async fn hello() -> &'static str {
    "hi"
}

/// The main server's own resource.
#[resource("main://about")]
fn about() -> &'static str {
    "the main server"
}

const ERAS: [ProtocolVersion; 3] = [
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2026_07_28,
];

fn in_weather(item: &mcp_runtime::registry::ItemInfo) -> bool {
    item.location.0.ends_with("weather.rs")
}

fn in_upstream(item: &mcp_runtime::registry::ItemInfo) -> bool {
    item.location.0.ends_with("upstream.rs")
}

fn in_linker(item: &mcp_runtime::registry::ItemInfo) -> bool {
    item.location.0.ends_with("linker.rs")
}

/// The weather server, recording each request its middleware sees as `method name-or-uri`.
fn weather(seen: Arc<Mutex<Vec<String>>>) -> Server {
    Server::builder()
        .name("weather")
        .item_filter(in_weather)
        .middleware(middleware::from_fn(move |req: McpRequest, next: Next| {
            let what = format!(
                "{} {}",
                req.method(),
                req.name().or(req.uri()).unwrap_or_default()
            );
            seen.lock().unwrap().push(what);
            next.run(req)
        }))
        .build()
        .expect("the weather server builds")
}

fn main_with(weather: Server) -> Server {
    Server::builder()
        .name("main")
        .item_filter(|item| !in_weather(item) && !in_upstream(item) && !in_linker(item))
        .mount("weather", weather)
        .build()
        .expect("the main server builds")
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[field].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_mounted_server_serves_its_items_under_its_prefix_in_both_eras() {
    for version in ERAS {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let server = main_with(weather(seen.clone()));
        let client = TestClient::connect_to(server, version).await.unwrap();

        let tools = client.request("tools/list", json!({})).await.unwrap();
        assert_eq!(
            names(&tools, "tools", "name"),
            ["hello", "weather_forecast", "weather_greet", "weather_slow"],
            "{version}"
        );
        let forecast = &tools["tools"][1];
        assert_eq!(forecast["description"], "The forecast for a city.");
        assert_eq!(forecast["inputSchema"]["required"], json!(["city"]));
        let r = client
            .call_tool("weather_forecast", json!({"city": "Paris"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "sunny in Paris", "{version}");
        if version == ProtocolVersion::V2026_07_28 {
            // Every result names the server the client talks to, mounted items' too.
            assert_eq!(
                r.raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "main",
                "{}",
                r.raw
            );
        }
        assert_eq!(
            client.call_tool("hello", json!({})).await.unwrap().text(),
            "hi"
        );

        let resources = client.request("resources/list", json!({})).await.unwrap();
        assert_eq!(
            names(&resources, "resources", "uri"),
            ["main://about", "weather://weather/current"]
        );
        let read = client
            .request(
                "resources/read",
                json!({"uri": "weather://weather/current"}),
            )
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "mild");
        assert_eq!(read["contents"][0]["uri"], "weather://weather/current");
        let templates = client
            .request("resources/templates/list", json!({}))
            .await
            .unwrap();
        assert_eq!(
            names(&templates, "resourceTemplates", "uriTemplate"),
            ["weather://weather/{city}/now"]
        );
        let read = client
            .request(
                "resources/read",
                json!({"uri": "weather://weather/oslo/now"}),
            )
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "oslo: mild");
        assert_eq!(read["contents"][0]["uri"], "weather://weather/oslo/now");

        let prompts = client.request("prompts/list", json!({})).await.unwrap();
        assert_eq!(names(&prompts, "prompts", "name"), ["weather_umbrella"]);
        let got = client
            .request(
                "prompts/get",
                json!({"name": "weather_umbrella", "arguments": {"city": "Oslo"}}),
            )
            .await
            .unwrap();
        assert_eq!(
            got["messages"][0]["content"]["text"],
            "Do I need an umbrella in Oslo?"
        );

        let completed = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "weather_umbrella"},
                       "argument": {"name": "city", "value": "p"}}),
            )
            .await
            .unwrap();
        assert_eq!(completed["completion"]["values"], json!(["paris", "porto"]));
        let completed = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "weather://weather/{city}/now"},
                       "argument": {"name": "city", "value": "o"}}),
            )
            .await
            .unwrap();
        assert_eq!(completed["completion"]["values"], json!(["oslo"]));

        // The mounted server's middleware saw each of its requests, under its own names.
        let seen = seen.lock().unwrap().clone();
        for expected in [
            "tools/call forecast",
            "resources/read weather://current",
            "resources/read weather://oslo/now",
            "prompts/get umbrella",
            "completion/complete ",
        ] {
            assert!(seen.iter().any(|s| s == expected), "{expected}: {seen:?}");
        }
        assert!(
            !seen.iter().any(|s| s.contains("hello")),
            "the main server's own calls stay there: {seen:?}"
        );
    }
}

/// Before: a mounted tool's or prompt's resource links and embedded resources named the
/// mounted server's own URIs, which the parent does not serve (reading one was an unknown
/// resource). Now those of the mount's resources name the mounted URIs; others stay.
#[tokio::test]
async fn links_to_a_mounted_servers_resources_name_them_by_their_mounted_uris() {
    let notes = Server::builder()
        .name("notes")
        .item_filter(in_linker)
        .build()
        .unwrap();
    let main = Server::builder()
        .name("main")
        .item_filter(|_| false)
        .mount("mine", notes)
        .build()
        .unwrap();
    for version in ERAS {
        let client = TestClient::connect_to(main.clone(), version).await.unwrap();
        let r = client.call_tool("mine_notes", json!({})).await.unwrap();
        let uris: Vec<&str> = r
            .content()
            .iter()
            .filter_map(|c| c["uri"].as_str().or(c["resource"]["uri"].as_str()))
            .collect();
        // (Resource links are from 2025-06-18: an older client gets the embedded one only.)
        let expected: &[&str] = if version >= ProtocolVersion::V2025_06_18 {
            &[
                "notes://mine/today",
                "notes://mine/day/3",
                "https://example.com/notes://today",
                "other://today",
                "notes://mine/today",
            ]
        } else {
            &["notes://mine/today"]
        };
        assert_eq!(uris, expected, "{version:?}");
        // Each renamed link is read through the parent.
        for uri in ["notes://mine/today", "notes://mine/day/3"] {
            let read = client
                .request("resources/read", json!({"uri": uri}))
                .await
                .unwrap();
            assert_eq!(read["contents"][0]["uri"], uri, "{version:?}");
        }
        let prompt = client
            .request("prompts/get", json!({"name": "mine_about_today"}))
            .await
            .unwrap();
        assert_eq!(
            prompt["messages"][0]["content"]["resource"]["uri"],
            "notes://mine/today"
        );
        if version >= ProtocolVersion::V2025_06_18 {
            assert_eq!(
                prompt["messages"][1]["content"]["uri"],
                "notes://mine/day/1"
            );
        }
    }
}

#[tokio::test]
async fn the_parent_declares_what_its_mounts_serve() {
    // A parent with nothing of its own: its capabilities come from the mount.
    let weather = weather(Default::default());
    let server = Server::builder()
        .item_filter(|_| false)
        .mount("weather", weather)
        .build()
        .unwrap();
    let client = TestClient::connect_to(server.clone(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    let manifest = server.manifest();
    assert_eq!(manifest["tools"][0]["name"], "weather_forecast");
    assert_eq!(
        manifest["resourceTemplates"][0]["uriTemplate"],
        "weather://weather/{city}/now"
    );
    assert_eq!(manifest["prompts"][0]["name"], "weather_umbrella");
    let stateless = TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
        .await
        .unwrap();
    let discovered = stateless
        .request("server/discover", json!({}))
        .await
        .unwrap();
    let caps = &discovered["capabilities"];
    for kind in ["tools", "resources", "prompts", "completions"] {
        assert!(caps.get(kind).is_some(), "{kind}: {caps}");
    }
}

#[tokio::test]
async fn unknown_names_under_a_prefix_are_clear_errors() {
    for version in ERAS {
        let client = TestClient::connect_to(main_with(weather(Default::default())), version)
            .await
            .unwrap();
        let e = client
            .call_tool("weather_rain", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602, "{version}");
        assert!(e.message.contains("weather_rain"), "{}", e.message);
        let e = client
            .call_tool("nowhere_forecast", json!({}))
            .await
            .unwrap_err();
        assert!(e.message.contains("nowhere_forecast"), "{}", e.message);
        let e = client
            .request(
                "resources/read",
                json!({"uri": "weather://weather/none/at/all"}),
            )
            .await
            .unwrap_err();
        assert!(e.code.0 == -32002 || e.code.0 == -32602, "{e:?}");
        let e = client
            .request("prompts/get", json!({"name": "weather_", "arguments": {}}))
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602);
    }
}

#[test]
fn bad_mounts_fail_the_build() {
    // An empty prefix is no prefix (a proxy served alone); twice is still twice.
    for (prefix, separator, says) in [("we ather", "_", "A-Z"), ("weather", "/", "separator")] {
        let e = Server::builder()
            .mount_separator(separator)
            .mount(prefix, weather(Default::default()))
            .build()
            .unwrap_err();
        assert!(matches!(e, BuildError::InvalidMount { .. }), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    let e = Server::builder()
        .mount("w", weather(Default::default()))
        .mount("w", weather(Default::default()))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
}

#[tokio::test]
async fn the_separator_is_configurable_and_tool_filter_servers_mount() {
    // A server built from a tool filter alone (its resources and prompts are everyone's).
    let only_forecast = Server::builder()
        .tool_filter(|t| t.name == "forecast")
        .item_filter(in_weather)
        .build()
        .unwrap();
    let server = Server::builder()
        .item_filter(|item| !in_weather(item) && !in_upstream(item) && !in_linker(item))
        .mount_separator(".")
        .mount("wx", only_forecast)
        .build()
        .unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tools, ["hello", "wx.forecast"]);
    let r = client
        .call_tool("wx.forecast", json!({"city": "Rome"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "sunny in Rome");
}

/// Waits (bounded) until the client got a notification `method` (with `uri`, if given).
async fn notified(client: &TestClient, method: &str, uri: Option<&str>) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(n) = client
            .take_notifications()
            .into_iter()
            .find(|n| n["method"] == method && uri.is_none_or(|u| n["params"]["uri"] == u))
        {
            return n;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {method} notification"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn the_mounted_catalog_hides_items_and_its_changes_reach_the_parent_clients() {
    let weather = weather(Default::default());
    let catalog = weather.catalog().clone();
    let client = TestClient::connect_to(main_with(weather), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    // Subscribed under the mounted URI.
    client
        .request(
            "resources/subscribe",
            json!({"uri": "weather://weather/current"}),
        )
        .await
        .unwrap();
    let e = client
        .request(
            "resources/subscribe",
            json!({"uri": "weather://weather/nothing"}),
        )
        .await
        .unwrap_err();
    assert!(e.message.contains("weather://weather/nothing"), "{e:?}");

    catalog.disable(mcp_runtime::catalog::ItemKind::Tool, "greet");
    notified(&client, "notifications/tools/list_changed", None).await;
    let tools = client.list_tools().await.unwrap();
    assert!(
        tools.iter().all(|t| t["name"] != "weather_greet"),
        "{tools:?}"
    );
    let e = client
        .call_tool("weather_greet", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32602);

    catalog.resource_updated("weather://current");
    notified(
        &client,
        "notifications/resources/updated",
        Some("weather://weather/current"),
    )
    .await;
}

#[tokio::test]
async fn asks_progress_and_cancellation_cross_the_mount() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = answering(main_with(weather(Default::default())), version, ada()).await;
        let r = client.call_tool("weather_greet", json!({})).await.unwrap();
        assert_eq!(r.text(), "hello Ada", "{version}");
        assert_eq!(client.take_asks().len(), 1, "{version}");

        // Progress with the client's token.
        client.take_notifications();
        let r = client
            .request(
                "tools/call",
                json!({"name": "weather_forecast", "arguments": {"city": "Oslo"},
                       "_meta": {"progressToken": "p1"}}),
            )
            .await
            .unwrap();
        assert_eq!(r["content"][0]["text"], "sunny in Oslo");
        let progress = client
            .take_notifications()
            .into_iter()
            .find(|n| n["method"] == "notifications/progress")
            .expect("progress reached the client");
        assert_eq!(progress["params"]["progressToken"], "p1");
    }

    // A session-era cancellation reaches the mounted server's handler.
    let client = Arc::new(
        TestClient::connect_to(
            main_with(weather(Default::default())),
            ProtocolVersion::V2025_11_25,
        )
        .await
        .unwrap(),
    );
    let running = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .send_request(json!("slow"), "tools/call", json!({"name": "weather_slow"}))
                .await
        })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !weather::SLOW_STARTED.load(Ordering::SeqCst) {
        assert!(tokio::time::Instant::now() < deadline, "slow never started");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    client.notify("notifications/cancelled", json!({"requestId": "slow"}));
    let response = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response, None, "no response for a cancelled request");
}

#[tokio::test]
async fn a_listen_stream_hears_the_mounted_servers_changes() {
    let weather = weather(Default::default());
    let catalog = weather.catalog().clone();
    let client = Arc::new(
        TestClient::connect_to(main_with(weather), ProtocolVersion::V2026_07_28)
            .await
            .unwrap(),
    );
    let listening = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .request(
                    "subscriptions/listen",
                    json!({"notifications": {"toolsListChanged": true,
                           "resourceSubscriptions": ["weather://weather/current"]}}),
                )
                .await
        })
    };
    let ack = notified(&client, "notifications/subscriptions/acknowledged", None).await;
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
    catalog.tools_changed();
    notified(&client, "notifications/tools/list_changed", None).await;
    catalog.resource_updated("weather://current");
    notified(
        &client,
        "notifications/resources/updated",
        Some("weather://weather/current"),
    )
    .await;
    listening.abort();
}

// ---- Proxy: a server elsewhere, through mcp_runtime::client ----

mod support;

use mcp_runtime::client::{Client, ProtocolChoice, Stderr};
use mcp_runtime::compose::Proxy;
use mcp_runtime::transport::{HttpConfig, serve_http_on};

/// The weather server alone over Streamable HTTP on a free port, on a runtime of its own;
/// its URL.
fn weather_over_http() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let server = Server::builder()
                .name("weather-upstream")
                .version("2.0.0")
                .instructions("Ask for forecasts by city.")
                .item_filter(in_weather)
                .build()
                .unwrap();
            let _ = serve_http_on(server, listener, HttpConfig::new("127.0.0.1:0")).await;
        });
    });
    format!("http://127.0.0.1:{}/mcp", rx.recv().unwrap())
}

const UPSTREAM_ERAS: [ProtocolChoice; 2] = [
    ProtocolChoice::Session(ProtocolVersion::V2025_11_25),
    ProtocolChoice::Stateless,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_proxy_forwards_every_primitive_across_eras() {
    let url = weather_over_http();
    for upstream_era in UPSTREAM_ERAS {
        let upstream = Client::builder()
            .protocol(upstream_era)
            .request_timeout(Duration::from_secs(20))
            .connect(&url)
            .await
            .unwrap();
        let server = Server::builder()
            .name("gateway")
            .item_filter(|item| !in_weather(item) && !in_upstream(item) && !in_linker(item))
            .mount("up", Proxy::new(upstream))
            .build()
            .unwrap();
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let what = format!("{upstream_era:?} behind a {version} client");
            let client = TestClient::connect_to(server.clone(), version)
                .await
                .unwrap();
            let tools = client.request("tools/list", json!({})).await.unwrap();
            assert_eq!(
                names(&tools, "tools", "name"),
                ["hello", "up_forecast", "up_greet", "up_slow"],
                "{what}"
            );
            assert_eq!(tools["tools"][1]["description"], "The forecast for a city.");
            assert_eq!(
                tools["tools"][1]["inputSchema"]["required"],
                json!(["city"])
            );
            client.take_notifications();
            let r = client
                .request(
                    "tools/call",
                    json!({"name": "up_forecast", "arguments": {"city": "Lima"},
                           "_meta": {"progressToken": 7}}),
                )
                .await
                .unwrap();
            assert_eq!(r["content"][0]["text"], "sunny in Lima", "{what}");
            assert!(r.get("resultType").is_none() || version == ProtocolVersion::V2026_07_28);
            let progress = client
                .take_notifications()
                .into_iter()
                .find(|n| n["method"] == "notifications/progress")
                .unwrap_or_else(|| panic!("{what}: no progress"));
            assert_eq!(progress["params"]["progressToken"], 7);
            assert_eq!(progress["params"]["message"], "looked it up");

            let resources = client.request("resources/list", json!({})).await.unwrap();
            assert_eq!(
                names(&resources, "resources", "uri"),
                ["main://about", "weather://up/current"],
                "{what}"
            );
            let read = client
                .request("resources/read", json!({"uri": "weather://up/oslo/now"}))
                .await
                .unwrap();
            assert_eq!(read["contents"][0]["text"], "oslo: mild", "{what}");
            assert_eq!(read["contents"][0]["uri"], "weather://up/oslo/now");
            let templates = client
                .request("resources/templates/list", json!({}))
                .await
                .unwrap();
            assert_eq!(
                names(&templates, "resourceTemplates", "uriTemplate"),
                ["weather://up/{city}/now"]
            );
            let got = client
                .request(
                    "prompts/get",
                    json!({"name": "up_umbrella", "arguments": {"city": "Lima"}}),
                )
                .await
                .unwrap();
            assert_eq!(
                got["messages"][0]["content"]["text"],
                "Do I need an umbrella in Lima?"
            );
            let completed = client
                .request(
                    "completion/complete",
                    json!({"ref": {"type": "ref/resource", "uri": "weather://up/{city}/now"},
                           "argument": {"name": "city", "value": "p"}}),
                )
                .await
                .unwrap();
            assert_eq!(completed["completion"]["values"], json!(["paris", "porto"]));

            // The upstream's own errors, as it sent them.
            let e = client.call_tool("up_rain", json!({})).await.unwrap_err();
            assert_eq!(e.code.0, -32602, "{what}");
            assert!(e.message.contains("rain"), "{}", e.message);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_served_alone_keeps_the_upstreams_identity_and_a_dead_upstream_is_an_error() {
    let url = weather_over_http();
    let proxy = Proxy::new(Client::builder().connect(&url).await.unwrap());
    let server = proxy.clone().server().build().unwrap();
    assert_eq!(server.info().name, "weather-upstream");
    assert_eq!(server.info().version, "2.0.0");
    assert_eq!(server.instructions(), Some("Ask for forecasts by city."));
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let r = client
        .call_tool("forecast", json!({"city": "Kyiv"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "sunny in Kyiv");
    let caps = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(caps["tools"].as_array().unwrap().len(), 3);

    proxy.client().close().await;
    let e = tokio::time::timeout(
        Duration::from_secs(20),
        client.call_tool("forecast", json!({"city": "Kyiv"})),
    )
    .await
    .expect("a dead upstream answers at once")
    .unwrap_err();
    assert_eq!(e.code.0, -32603);
    assert!(e.message.contains("upstream"), "{}", e.message);
    // Served alone, its list is its error too.
    let e = client.request("tools/list", json!({})).await.unwrap_err();
    assert!(e.message.contains("upstream"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_proxy_passes_the_upstreams_asks_and_logs_on() {
    let url = weather_over_http();
    for upstream_era in UPSTREAM_ERAS {
        let builder = Client::builder()
            .protocol(upstream_era)
            .request_timeout(Duration::from_secs(20));
        let proxy = Proxy::connect(builder, &url).await.unwrap();
        let server = Server::builder()
            .item_filter(|item| !in_weather(item) && !in_upstream(item) && !in_linker(item))
            .mount("up", proxy)
            .build()
            .unwrap();
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let what = format!("{upstream_era:?} behind a {version} client");
            let client = answering(server.clone(), version, ada()).await;
            let r = client.call_tool("up_greet", json!({})).await.unwrap();
            assert_eq!(r.text(), "hello Ada", "{what}");
            assert_eq!(client.take_asks().len(), 1, "{what}");
            if version == ProtocolVersion::V2025_11_25 {
                // 2026-07-28 clients get log messages only when a request asks for them.
                client.take_notifications();
                client
                    .call_tool("up_forecast", json!({"city": "Oslo"}))
                    .await
                    .unwrap();
                let logged = client
                    .take_notifications()
                    .into_iter()
                    .find(|n| n["method"] == "notifications/message")
                    .unwrap_or_else(|| panic!("{what}: no log message"));
                assert_eq!(logged["params"]["data"], "looking up Oslo", "{what}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_upstream_leaves_the_other_items_listed() {
    let proxy = Proxy::new(
        Client::builder()
            .connect(&weather_over_http())
            .await
            .unwrap(),
    );
    let server = Server::builder()
        .item_filter(|item| !in_weather(item) && !in_upstream(item) && !in_linker(item))
        .mount("up", proxy.clone())
        .build()
        .unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 4);
    proxy.client().close().await;
    let tools = client.request("tools/list", json!({})).await.unwrap();
    assert_eq!(names(&tools, "tools", "name"), ["hello"]);
    let e = client
        .call_tool("up_forecast", json!({"city": "Oslo"}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32603, "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_server_through_a_proxy() {
    support::interop::install_clients();
    let mut command = tokio::process::Command::new("node");
    command
        .arg(std::path::Path::new(support::interop::ROOT).join("tests/interop/ts_server.mjs"))
        .current_dir(support::interop::ROOT)
        .env(
            "MCP_INTEROP_NODE_DIR",
            std::path::Path::new(support::interop::ROOT).join(".interop/node"),
        );
    let builder = Client::builder()
        .stderr(Stderr::Null)
        .request_timeout(Duration::from_secs(20));
    // The upstream's elicitation goes to the client in front.
    let proxy = Proxy::spawn(builder, command).await.unwrap();
    let server = proxy.server().build().unwrap();
    assert_eq!(server.info().name, "ts-interop");
    for version in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ] {
        let answer: mcp_runtime::testing::Answer = Arc::new(|method: &str, params: &Value| {
            assert_eq!(method, "elicitation/create");
            assert_eq!(params["message"], "What is your name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        });
        let client = answering(server.clone(), version, answer).await;
        if version >= ProtocolVersion::V2025_06_18 {
            let r = client.call_tool("greet", json!({})).await.unwrap();
            assert_eq!(r.text(), "Hello, Ada!", "{version}");
            assert_eq!(client.take_asks().len(), 1, "{version}");
        } else {
            // Elicitation is newer than this client: the upstream hears the refusal.
            let r = client.call_tool("greet", json!({})).await;
            assert!(
                r.as_ref().is_err() || r.as_ref().unwrap().is_error(),
                "{version}: {r:?}"
            );
        }
        let tools = client.request("tools/list", json!({})).await.unwrap();
        assert_eq!(
            names(&tools, "tools", "name"),
            ["add", "count", "greet", "fail"],
            "{version}"
        );
        assert!(tools["tools"][0]["outputSchema"].is_object());
        let r = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        assert_eq!(r.text(), r#"{"result":5}"#, "{version}");
        if version >= ProtocolVersion::V2025_06_18 {
            assert_eq!(r.structured(), Some(&json!({"result": 5})), "{version}");
        } else {
            assert_eq!(r.structured(), None, "{version}");
        }
        let r = client.call_tool("fail", json!({})).await.unwrap();
        assert!(r.is_error(), "{version}");
        client.take_notifications();
        let r = client
            .request(
                "tools/call",
                json!({"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": "c"}}),
            )
            .await
            .unwrap();
        assert_eq!(r["content"][0]["text"], "counted 3");
        let steps = client
            .take_notifications()
            .into_iter()
            .filter(|n| {
                n["method"] == "notifications/progress" && n["params"]["progressToken"] == "c"
            })
            .count();
        assert_eq!(steps, 3, "{version}");
        let read = client
            .request("resources/read", json!({"uri": "greeting://ada"}))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "Hello, ada!");
        let got = client
            .request(
                "prompts/get",
                json!({"name": "review", "arguments": {"code": "x"}}),
            )
            .await
            .unwrap();
        assert!(
            got["messages"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("review")
        );
        let completed = client
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "review"},
                       "argument": {"name": "code", "value": "r"}}),
            )
            .await
            .unwrap();
        assert_eq!(completed["completion"]["values"], json!(["rust", "ruby"]));
    }
}

// ---- The bridge program (examples/bridge) ----

/// Starts `mcp-bridge` with `args` (which make it listen on `127.0.0.1:0`) and waits until it
/// logs where it serves: a port picked here and bound later could be taken in between, and a
/// wait for something to listen there could find the wrong server.
async fn start_bridge(args: &[String]) -> support::http::HttpServer {
    let bridge = support::interop::build_examples(&["mcp-bridge"])
        .expect("the bridge builds")
        .remove(0);
    let root = std::path::Path::new(support::interop::ROOT);
    let node_dir = root.join(".interop/node");
    let args = args.to_vec();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env = [("MCP_INTEROP_NODE_DIR", node_dir.to_str().unwrap())];
        support::http::HttpServer::start_args(&bridge, &args, &env)
    })
    .await
    .unwrap()
}

/// `mcp-bridge gateway`: the servers of an `mcpServers` file (the TypeScript SDK's over stdio,
/// ours over HTTP) served as one, each under its name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_an_mcp_servers_file_as_one_server() {
    support::interop::install_clients();
    let root = std::path::Path::new(support::interop::ROOT);
    let dir = std::env::temp_dir().join(format!("mcp-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mcp.json");
    let config = json!({"mcpServers": {
        "ts": {"command": "node",
               "args": [root.join("tests/interop/ts_server.mjs")],
               "env": {"MCP_INTEROP_NODE_DIR": root.join(".interop/node")}},
        "wx": {"url": weather_over_http()},
        "wy": {"type": "sse", "url": weather_over_http().replace("/mcp", "/sse")},
        "off": {"command": "does-not-exist", "disabled": true},
    }});
    std::fs::write(&file, config.to_string()).unwrap();
    let bridge = start_bridge(&[
        "gateway".into(),
        "--http".into(),
        "127.0.0.1:0".into(),
        file.display().to_string(),
    ])
    .await;
    let port = bridge.port;
    let client = Client::builder()
        .request_timeout(Duration::from_secs(20))
        .connect(&format!("http://127.0.0.1:{port}/mcp"))
        .await
        .unwrap();
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(
        tools,
        [
            "ts_add",
            "ts_count",
            "ts_greet",
            "ts_fail",
            "wx_forecast",
            "wx_greet",
            "wx_slow",
            "wy_forecast",
            "wy_greet",
            "wy_slow"
        ]
    );
    let sum: Value = client
        .call_tool_as("ts_add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum, json!({"result": 3}));
    let r = client
        .call_tool("wx_forecast", json!({"city": "Quito"}))
        .await
        .unwrap();
    assert_eq!(
        r.content,
        [mcp_runtime::protocol::Content::text("sunny in Quito")]
    );
    // The HTTP+SSE server, mounted as the others are.
    let r = client
        .call_tool("wy_forecast", json!({"city": "Lima"}))
        .await
        .unwrap();
    assert_eq!(
        r.content,
        [mcp_runtime::protocol::Content::text("sunny in Lima")]
    );
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_bridge_prints_the_client_config_of_a_remote_server() {
    let bridge = support::interop::build_examples(&["mcp-bridge"])
        .expect("the bridge builds")
        .remove(0);
    let out = std::process::Command::new(&bridge)
        .args(["connect", "https://mcp.example.com/mcp", "--client-config"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let entry: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = &entry["mcpServers"]["mcp.example.com"];
    assert_eq!(server["command"], bridge.display().to_string());
    assert_eq!(
        server["args"],
        json!(["connect", "https://mcp.example.com/mcp"])
    );
    // Its authorization options go into the entry.
    let out = std::process::Command::new(&bridge)
        .args(["connect", "https://mcp.example.com/mcp", "--client-config"])
        .args([
            "--client-credentials",
            "--client-id",
            "me",
            "--client-secret",
            "s",
        ])
        .args(["--scope", "mcp", "--scope", "tickets:read"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let entry: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        entry["mcpServers"]["mcp.example.com"]["args"],
        json!([
            "connect",
            "https://mcp.example.com/mcp",
            "--client-credentials",
            "--client-id",
            "me",
            "--client-secret",
            "s",
            "--scope",
            "mcp tickets:read"
        ])
    );
    // A command line it cannot use is a usage error, not a start.
    let out = std::process::Command::new(&bridge)
        .args(["serve", "--http", "127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("after `--`"));
    let out = std::process::Command::new(&bridge)
        .args([
            "--upstream-sessions",
            "some",
            "serve",
            "--http",
            "127.0.0.1:1",
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not auto, shared or per-session"),
        "{out:?}"
    );
}

/// `mcp-bridge` with `args`, as a stdio server for [`Client::spawn`](mcp_runtime::client::ClientBuilder::spawn).
fn bridge_command(args: &[&str]) -> tokio::process::Command {
    let bridge = support::interop::build_examples(&["mcp-bridge"])
        .expect("the bridge builds")
        .remove(0);
    let mut command = tokio::process::Command::new(bridge);
    command.args(args);
    command
}

/// The weather server over Streamable HTTP, an OAuth resource server for tokens of
/// oidc-provider (tests/auth/as.mjs) naming its URL; the authorization server and that URL.
async fn protected_weather() -> (support::auth::AuthServer, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let resource = url.clone();
    let authz = tokio::task::spawn_blocking(move || support::auth::AuthServer::start(&resource, 0))
        .await
        .unwrap();
    let server = Server::builder()
        .name("weather-upstream")
        .item_filter(|item| in_weather(item) || item.name == "hello")
        .build()
        .unwrap();
    let auth = mcp_runtime::auth::Auth::jwt(&authz.issuer, &url).required_scopes(["mcp"]);
    tokio::spawn(serve_http_on(
        server,
        listener,
        HttpConfig::new("127.0.0.1:0").auth(auth),
    ));
    (authz, url)
}

/// `mcp-bridge connect URL --client-credentials ...` in front of a server that wants tokens of
/// oidc-provider: the bridge gets its own (the client-credentials grant of `mcp-test`, with the
/// scope it was given), and a stdio client lists and calls the server's tools through it (those
/// the token's scopes allow).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_connects_to_a_protected_server_with_client_credentials() {
    let (_authz, url) = protected_weather().await;
    let (id, secret) = support::auth::CLIENT;
    let client = Client::builder()
        .request_timeout(Duration::from_secs(30))
        .stderr(Stderr::Capture)
        .spawn(bridge_command(&[
            "connect",
            &url,
            "--client-credentials",
            "--client-id",
            id,
            "--client-secret",
            secret,
            "--scope",
            "mcp",
        ]))
        .await
        .unwrap_or_else(|e| panic!("the bridge connects: {e}"));
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    // `forecast` needs `weather:read`, which the token has not.
    assert_eq!(tools, ["hello", "greet", "slow"]);
    let r = client.call_tool("hello", json!({})).await.unwrap();
    assert_eq!(r.content, [mcp_runtime::protocol::Content::text("hi")]);
    client.close().await;
}

/// The bridge started by a client that keeps its stdin open: its exit status and stderr
/// (within a minute: a bridge that hangs fails the test).
async fn bridge_fails(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = bridge_command(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the bridge ends by itself")
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Without a token the protected server is an error the bridge says and exits on, not a hang:
/// with `--no-auth`, and with client credentials the authorization server refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_without_credentials_fails_clearly() {
    let (_authz, url) = protected_weather().await;
    let (status, stderr) = bridge_fails(&["connect", &url, "--no-auth"]).await;
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("HTTP 401") && stderr.contains("--no-auth"),
        "{stderr}"
    );
    let (id, _) = support::auth::CLIENT;
    let (status, stderr) = bridge_fails(&[
        "connect",
        &url,
        "--client-credentials",
        "--client-id",
        id,
        "--client-secret",
        "wrong",
    ])
    .await;
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("authoriz"), "{stderr}");
    // Half a configuration is a usage error.
    let (status, stderr) = bridge_fails(&["connect", &url, "--client-credentials"]).await;
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs --client-id"), "{stderr}");
}

/// The default: the authorization-code flow. The bridge prints the login URL on stderr (here
/// with `--no-browser`); the user (plain `GET`s: the scripted authorization server of
/// tests/support/oauth.rs approves at once) follows it back to the bridge's loopback redirect.
/// The tokens land in `$XDG_CONFIG_HOME/mcp-bridge/tokens.json` (0600), and the next start
/// uses them without a login. A server that asks for nothing gets no login and no file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_logs_in_through_the_browser_once_and_keeps_the_tokens() {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("stderr.log");
    let tokens = dir.join("config/mcp-bridge/tokens.json");
    // The bridge under `sh`, its stderr in `log` (the client's own capture is read only
    // once it is connected, and the login comes before).
    let bridge = |url: &str| {
        let program = bridge_command(&[]).as_std().get_program().to_owned();
        let mut command = tokio::process::Command::new("sh");
        command
            .args(["-c", r#"exec "$0" "$@" 2>>"$LOG""#])
            .arg(program)
            .args(["connect", url, "--no-browser"])
            .env("LOG", &log)
            .env("XDG_CONFIG_HOME", dir.join("config"));
        command
    };
    let connect = |url: String| {
        let command = bridge(&url);
        async move {
            Client::builder()
                .request_timeout(Duration::from_secs(30))
                .connect_timeout(Duration::from_secs(60))
                .spawn(command)
                .await
                .unwrap_or_else(|e| panic!("the bridge connects: {e}"))
        }
    };

    // No authorization asked: none done.
    let open = connect(weather_over_http()).await;
    assert!(!open.list_tools().await.unwrap().is_empty());
    open.close().await;
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!said.contains("log in at"), "{said}");
    assert!(!tokens.exists(), "tokens for a server that wants none");

    let world = support::oauth::World::start(support::oauth::Options::default()).await;
    // The user: waits for the URL on the bridge's stderr, follows it, comes back.
    let user = tokio::spawn({
        let log = log.clone();
        async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            let url = loop {
                let said = std::fs::read_to_string(&log).unwrap_or_default();
                if let Some(url) = said
                    .lines()
                    .find_map(|l| l.split_once("log in at: ").map(|(_, url)| url.to_owned()))
                {
                    break url;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "no login URL: {said}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            let (status, back) = support::oauth::get(&url).await;
            let back = back.unwrap_or_else(|| panic!("no redirect: {status}"));
            assert!(back.starts_with("http://127.0.0.1:"), "{back}");
            let (page, _) = support::oauth::get(&back).await;
            assert!(page.contains("200"), "{page}");
        }
    });
    let client = connect(world.url.clone()).await;
    user.await.unwrap();
    client.list_tools().await.unwrap();
    client.close().await;
    let authorizations = || {
        world
            .auth
            .seen()
            .iter()
            .filter(|r| r.target.starts_with("/authorize"))
            .count()
    };
    assert_eq!(authorizations(), 1);
    let saved = std::fs::read_to_string(&tokens).expect("the tokens are kept");
    assert!(
        saved.contains("tok-1") && saved.contains(&world.url),
        "{saved}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tokens), 0o600);
        assert_eq!(mode(tokens.parent().unwrap()), 0o700);
    }

    // The next start (a desktop client starting the bridge again): the kept token, no login.
    let logins = std::fs::read_to_string(&log)
        .unwrap()
        .matches("log in at")
        .count();
    let again = connect(world.url.clone()).await;
    again.list_tools().await.unwrap();
    again.close().await;
    assert_eq!(authorizations(), 1);
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(said.matches("log in at").count(), logins, "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mcp-bridge serve --http` in front of the TypeScript SDK's stdio server, reached by our
/// client in both eras (the SDK server itself speaks only the session era).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_serves_a_stdio_server_over_http_in_both_eras() {
    support::interop::install_clients();
    let root = std::path::Path::new(support::interop::ROOT);
    let script = root.join("tests/interop/ts_server.mjs");
    let bridge = start_bridge(&[
        "serve".into(),
        "--http".into(),
        "127.0.0.1:0".into(),
        "--".into(),
        "node".into(),
        script.display().to_string(),
    ])
    .await;
    let url = format!("http://127.0.0.1:{}/mcp", bridge.port);
    for era in UPSTREAM_ERAS {
        let client = Client::builder()
            .protocol(era)
            .request_timeout(Duration::from_secs(20))
            .on_elicitation(|_| async {
                Ok(mcp_runtime::client::ElicitResult::accept(
                    json!({"name": "Ada"}),
                ))
            })
            .connect(&url)
            .await
            .unwrap();
        assert_eq!(client.server_info().unwrap().name, "ts-interop", "{era:?}");
        // The SDK server's elicitation reaches this client through the bridge.
        let greeted = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(
            greeted.content,
            [mcp_runtime::protocol::Content::text("Hello, Ada!")],
            "{era:?}"
        );
        let tools: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(tools, ["add", "count", "greet", "fail"], "{era:?}");
        let sum: serde_json::Value = client
            .call_tool_as("add", json!({"a": 20, "b": 22}))
            .await
            .unwrap();
        assert_eq!(sum, json!({"result": 42}));
        let steps = Arc::new(Mutex::new(Vec::new()));
        let seen = steps.clone();
        let r = client
            .call_tool_with_progress("count", json!({"steps": 3}), move |p| {
                seen.lock().unwrap().push(p.progress)
            })
            .await
            .unwrap();
        assert!(!r.is_error());
        assert_eq!(*steps.lock().unwrap(), [1.0, 2.0, 3.0], "{era:?}");
        let contents = client.read_resource("config://app").await.unwrap();
        assert_eq!(contents.len(), 1);
        client.close().await;
    }
}

// ---- A mounted server's scopes, enforced by the parent's HTTP authorization ----

/// Tokens: `reader` holds `weather:read`, `nobody` holds nothing.
struct Tokens;

impl mcp_runtime::auth::TokenVerifier for Tokens {
    fn verify<'a>(&'a self, token: &'a str) -> mcp_runtime::auth::VerifyFuture<'a> {
        Box::pin(async move {
            let scope = match token {
                "reader" => "weather:read",
                "nobody" => "",
                _ => {
                    return Err(mcp_runtime::auth::TokenError::Invalid(
                        "unknown token".into(),
                    ));
                }
            };
            let mut claims = serde_json::Map::new();
            claims.insert("iss".into(), json!("https://as.example"));
            claims.insert("sub".into(), json!(token));
            claims.insert("scope".into(), json!(scope));
            mcp_runtime::Principal::from_claims(claims)
                .map_err(mcp_runtime::auth::TokenError::Invalid)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_tools_scopes_hold_on_the_parents_http_endpoint() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let auth = mcp_runtime::auth::Auth::with_verifier("https://as.example", &url, Tokens);
    let config = HttpConfig::new("127.0.0.1:0").auth(auth);
    tokio::spawn(serve_http_on(
        main_with(weather(Default::default())),
        listener,
        config,
    ));
    let connect = |token: &'static str| {
        Client::builder()
            .header("authorization", &format!("Bearer {token}"))
            .request_timeout(Duration::from_secs(20))
            .connect(&url)
    };
    let reader = connect("reader").await.unwrap();
    let r = reader
        .call_tool("weather_forecast", json!({"city": "Bern"}))
        .await
        .unwrap();
    assert_eq!(
        r.content,
        [mcp_runtime::protocol::Content::text("sunny in Bern")]
    );
    let nobody = connect("nobody").await.unwrap();
    let listed: Vec<String> = nobody
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        !listed.iter().any(|t| t == "weather_forecast"),
        "hidden from a caller without its scope: {listed:?}"
    );
    let refused = nobody
        .call_tool("weather_forecast", json!({"city": "Bern"}))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("weather:read") || refused.to_string().contains("403"),
        "{refused}"
    );
}

// ---- A proxy's upstream connections: reconnection, one per client session ----

use mcp_runtime::compose::UpstreamSessions;
use mcp_runtime::protocol::ProtocolEra;

/// The TypeScript SDK's stdio server (a session-era, so stateful, upstream), its pid appended
/// to `pids` at each start ([`recording_pids`]).
fn recorded_ts_server(pids: &std::path::Path) -> tokio::process::Command {
    support::interop::install_clients();
    let root = std::path::Path::new(support::interop::ROOT);
    let mut command = recording_pids(pids, "node".as_ref());
    command
        .arg(root.join("tests/interop/ts_server.mjs"))
        .current_dir(root)
        .env("MCP_INTEROP_NODE_DIR", root.join(".interop/node"));
    command
}

/// `program` (arguments to be added), started through a shell that appends its pid to `pids`
/// first, and fails to start (exit 3) while `pids.stop` exists ([`Scratch::stop_starts`]).
fn recording_pids(pids: &std::path::Path, program: &std::ffi::OsStr) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(r#"echo $$ >> "$0"; [ -e "$0.stop" ] && exit 3; exec "$@""#)
        .arg(pids)
        .arg(program);
    command
}

/// A directory of its own for a test's pid file, removed on drop.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mcp-compose-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn pids(&self) -> std::path::PathBuf {
        self.0.join("pids")
    }

    /// The pids of the upstream processes started so far, in order.
    fn started(&self) -> Vec<u32> {
        std::fs::read_to_string(self.pids())
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect()
    }

    /// While it exists, an upstream start fails.
    fn stop_starts(&self, stop: bool) {
        let flag = self.0.join("pids.stop");
        if stop {
            std::fs::write(flag, b"").unwrap();
        } else {
            std::fs::remove_file(flag).unwrap();
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {pid}");
}

/// Whether process `pid` still exists (a zombie, exited but not yet waited for, counts).
fn exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn sum_of(r: &mcp_runtime::testing::ToolResponse) -> Value {
    serde_json::from_str(&r.text()).unwrap_or_else(|_| panic!("{}", r.raw))
}

/// Before: an upstream that died failed every request from then on. Now the request it died
/// under says so, the next one starts it again, and failed starts back off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_upstream_that_dies_is_reported_and_started_again() {
    let scratch = Scratch::new("respawn");
    let builder = Client::builder()
        .stderr(Stderr::Null)
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::spawn(builder, recorded_ts_server(&scratch.pids()))
        .await
        .unwrap()
        .upstream_sessions(UpstreamSessions::Shared);
    assert_eq!(scratch.started().len(), 1);
    let server = proxy.server().build().unwrap();
    // The upstream's `greet` asks the client for a name: this client kills the upstream
    // process as it answers, so that the call is waiting on a server that is gone.
    let pids = scratch.pids();
    let answer: mcp_runtime::testing::Answer = Arc::new(move |_: &str, _: &Value| {
        let last = std::fs::read_to_string(&pids).unwrap();
        kill(last.lines().last().unwrap().trim().parse().unwrap());
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    });
    let client = answering(server, ProtocolVersion::V2025_11_25, answer).await;
    let add = |a: i64| client.call_tool("add", json!({"a": a, "b": 1}));
    assert_eq!(sum_of(&add(1).await.unwrap()), json!({"result": 2}));

    // Died under a call: a clear error, which says what comes next.
    let e = client.call_tool("greet", json!({})).await.unwrap_err();
    assert_eq!(e.code.0, -32603, "{e:?}");
    assert!(e.message.contains("exited"), "{}", e.message);
    assert!(
        e.message.contains("the next request connects to it again"),
        "{}",
        e.message
    );
    // The next request starts it again.
    assert_eq!(sum_of(&add(2).await.unwrap()), json!({"result": 3}));
    let started = scratch.started();
    assert_eq!(started.len(), 2, "{started:?}");
    wait_until("the dead upstream reaped", || !exists(started[0])).await;

    // It dies again, and cannot be started: the requests fail at once while the proxy waits
    // between attempts (100 ms, doubling).
    scratch.stop_starts(true);
    client.call_tool("greet", json!({})).await.unwrap_err();
    let e = add(3).await.unwrap_err();
    assert!(
        e.message.contains("could not reconnect")
            && e.message.contains("next attempt is in 100 ms"),
        "{}",
        e.message
    );
    let e = add(4).await.unwrap_err();
    assert!(
        e.message.contains("unavailable") && e.message.contains("next attempt"),
        "{}",
        e.message
    );
    let tries = scratch.started().len();
    assert!((3..=4).contains(&tries), "{tries} starts");

    // Once it can start again, a request gets through (after the wait).
    scratch.stop_starts(false);
    let mut failures = 0;
    let r = loop {
        match add(5).await {
            Ok(r) => break r,
            Err(e) => {
                assert!(e.message.contains("next attempt"), "{}", e.message);
                failures += 1;
                assert!(failures < 1500, "never reconnected");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    assert_eq!(sum_of(&r), json!({"result": 6}));
    // Attempts were spaced, not one per request.
    let tries = scratch.started().len();
    assert!(tries <= 10, "{tries} starts for {failures} failed requests");
}

/// Before: every client in front shared the one upstream session. Now a stateful upstream
/// (a session-era stdio server) gets a process per client session, each ended with its
/// client's session; at the bound, the session idle the longest gives its place up, and a new
/// session is refused only while every one has a request running; 2026-07-28 requests share
/// one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_upstream_gets_a_session_per_client_session_ended_with_it() {
    let scratch = Scratch::new("sessions");
    let builder = Client::builder()
        .stderr(Stderr::Null)
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::spawn(builder, recorded_ts_server(&scratch.pids()))
        .await
        .unwrap()
        .max_upstream_sessions(2);
    let server = proxy.server().build().unwrap();
    let url = served_here(server).await;
    assert_eq!(scratch.started().len(), 1, "the shared connection");

    let session = |name: &'static str| {
        Client::builder()
            .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
            .request_timeout(Duration::from_secs(20))
            .on_elicitation(move |_| async move {
                Ok(mcp_runtime::client::ElicitResult::accept(
                    json!({"name": name}),
                ))
            })
            .connect(&url)
    };
    let a = session("Ada").await.unwrap();
    let b = session("Bob").await.unwrap();
    for (client, want) in [(&a, 3), (&b, 4)] {
        let sum: Value = client
            .call_tool_as("add", json!({"a": want - 1, "b": 1}))
            .await
            .unwrap();
        assert_eq!(sum, json!({"result": want}));
    }
    let started = scratch.started();
    assert_eq!(started.len(), 3, "one upstream per session: {started:?}");
    // Each session's upstream asks its own client.
    for (client, want) in [(&b, "Hello, Bob!"), (&a, "Hello, Ada!")] {
        let r = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(
            r.content,
            [mcp_runtime::protocol::Content::text(want)],
            "{r:?}"
        );
    }

    // A 2026-07-28 client has no session: the shared connection serves it.
    let stateless = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .request_timeout(Duration::from_secs(20))
        .connect(&url)
        .await
        .unwrap();
    let tools = stateless.list_tools().await.unwrap();
    assert_eq!(tools.len(), 4);
    assert_eq!(scratch.started().len(), 3);

    // Past the bound, a new session takes the place of the one idle the longest (`b`: `a`
    // greeted last), whose upstream process goes.
    let c = session("Cy").await.unwrap();
    let sum: Value = c
        .call_tool_as("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(sum, json!({"result": 2}));
    assert_eq!(scratch.started().len(), 4);
    wait_until("the idle session's upstream exits", || !exists(started[2])).await;
    assert!(exists(started[1]) && exists(started[0]));

    // A session that ends takes its upstream process with it.
    a.close().await;
    wait_until("the ended session's upstream exits", || !exists(started[1])).await;

    // When every upstream session has a request running, a new session is refused, saying
    // why. `d` and `e` each wait in `greet` for an answer that this test holds back.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (entered, mut asked) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let held = |name: &'static str| {
        let (gate, entered) = (gate.clone(), entered.clone());
        Client::builder()
            .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
            .request_timeout(Duration::from_secs(30))
            .on_elicitation(move |_| {
                let (gate, entered) = (gate.clone(), entered.clone());
                async move {
                    entered.send(name).unwrap();
                    gate.acquire().await.unwrap().forget();
                    Ok(mcp_runtime::client::ElicitResult::accept(
                        json!({"name": name}),
                    ))
                }
            })
            .connect(&url)
    };
    let (d, e) = (held("Di").await.unwrap(), held("Ed").await.unwrap());
    let greets = tokio::spawn(async move {
        let (d_greet, e_greet) = tokio::join!(
            d.call_tool("greet", json!({})),
            e.call_tool("greet", json!({}))
        );
        for (client, r) in [(&d, d_greet), (&e, e_greet)] {
            let r = r.unwrap();
            assert!(
                matches!(&r.content[..], [mcp_runtime::protocol::Content::Text { text, .. }] if text.starts_with("Hello, ")),
                "{r:?}"
            );
            client.close().await;
        }
    });
    let mut waiting = vec![asked.recv().await.unwrap(), asked.recv().await.unwrap()];
    waiting.sort();
    assert_eq!(waiting, ["Di", "Ed"]);
    let f = session("Fay").await.unwrap();
    match f.call_tool("add", json!({"a": 1, "b": 1})).await {
        Err(mcp_runtime::client::ClientError::Rpc(e)) => assert!(
            e.message.contains("2 at most") && e.message.contains("request running"),
            "{}",
            e.message
        ),
        other => panic!("{other:?}"),
    }
    gate.add_permits(2);
    greets.await.unwrap();
    // Their sessions ended: `f` gets one now.
    let sum: Value = f
        .call_tool_as("add", json!({"a": 2, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum, json!({"result": 4}));
    for client in [b, c, f, stateless] {
        client.close().await;
    }
    for pid in &scratch.started()[1..] {
        wait_until("every session's upstream exits", || !exists(*pid)).await;
    }
    assert!(exists(started[0]), "the shared connection stays");
}

/// `mcp-bridge serve` keeps a process per client session by default (the TypeScript SDK's
/// stdio server is stateful), and one for all with `--upstream-sessions shared`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_opens_an_upstream_per_session_unless_told_to_share() {
    for (options, processes) in [(&[][..], 3), (&["--upstream-sessions", "shared"][..], 1)] {
        let scratch = Scratch::new(&format!("bridge-{processes}"));
        let upstream = recorded_ts_server(&scratch.pids());
        let mut args: Vec<String> = vec!["serve".into(), "--http".into()];
        args.push("127.0.0.1:0".into());
        args.extend(options.iter().map(|o| o.to_string()));
        args.push("--".into());
        args.push("sh".into());
        let std = upstream.as_std();
        args.extend(std.get_args().map(|a| a.to_string_lossy().into_owned()));
        let bridge = start_bridge(&args).await;
        let url = format!("http://127.0.0.1:{}/mcp", bridge.port);
        let mut clients = Vec::new();
        for _ in 0..2 {
            let client = Client::builder()
                .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
                .request_timeout(Duration::from_secs(20))
                .connect(&url)
                .await
                .unwrap();
            let sum: Value = client
                .call_tool_as("add", json!({"a": 1, "b": 1}))
                .await
                .unwrap();
            assert_eq!(sum, json!({"result": 2}));
            clients.push(client);
        }
        assert_eq!(scratch.started().len(), processes, "{options:?}");
        for client in clients {
            client.close().await;
        }
    }
}

/// The weather server alone over Streamable HTTP on `port` (0: a free one), on a runtime of
/// its own that goes (and its connections with it) when this is dropped.
struct WeatherHttp {
    port: u16,
    /// The server's catalog, to announce changes with.
    catalog: mcp_runtime::catalog::Catalog,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WeatherHttp {
    fn start(port: u16) -> WeatherHttp {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                    .await
                    .unwrap();
                let server = Server::builder()
                    .name("weather-upstream")
                    .item_filter(in_weather)
                    .build()
                    .unwrap();
                let port = listener.local_addr().unwrap().port();
                tx.send((port, server.catalog().clone())).unwrap();
                tokio::select! {
                    _ = serve_http_on(server, listener, HttpConfig::new("127.0.0.1:0")) => {}
                    _ = stopped => {}
                }
            });
        });
        let (port, catalog) = rx.recv().unwrap();
        WeatherHttp {
            port,
            catalog,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for WeatherHttp {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let _ = self.thread.take().map(std::thread::JoinHandle::join);
    }
}

/// Before: a proxy whose HTTP upstream restarted failed every request from then on. Now the
/// request that finds it gone says so, the next one connects again (backing off while it
/// cannot), and one that finds its session forgotten (the upstream restarted in between)
/// likewise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_upstream_that_restarts_is_connected_to_again() {
    let upstream = WeatherHttp::start(0);
    let (port, url) = (upstream.port, upstream.url());
    let builder = Client::builder()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect(builder, &url).await.unwrap();
    let server = proxy.server().build().unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let forecast = || client.call_tool("forecast", json!({"city": "Kyiv"}));
    assert_eq!(forecast().await.unwrap().text(), "sunny in Kyiv");

    drop(upstream);
    let e = forecast().await.unwrap_err();
    assert_eq!(e.code.0, -32603, "{e:?}");
    assert!(
        e.message.contains("the next request connects to it again"),
        "{}",
        e.message
    );
    let e = forecast().await.unwrap_err();
    assert!(e.message.contains("could not reconnect"), "{}", e.message);

    let upstream = WeatherHttp::start(port);
    let mut tries = 0;
    loop {
        match forecast().await {
            Ok(r) => break assert_eq!(r.text(), "sunny in Kyiv"),
            Err(e) => {
                assert!(e.message.contains("next attempt"), "{}", e.message);
                tries += 1;
                assert!(tries < 1500, "never reconnected");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    // Restarted between two requests: the session is unknown there (404), said once.
    drop(upstream);
    let _upstream = WeatherHttp::start(port);
    let e = forecast().await.unwrap_err();
    assert!(
        e.message.contains("the next request connects to it again"),
        "{}",
        e.message
    );
    assert_eq!(forecast().await.unwrap().text(), "sunny in Kyiv");
}

/// Before: the gateway served an HTTP+SSE upstream through `Proxy::new`: never connected to
/// again once its stream ended, and its asks answered by the gateway's own client instead of
/// the client in front. `Proxy::connect_sse` passes the asks on and connects again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_upstream_passes_its_asks_on_and_is_connected_to_again() {
    let upstream = WeatherHttp::start(0);
    let port = upstream.port;
    let url = format!("http://127.0.0.1:{port}/sse");
    let builder = Client::builder().request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect_sse(builder, &url).await.unwrap();
    assert_eq!(proxy.client().era(), ProtocolEra::Session);
    let server = proxy.server().build().unwrap();
    let client = answering(server, ProtocolVersion::V2025_11_25, ada()).await;
    let greet = || client.call_tool("greet", json!({}));
    assert_eq!(greet().await.unwrap().text(), "hello Ada");

    // The stream ends with the server: requests fail, saying what comes next.
    drop(upstream);
    let e = greet().await.unwrap_err();
    assert_eq!(e.code.0, -32603, "{e:?}");
    assert!(
        e.message.contains("connects to it again") || e.message.contains("reconnect"),
        "{}",
        e.message
    );
    let _upstream = WeatherHttp::start(port);
    let mut tries = 0;
    loop {
        match greet().await {
            Ok(r) => break assert_eq!(r.text(), "hello Ada"),
            Err(e) => {
                assert!(
                    e.message.contains("next attempt")
                        || e.message.contains("connects to it again"),
                    "{}",
                    e.message
                );
                tries += 1;
                assert!(tries < 1500, "never reconnected");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Announces `uri` updated on `upstream` until a client sees it (the upstream announces it only
/// once it holds the subscription, which the proxy makes in the background).
async fn until_updated(client: &TestClient, upstream: &WeatherHttp, uri: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        upstream.catalog.resource_updated(uri);
        tokio::time::sleep(Duration::from_millis(20)).await;
        if client
            .take_notifications()
            .iter()
            .any(|n| n["method"] == "notifications/resources/updated" && n["params"]["uri"] == uri)
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no update of {uri} after 30 s"
        );
    }
}

/// A client's resource subscription holds across a reconnection: the proxy subscribes again on
/// the new upstream connection (the shared one, or the client session's own; a 2026-07-28
/// upstream's on a listen stream of the new connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_made_again_on_a_new_upstream_connection() {
    let session_era = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);
    for (era, sessions) in [
        (session_era, UpstreamSessions::Shared),
        (session_era, UpstreamSessions::Auto),
        (ProtocolChoice::Stateless, UpstreamSessions::Auto),
    ] {
        let upstream = WeatherHttp::start(0);
        let builder = Client::builder()
            .protocol(era)
            .request_timeout(Duration::from_secs(20));
        let proxy = Proxy::connect(builder, &upstream.url())
            .await
            .unwrap()
            .upstream_sessions(sessions);
        let server = proxy.server().build().unwrap();
        let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
            .await
            .unwrap();
        let forecast = || client.call_tool("forecast", json!({"city": "Rome"}));
        forecast().await.unwrap();
        client
            .request("resources/subscribe", json!({"uri": "weather://current"}))
            .await
            .unwrap();
        until_updated(&client, &upstream, "weather://current").await;

        let port = upstream.port;
        drop(upstream);
        let upstream = WeatherHttp::start(port);
        // The first request finds the connection gone, the next one connects again.
        let mut tries = 0;
        while forecast().await.is_err() {
            tries += 1;
            assert!(tries < 1500, "{sessions:?}: never reconnected");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        until_updated(&client, &upstream, "weather://current").await;
    }
}

/// `examples/context.rs` over stdio, its pid appended to `pids` at each start.
fn recorded_context_server(pids: &std::path::Path) -> tokio::process::Command {
    recording_pids(pids, support::example("context").as_os_str())
}

/// Calls `tool` through the proxy until the client in front hears `method` (an upstream's
/// announcement reaches it only once the proxy's listen stream is open upstream, which it
/// opens in the background).
async fn until_heard(
    client: &TestClient,
    tool: &str,
    mut args: impl FnMut() -> Value,
    method: &str,
) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        // A call may meet the upstream dead or being started again: the next one is tried.
        let _ = client.call_tool(tool, args()).await;
        if client
            .take_notifications()
            .iter()
            .any(|n| n["method"] == method)
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {method} after 30 s of {tool} calls"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Before: a 2026-07-28 upstream started again (a spawned server that died) was sent
/// `resources/subscribe`, which its era does not have, and the listen streams of the proxy
/// (a resource subscription's, and the one for list changes) stayed with the dead connection:
/// the clients in front heard nothing from the new process. Now the streams follow the link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_respawned_2026_upstream_keeps_the_subscriptions_and_list_changes() {
    let scratch = Scratch::new("respawn-2026");
    let builder = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .stderr(Stderr::Null)
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::spawn(builder, recorded_context_server(&scratch.pids()))
        .await
        .unwrap();
    assert_eq!(proxy.client().era(), ProtocolEra::Stateless);
    let server = proxy.server().build().unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    client
        .request("resources/subscribe", json!({"uri": "notes://board"}))
        .await
        .unwrap();
    let pin = || json!({"text": "hello"});
    // Each call switches `beta_feature` the other way, so that the calls keep changing the
    // list until the proxy's listen stream is there to hear it.
    let mut beta = false;
    let mut toggle = move || {
        beta = !beta;
        json!({"enabled": beta})
    };
    let updated = "notifications/resources/updated";
    let tools_changed = "notifications/tools/list_changed";
    until_heard(&client, "pin_note", pin, updated).await;
    until_heard(&client, "set_beta", &mut toggle, tools_changed).await;

    let first = scratch.started();
    assert_eq!(first.len(), 1, "{first:?}");
    kill(first[0]);
    wait_until("the dead upstream reaped", || !exists(first[0])).await;
    client.take_notifications();
    until_heard(&client, "pin_note", pin, updated).await;
    until_heard(&client, "set_beta", &mut toggle, tools_changed).await;
    let started = scratch.started();
    assert_eq!(started.len(), 2, "started once again: {started:?}");
}

/// The weather server over Streamable HTTP (see [`served_over_http`]), with a layer that
/// records each `resources/subscribe`, `resources/unsubscribe` and `tools/call` it is sent.
struct RecordingWeather {
    url: String,
    /// Each request's method and `uri`.
    seen: Arc<Seen>,
    /// The `Mcp-Session-Id` each of them came with, in the same order.
    sessions: Arc<Mutex<Vec<String>>>,
    /// The server's catalog, to announce updates with.
    catalog: mcp_runtime::catalog::Catalog,
}

fn weather_recording_subscriptions() -> RecordingWeather {
    let seen: Arc<Seen> = Arc::default();
    let sessions: Arc<Mutex<Vec<String>>> = Arc::default();
    let (record, record_sessions) = (seen.clone(), sessions.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    let url = served_over_http(move || {
        let server = Server::builder()
            .name("weather-upstream")
            .item_filter(in_weather)
            .middleware(middleware::from_fn(move |req: McpRequest, next: Next| {
                if req.method().ends_with("subscribe") || req.method() == "tools/call" {
                    let uri = req.params()["uri"].as_str().unwrap_or("").to_owned();
                    let session = req
                        .headers()
                        .and_then(|h| h.get("mcp-session-id"))
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    // Both under `seen`'s lock, so that they stay in step.
                    let mut seen = record.lock().unwrap();
                    seen.push((req.method().to_owned(), uri));
                    record_sessions.lock().unwrap().push(session);
                }
                next.run(req)
            }))
            .build()
            .unwrap();
        tx.send(server.catalog().clone()).unwrap();
        server
    });
    RecordingWeather {
        url,
        seen,
        sessions,
        catalog: rx.recv().unwrap(),
    }
}

/// Methods an upstream was sent, each with its `uri` param.
type Seen = Mutex<Vec<(String, String)>>;

/// Waits (bounded) until `seen` holds `n` entries; returns them.
async fn recorded<T: Clone + std::fmt::Debug>(seen: &Mutex<Vec<T>>, n: usize) -> Vec<T> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let now = seen.lock().unwrap().clone();
        if now.len() >= n {
            return now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the upstream saw only {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A client's `resources/unsubscribe` reaches the upstream once no client in front of the
/// connection still wants the URI's updates: on a shared upstream connection, after the last
/// of two clients unsubscribes (the first one's leaves the subscription alone); on a client
/// session's own connection, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubscription_reaches_the_upstream_when_the_last_client_in_front_unsubscribes() {
    let uri = json!({"uri": "weather://current"});
    for sessions in [UpstreamSessions::Shared, UpstreamSessions::PerSession] {
        let RecordingWeather { url, seen, .. } = weather_recording_subscriptions();
        let builder = Client::builder()
            .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
            .request_timeout(Duration::from_secs(20));
        let proxy = Proxy::connect(builder, &url)
            .await
            .unwrap()
            .upstream_sessions(sessions);
        let server = proxy.server().build().unwrap();
        let first = TestClient::connect_to(server.clone(), ProtocolVersion::V2025_11_25)
            .await
            .unwrap();
        let second = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
            .await
            .unwrap();
        // A call first: a client session's own upstream connection is opened by its first
        // request that needs the upstream.
        for client in [&first, &second] {
            client
                .call_tool("forecast", json!({"city": "Oslo"}))
                .await
                .unwrap();
        }
        recorded(&seen, 2).await;
        seen.lock().unwrap().clear();
        // Each step waits for what it sends upstream, if anything.
        let per_session = sessions == UpstreamSessions::PerSession;
        let mut expected = vec![];
        let steps = [
            (&first, "resources/subscribe", true),
            (&second, "resources/subscribe", per_session),
            (&first, "resources/unsubscribe", per_session),
            (&second, "resources/unsubscribe", true),
        ];
        for (client, method, sent) in steps {
            client.request(method, uri.clone()).await.unwrap();
            if sent {
                expected.push((method.to_owned(), "weather://current".to_owned()));
                recorded(&seen, expected.len()).await;
            }
        }
        // A call after them is the barrier: what the upstream saw before it is all the
        // unsubscriptions sent it.
        first
            .call_tool("forecast", json!({"city": "Rome"}))
            .await
            .unwrap();
        let mut got = recorded(&seen, expected.len() + 1).await;
        while got.last().map(|(m, _)| m.as_str()) != Some("tools/call") {
            got = recorded(&seen, got.len() + 1).await;
        }
        got.pop();
        assert_eq!(got, expected, "{sessions:?}");
    }
}

/// Before: a client session whose first request needing the upstream was a subscription
/// subscribed through the shared upstream connection, and its unsubscription, after a call had
/// opened the session's own connection, went to that one, which held nothing: the upstream
/// was never told. Now the subscription opens the session's connection and is made there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_before_any_call_is_made_on_the_sessions_own_upstream_connection() {
    let RecordingWeather {
        url,
        seen,
        sessions,
        ..
    } = weather_recording_subscriptions();
    let builder = Client::builder()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect(builder, &url)
        .await
        .unwrap()
        .upstream_sessions(UpstreamSessions::PerSession);
    let shared = proxy
        .client()
        .session_id()
        .expect("a session-era upstream session");
    let server = proxy.server().build().unwrap();
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let uri = json!({"uri": "weather://current"});
    client
        .request("resources/subscribe", uri.clone())
        .await
        .unwrap();
    recorded(&seen, 1).await;
    client
        .call_tool("forecast", json!({"city": "Oslo"}))
        .await
        .unwrap();
    client
        .request("resources/unsubscribe", uri.clone())
        .await
        .unwrap();
    // The proxy tells the upstream in the background: waited for.
    let got = recorded(&seen, 3).await;
    let methods: Vec<&str> = got.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        methods,
        ["resources/subscribe", "tools/call", "resources/unsubscribe"],
        "{got:?}"
    );
    // All through the session's own upstream session, not the shared one.
    let sessions = sessions.lock().unwrap().clone();
    let own = &sessions[0];
    assert!(
        !own.is_empty() && *own != shared,
        "{sessions:?} (shared {shared})"
    );
    assert!(sessions.iter().all(|s| s == own), "{sessions:?}");
}

/// Before: on a shared upstream connection, a client session that ended without unsubscribing
/// (closed, expired) stayed counted among the URI's subscribers, and the upstream stayed
/// subscribed for good. Now its end counts as its unsubscription.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_ends_subscribed_unsubscribes_the_shared_upstream_connection() {
    let RecordingWeather {
        url: upstream,
        seen,
        ..
    } = weather_recording_subscriptions();
    let builder = Client::builder()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect(builder, &upstream)
        .await
        .unwrap()
        .upstream_sessions(UpstreamSessions::Shared);
    let url = served_here(proxy.server().build().unwrap()).await;
    let session = || {
        Client::builder()
            .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
            .request_timeout(Duration::from_secs(20))
            .connect(&url)
    };
    let (first, second) = (session().await.unwrap(), session().await.unwrap());
    first.subscribe("weather://current").await.unwrap();
    second.subscribe("weather://current").await.unwrap();
    let subscribed = (
        "resources/subscribe".to_owned(),
        "weather://current".to_owned(),
    );
    assert_eq!(recorded(&seen, 1).await, [subscribed]);
    // The first session ends (DELETE): the second still wants the updates.
    first.close().await;
    second
        .call_tool("forecast", json!({"city": "Oslo"}))
        .await
        .unwrap();
    let got = recorded(&seen, 2).await;
    assert_eq!(got[1].0, "tools/call", "{got:?}");
    // The second ends too: the upstream is unsubscribed.
    second.close().await;
    let got = recorded(&seen, 3).await;
    let unsubscribed = (
        "resources/unsubscribe".to_owned(),
        "weather://current".to_owned(),
    );
    assert_eq!(got[2], unsubscribed, "{got:?}");
}

/// Before: a 2026-07-28 client's `subscriptions/listen` asking for a proxied resource's
/// updates never reached the proxy's source: a session-era upstream, never subscribed, sent
/// none. Now the stream subscribes upstream for as long as it lasts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_subscribes_to_a_proxied_resource_upstream_while_it_lasts() {
    let RecordingWeather {
        url: upstream,
        seen,
        catalog,
        ..
    } = weather_recording_subscriptions();
    let builder = Client::builder()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect(builder, &upstream).await.unwrap();
    let url = served_here(proxy.server().build().unwrap()).await;
    let client = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .request_timeout(Duration::from_secs(20))
        .connect(&url)
        .await
        .unwrap();
    let uri = "weather://current";
    let mut listen = client
        .listen(json!({ "resourceSubscriptions": [uri] }))
        .await
        .unwrap();
    let subscribed = ("resources/subscribe".to_owned(), uri.to_owned());
    assert_eq!(recorded(&seen, 1).await, [subscribed]);
    // The upstream's updates reach the stream.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        catalog.resource_updated(uri);
        let heard = tokio::time::timeout(Duration::from_millis(100), listen.next()).await;
        if let Ok(Some(n)) = heard
            && n.method == "notifications/resources/updated"
            && n.params["uri"] == uri
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no update of {uri}");
    }
    // The stream ends: the upstream is unsubscribed.
    drop(listen);
    let got = recorded(&seen, 2).await;
    assert_eq!(got[1], ("resources/unsubscribe".to_owned(), uri.to_owned()));
}

// ---- What a proxy passes on as it is (the conformance suite through `mcp-bridge serve`) ----

/// The skills of the upstream (the conformance fixture's).
const UPSTREAM_SKILLS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/conformance/skills"
);

/// The server `make` builds, served alone over Streamable HTTP (both eras) on a free loopback
/// port, on a runtime of its own; its URL.
fn served_over_http(make: impl FnOnce() -> Server + Send + 'static) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let _ = serve_http_on(make(), listener, HttpConfig::new("127.0.0.1:0")).await;
        });
    });
    format!("http://127.0.0.1:{}/mcp", rx.recv().unwrap())
}

/// A client at `version` that answers the server's elicitations with `answer`.
async fn answering(
    server: Server,
    version: ProtocolVersion,
    answer: mcp_runtime::testing::Answer,
) -> TestClient {
    TestClient::connect_answering(server, version, json!({"elicitation": {}}), Some(answer))
        .await
        .unwrap()
}

/// The answer the `greet` tools here want: the name Ada (and nothing asked but elicitations).
fn ada() -> mcp_runtime::testing::Answer {
    Arc::new(|method: &str, _: &Value| {
        assert_eq!(method, "elicitation/create");
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    })
}

/// `server` served over Streamable HTTP on a free port, on the test's own runtime; its URL.
async fn served_here(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(serve_http_on(
        server,
        listener,
        HttpConfig::new("127.0.0.1:0"),
    ));
    url
}

/// `compose/upstream.rs` served alone over Streamable HTTP (see [`served_over_http`]); its URL.
fn upstream_over_http() -> String {
    served_over_http(|| {
        Server::builder()
            .name("upstream")
            .item_filter(in_upstream)
            .skills_dir(UPSTREAM_SKILLS)
            .build()
            .unwrap()
    })
}

/// A proxy (asks passed on to the clients in front) to `compose/upstream.rs` over HTTP,
/// reached in 2026-07-28, served alone.
async fn proxied_2026_upstream() -> Server {
    let builder = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect(builder, &upstream_over_http())
        .await
        .unwrap();
    proxy.server().build().unwrap()
}

/// A 2026-07-28 client in front of a 2026-07-28 upstream gets the upstream's input round as
/// the upstream made it: every request of the round at once, under the upstream's keys (the
/// proxy made rounds of its own, one request each, under keys of its own), with the
/// upstream's `requestState`; the answers go back the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_proxy_passes_the_upstreams_input_rounds_as_they_are() {
    let server = proxied_2026_upstream().await;
    let client = TestClient::connect_answering(
        server,
        ProtocolVersion::V2026_07_28,
        json!({"elicitation": {}, "sampling": {}}),
        None,
    )
    .await
    .unwrap();
    let call = json!({"name": "name_and_greeting", "arguments": {}});
    let round = client.request("tools/call", call.clone()).await.unwrap();
    assert_eq!(round["resultType"], "input_required", "{round}");
    let asked = round["inputRequests"].as_object().unwrap();
    let mut keys: Vec<_> = asked.keys().cloned().collect();
    keys.sort();
    assert_eq!(keys, ["greeting", "user_name"], "{round}");
    assert_eq!(asked["user_name"]["method"], "elicitation/create");
    assert_eq!(asked["greeting"]["method"], "sampling/createMessage");
    let state = round["requestState"].clone();
    assert!(state.is_string(), "{round}");
    let mut retry = call;
    retry["requestState"] = state;
    retry["inputResponses"] = json!({
        "user_name": {"action": "accept", "content": {"name": "Ada"}},
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hello"},
                     "model": "m", "stopReason": "endTurn"},
    });
    let done = client.request("tools/call", retry).await.unwrap();
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["content"][0]["text"], "Hello Ada");
}

/// The upstream judges what the client in front can do: it sees that client's capabilities
/// (from each 2026-07-28 request, from a session's `initialize`), not the proxy's own (which
/// declares every ask it can pass on), so it refuses with -32021 what the client cannot take,
/// and decides task calls by the client's extensions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_capabilities_go_upstream_with_each_call() {
    let server = proxied_2026_upstream().await;
    for (version, caps) in [
        (
            ProtocolVersion::V2025_11_25,
            json!({"roots": {"listChanged": true}}),
        ),
        (
            ProtocolVersion::V2026_07_28,
            json!({"elicitation": {"form": {}}}),
        ),
        (ProtocolVersion::V2026_07_28, json!({})),
    ] {
        let client = TestClient::connect_answering(server.clone(), version, caps.clone(), None)
            .await
            .unwrap();
        let r = client.call_tool("client_caps", json!({})).await.unwrap();
        let seen: Value = serde_json::from_str(&r.text()).unwrap();
        assert_eq!(seen, caps, "{version}");
        // The upstream asks only what the client declared; with nothing to ask, it refuses
        // with -32021, as it would refuse that client directly.
        let asked = client.call_tool("name_and_greeting", json!({})).await;
        if caps.get("elicitation").is_some() {
            let round = asked.unwrap().raw;
            let keys: Vec<_> = round["inputRequests"].as_object().unwrap().keys().collect();
            assert_eq!(keys, ["user_name"], "{round}");
        } else {
            let e = asked.unwrap_err();
            assert_eq!(e.code.0, -32021, "{version}: {}", e.message);
        }
    }
}

/// Task-augmented calls pass through: the upstream's tasks extension is declared, its
/// `CreateTaskResult` reaches the client (with the task's `ttlMs`), and `tasks/get` of its
/// task goes to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_calls_pass_through_a_proxy() {
    let server = proxied_2026_upstream().await;
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let client = TestClient::connect_answering(server, ProtocolVersion::V2026_07_28, tasks, None)
        .await
        .unwrap();
    let discovered = client.request("server/discover", json!({})).await.unwrap();
    assert!(
        discovered["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{discovered}"
    );
    let created = client
        .request("tools/call", json!({"name": "job", "arguments": {}}))
        .await
        .unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created["ttlMs"].is_u64(), "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    upstream::JOB_MAY_FINISH.notify_one();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let task = client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(task["taskId"], id.as_str(), "{task}");
        if task["status"] == "completed" {
            assert_eq!(task["result"]["content"][0]["text"], "job done", "{task}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{task}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A task the upstream does not know is its error, as it sent it.
    let e = client
        .request("tasks/get", json!({"taskId": "no-such-task"}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32602, "{}", e.message);
}

/// On 2026-07-28 HTTP, the `Mcp-Param-*` headers of a proxied tool's `x-mcp-header`
/// arguments are checked against its arguments as the server's own tools' are (the upstream,
/// reached over HTTP, gets them from the proxy's client too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_tools_mcp_param_headers_are_checked() {
    let server = proxied_2026_upstream().await;
    let url = served_here(server).await;
    let client = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .request_timeout(Duration::from_secs(20))
        .connect(&url)
        .await
        .unwrap();
    // The client lists the tool, then sends the header its argument asks for.
    let r = client
        .call_tool("in_region", json!({"region": "eu-west"}))
        .await
        .unwrap();
    assert_eq!(
        r.content,
        [mcp_runtime::protocol::Content::text("served in eu-west")]
    );
    // A header that says otherwise than the body is refused.
    let lying = Client::builder()
        .protocol(ProtocolChoice::Stateless)
        .request_timeout(Duration::from_secs(20))
        .header("Mcp-Param-Region", "us-east")
        .connect(&url)
        .await
        .unwrap();
    let e = lying
        .call_tool("in_region", json!({"region": "eu-west"}))
        .await
        .unwrap_err();
    match e {
        mcp_runtime::client::ClientError::Rpc(e) => assert_eq!(e.code.0, -32020, "{}", e.message),
        other => panic!("not refused with -32020: {other}"),
    }
}

/// A 2026-07-28 upstream announces list changes only on `subscriptions/listen` streams: the
/// proxy keeps one open, and its clients hear them (a session's, here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstreams_list_changes_reach_the_clients_in_front() {
    let server = proxied_2026_upstream().await;
    let client = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    // The listen stream opens upstream as the proxy is served; a change announced before it
    // is acknowledged would be lost, so the trigger is called until one is heard.
    let tools_changed = "notifications/tools/list_changed";
    until_heard(&client, "change_tools", || json!({}), tools_changed).await;
}

/// The skills of an upstream served alone through a proxy (SEP-2640): the extension as the
/// upstream declares it, `skills/list`, `skills/get`, `resources/directory/read`, and the
/// skill files read as resources, in both eras.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_servers_skills_pass_through() {
    let server = proxied_2026_upstream().await;
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let client = TestClient::connect_to(server.clone(), version)
            .await
            .unwrap();
        if version == ProtocolVersion::V2026_07_28 {
            let discovered = client.request("server/discover", json!({})).await.unwrap();
            assert_eq!(
                discovered["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
                json!({"directoryRead": true}),
                "{discovered}"
            );
        }
        let listed = client.request("skills/list", json!({})).await.unwrap();
        let skills = listed["skills"].as_array().unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
        assert!(
            uris.contains(&"skill://pdf-processing/SKILL.md"),
            "{version}: {listed}"
        );
        let got = client
            .request(
                "skills/get",
                json!({"uri": "skill://pdf-processing/SKILL.md"}),
            )
            .await
            .unwrap();
        assert_eq!(
            got["skill"]["uri"], "skill://pdf-processing/SKILL.md",
            "{got}"
        );
        let read = client
            .request(
                "resources/read",
                json!({"uri": "skill://pdf-processing/SKILL.md"}),
            )
            .await
            .unwrap();
        let text = read["contents"][0]["text"].as_str().unwrap();
        assert!(text.contains("name: pdf-processing"), "{version}: {text}");
        let dir = client
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-processing"}),
            )
            .await
            .unwrap();
        assert!(
            dir["resources"].as_array().is_some_and(|r| !r.is_empty()),
            "{dir}"
        );
    }
}

/// One 2026-07-28 POST to `endpoint` as the caller `who` (its `Authorization` header, which
/// binds a `requestState` to its caller), declaring elicitation, sampling and tasks; the
/// JSON-RPC response.
async fn post_as(
    endpoint: support::http::Endpoint,
    who: &str,
    method: &str,
    name: &str,
    mut params: Value,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "sampling": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let body = support::http::rpc(1, method, params);
    let (who, method, name) = (format!("Bearer {who}"), method.to_owned(), name.to_owned());
    tokio::task::spawn_blocking(move || {
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method.as_str()),
            ("Mcp-Name", name.as_str()),
            ("Authorization", who.as_str()),
        ];
        endpoint.post(&body, &headers).json()
    })
    .await
    .unwrap()
}

/// The upstream binds its `requestState` and its tasks to whoever it sees: the proxy. For
/// identified callers, the proxy keeps them each caller's: its own input rounds (bound to the
/// caller) stand in for the upstream's, and a task created for one caller is unknown to
/// another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_proxy_rounds_and_tasks_stay_their_callers() {
    let server = proxied_2026_upstream().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = support::http::Endpoint {
        port: listener.local_addr().unwrap().port(),
    };
    tokio::spawn(serve_http_on(
        server,
        listener,
        HttpConfig::new("127.0.0.1:0"),
    ));
    let call = json!({"name": "name_and_greeting", "arguments": {}});
    let round = post_as(
        endpoint,
        "alice",
        "tools/call",
        "name_and_greeting",
        call.clone(),
    )
    .await;
    let round = &round["result"];
    assert_eq!(round["resultType"], "input_required", "{round}");
    let (key, asked) = round["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let answer = match asked["method"].as_str().unwrap() {
        "elicitation/create" => json!({"action": "accept", "content": {"name": "Ada"}}),
        _ => json!({"role": "assistant", "content": {"type": "text", "text": "Hello"},
                    "model": "m", "stopReason": "endTurn"}),
    };
    let mut retry = call;
    retry["requestState"] = round["requestState"].clone();
    retry["inputResponses"] = json!({ key.as_str(): answer });
    // Alice's state is Alice's: Bob cannot use it.
    let bob = post_as(
        endpoint,
        "bob",
        "tools/call",
        "name_and_greeting",
        retry.clone(),
    )
    .await;
    assert_eq!(bob["error"]["code"], -32602, "{bob}");
    let alice = post_as(endpoint, "alice", "tools/call", "name_and_greeting", retry).await;
    assert!(alice.get("error").is_none(), "{alice}");

    let created = post_as(
        endpoint,
        "alice",
        "tools/call",
        "endless_job",
        json!({"name": "endless_job", "arguments": {}}),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = json!({"taskId": id});
    let bob = post_as(endpoint, "bob", "tasks/get", &id, get.clone()).await;
    assert_eq!(bob["error"]["code"], -32602, "{bob}");
    let alice = post_as(endpoint, "alice", "tasks/get", &id, get).await;
    assert_eq!(alice["result"]["taskId"], id.as_str(), "{alice}");
}

/// Task-augmented calls pass through in the session era too: a 2025-11-25 client in front of a
/// 2025-11-25 upstream gets its task for a call with `task`, and reads and cancels it through
/// the proxy; another session cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_era_task_calls_pass_through_a_proxy() {
    let builder = Client::builder()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .request_timeout(Duration::from_secs(20));
    let proxy = Proxy::connect(builder, &upstream_over_http())
        .await
        .unwrap();
    let server = proxy.server().build().unwrap();
    let client = TestClient::connect_to(server.clone(), ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let created = client
        .request(
            "tools/call",
            json!({"name": "endless_job", "arguments": {}, "task": {}}),
        )
        .await
        .unwrap();
    let id = created["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"));
    // The task is its session's, as the server's own tasks are (the upstream sees one
    // session, the proxy's).
    let other = TestClient::connect_to(server, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    let e = other
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32602, "{}", e.message);
    let task = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(task["taskId"], id, "{task}");
    assert_eq!(task["status"], "working", "{task}");
    client
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .unwrap();
    let task = client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(task["status"], "cancelled", "{task}");
}
