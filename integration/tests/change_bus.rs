//! The change bus joins the `Catalog` handles of several servers (instances of a fleet): a
//! change announced on one reaches the listen streams and session clients of the others, once;
//! a bus that reconnected makes every stream hear that everything it watches changed.
//! `LocalBus` stands in for Redis here (mcp-redis/tests/change_bus.rs runs the same over a real
//! redis-server).

use std::sync::Arc;
use std::time::Duration;

use mcp_runtime::catalog::Catalog;
use mcp_runtime::catalog::{BusInbound, BusMessage, ChangeBus, ChangeEvent, ItemKind, LocalBus};
use mcp_runtime::prelude::*;
use mcp_runtime::registry::BuildError;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// A tool, so that tool list changes concern the server.
#[tool]
fn bus_tool() -> &'static str {
    "here"
}

/// A resource to watch.
#[resource("memo://bus/{name}")]
fn bus_memo(name: String) -> String {
    name
}

/// A prompt, so that prompt list changes concern the server.
#[prompt]
fn bus_prompt() -> String {
    "prompt".into()
}

fn instance(bus: &LocalBus) -> (Catalog, Server) {
    let changes = Catalog::new();
    let server = Server::builder()
        .catalog(changes.clone())
        .change_bus(bus.clone())
        .build()
        .unwrap();
    (changes, server)
}

async fn listen(server: Server, filter: Value) -> (Arc<TestClient>, tokio::task::JoinHandle<()>) {
    let client = Arc::new(
        TestClient::connect_to(server, ProtocolVersion::V2026_07_28)
            .await
            .unwrap(),
    );
    let listener = client.clone();
    let task = tokio::spawn(async move {
        let _ = listener
            .request_with_id(
                7,
                "subscriptions/listen",
                json!({ "notifications": filter }),
            )
            .await;
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ack = client.take_notifications();
    assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged");
    (client, task)
}

async fn methods(client: &TestClient) -> Vec<String> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    client
        .take_notifications()
        .iter()
        .map(|n| n["method"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_change_on_one_instance_reaches_the_listen_streams_of_every_instance_once() {
    let bus = LocalBus::new();
    let (a_changes, a) = instance(&bus);
    let (_b_changes, b) = instance(&bus);
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["memo://bus/x"]});
    let (on_a, _ta) = listen(a, filter.clone()).await;
    let (on_b, _tb) = listen(b, filter).await;

    a_changes.tools_changed();
    a_changes.resource_updated("memo://bus/x");
    a_changes.resource_updated("memo://bus/y"); // watched by nobody
    let expected = [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ];
    assert_eq!(
        methods(&on_a).await,
        expected,
        "the announcing instance: once"
    );
    assert_eq!(methods(&on_b).await, expected, "the other instance: once");
}

#[tokio::test]
async fn session_clients_of_other_instances_hear_list_changes_and_their_updates() {
    let bus = LocalBus::new();
    let (a_changes, _a) = instance(&bus);
    let (_b_changes, b) = instance(&bus);
    let client = TestClient::connect_to(b, ProtocolVersion::V2025_11_25)
        .await
        .unwrap();
    client
        .request("resources/subscribe", json!({"uri": "memo://bus/x"}))
        .await
        .unwrap();
    // Toggling an item is per instance; the list change it announces travels.
    assert!(a_changes.disable(ItemKind::Tool, "bus_tool"));
    a_changes.resource_updated("memo://bus/x");
    assert_eq!(
        methods(&client).await,
        [
            "notifications/tools/list_changed",
            "notifications/resources/updated"
        ]
    );
}

#[tokio::test]
async fn after_a_bus_reconnect_every_stream_hears_that_everything_changed() {
    let bus = LocalBus::new();
    let (_a_changes, a) = instance(&bus);
    let (on_a, _t) = listen(
        a,
        json!({"toolsListChanged": true, "promptsListChanged": true,
               "resourceSubscriptions": ["memo://bus/x", "memo://bus/z"]}),
    )
    .await;
    bus.resync();
    let mut got = methods(&on_a).await;
    got.sort();
    assert_eq!(
        got,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/updated",
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        ],
        "one of each kind asked for, and every watched resource"
    );
}

/// Records what is published; delivers nothing (a bus that lost its connection).
#[derive(Clone, Default)]
struct Recorder(Arc<std::sync::Mutex<Vec<BusMessage>>>);

impl ChangeBus for Recorder {
    fn publish(&self, message: BusMessage) {
        self.0.lock().unwrap().push(message);
    }
    fn attach(&self, _: BusInbound) {}
}

#[tokio::test]
async fn what_travels_is_typed_events_tagged_with_their_origin() {
    let recorder = Recorder::default();
    let changes = Catalog::new();
    changes.attach_bus(recorder.clone()).unwrap();
    assert!(changes.has_bus());
    changes.tools_changed();
    changes.resource_updated("memo://bus/x");
    let sent = recorder.0.lock().unwrap().clone();
    assert_eq!(
        sent,
        [
            BusMessage {
                origin: changes.origin().to_owned(),
                event: ChangeEvent::ToolsListChanged
            },
            BusMessage {
                origin: changes.origin().to_owned(),
                event: ChangeEvent::ResourceUpdated {
                    uri: "memo://bus/x".into()
                }
            },
        ]
    );
    // On the wire: plain JSON, not JSON-RPC.
    assert_eq!(
        serde_json::to_value(&sent[1]).unwrap(),
        json!({"origin": changes.origin(), "event": {"kind": "resource_updated", "uri": "memo://bus/x"}})
    );
    assert_ne!(Catalog::new().origin(), changes.origin());
}

/// Hands its inbound to the test, which delivers by hand.
#[derive(Clone, Default)]
struct Inbound(Arc<std::sync::Mutex<Option<BusInbound>>>);

impl ChangeBus for Inbound {
    fn publish(&self, _: BusMessage) {}
    fn attach(&self, inbound: BusInbound) {
        *self.0.lock().unwrap() = Some(inbound);
    }
}

/// Another instance's `missed` (it dropped changes it could not publish) is a resync here.
#[tokio::test]
async fn another_instances_missed_changes_make_every_stream_refetch() {
    let bus = Inbound::default();
    let server = Server::builder().change_bus(bus.clone()).build().unwrap();
    let (on, _t) = listen(
        server,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["memo://bus/x"]}),
    )
    .await;
    let missed: BusMessage =
        serde_json::from_value(json!({"origin": "another-instance", "event": {"kind": "missed"}}))
            .unwrap();
    assert_eq!(missed.event, ChangeEvent::Missed);
    bus.0.lock().unwrap().as_ref().unwrap().deliver(missed);
    let mut got = methods(&on).await;
    got.sort();
    assert_eq!(
        got,
        [
            "notifications/resources/updated",
            "notifications/tools/list_changed"
        ]
    );
}

#[tokio::test]
async fn a_handle_takes_one_bus() {
    let changes = Catalog::new();
    changes.attach_bus(LocalBus::new()).unwrap();
    assert!(changes.attach_bus(LocalBus::new()).is_err());
    let built = Server::builder()
        .catalog(changes)
        .change_bus(LocalBus::new())
        .build();
    assert!(matches!(built, Err(BuildError::ChangeBusAttached)));
}
