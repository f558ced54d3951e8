//! The request span: one per request, named and attributed per the OpenTelemetry semantic
//! conventions for MCP, with the tool's own events inside it. Captured by a subscriber layer of
//! this test's own (a current-thread runtime, so the thread's default subscriber sees all).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// Tells what the weather is.
#[tool]
async fn weather(city: String) -> String {
    tracing::info!(city = %city, "looking up the weather");
    format!("sunny in {city}")
}

/// Always fails as a tool.
#[tool]
async fn broken() -> Result<String, String> {
    Err("nope".into())
}

/// A span's name and fields.
type SpanRecord = (String, BTreeMap<String, String>);
/// An event's message and the id of its request span, if it has one.
type EventRecord = (String, Option<u64>);

/// What the layer saw: spans by id, and events.
#[derive(Clone, Default)]
struct Captured {
    spans: Arc<Mutex<BTreeMap<u64, SpanRecord>>>,
    events: Arc<Mutex<Vec<EventRecord>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Captured {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let name = attrs.metadata().name().to_owned();
        self.spans
            .lock()
            .unwrap()
            .insert(id.into_u64(), (name, fields));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: LayerContext<'_, S>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: LayerContext<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let request = ctx.event_scope(event).and_then(|scope| {
            scope
                .from_root()
                .find(|s| s.name() == "mcp.request")
                .map(|s| s.id().into_u64())
        });
        let message = fields.remove("message").unwrap_or_default();
        self.events.lock().unwrap().push((message, request));
    }
}

impl Captured {
    /// The fields of the request span whose `otel.name` is `name`.
    fn span(&self, name: &str) -> (u64, BTreeMap<String, String>) {
        let spans = self.spans.lock().unwrap();
        let found = spans.iter().find(|(_, (n, f))| {
            n == "mcp.request" && f.get("otel.name").map(String::as_str) == Some(name)
        });
        let (id, (_, fields)) = found.unwrap_or_else(|| panic!("no span {name:?} in {spans:?}"));
        (*id, fields.clone())
    }
}

fn run(f: impl std::future::Future<Output = ()>) -> Captured {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(captured.clone());
    let _default = tracing::subscriber::set_default(subscriber);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f);
    captured
}

#[test]
fn session_requests_carry_the_conventions_attributes() {
    let captured = run(async {
        let client = TestClient::connect_to(
            Server::builder().build().unwrap(),
            ProtocolVersion::V2025_11_25,
        )
        .await
        .unwrap();
        client
            .call_tool("weather", json!({ "city": "Oslo" }))
            .await
            .unwrap();
        assert!(
            client
                .call_tool("broken", json!({}))
                .await
                .unwrap()
                .is_error()
        );
        assert!(client.call_tool("missing", json!({})).await.is_err());
        client.list_tools().await.unwrap();
    });
    let (id, call) = captured.span("tools/call weather");
    for (key, value) in [
        ("otel.kind", "server"),
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "weather"),
        ("gen_ai.operation.name", "execute_tool"),
        ("jsonrpc.protocol.version", "2.0"),
        ("mcp.protocol.version", "2025-11-25"),
        ("network.transport", "in-process"),
    ] {
        assert_eq!(
            call.get(key).map(String::as_str),
            Some(value),
            "{key}: {call:?}"
        );
    }
    assert!(
        call["jsonrpc.request.id"].parse::<i64>().is_ok(),
        "{call:?}"
    );
    let session = &call["mcp.session.id"];
    assert!(
        session.len() == 16 && session.bytes().all(|b| b.is_ascii_hexdigit()),
        "{call:?}"
    );
    assert!(!call.contains_key("error.type"), "{call:?}");
    // The tool's own event is inside its request's span.
    let events = captured.events.lock().unwrap().clone();
    assert!(
        events.contains(&("looking up the weather".to_owned(), Some(id))),
        "{events:?}"
    );

    let (_, broken) = captured.span("tools/call broken");
    assert_eq!(broken["error.type"], "tool_error");
    let (_, missing) = captured.span("tools/call missing");
    assert_eq!(missing["error.type"], "-32602");
    assert_eq!(missing["rpc.response.status_code"], "-32602");
    let (_, list) = captured.span("tools/list");
    assert!(!list.contains_key("gen_ai.tool.name"), "{list:?}");
    assert_eq!(list["mcp.session.id"], *session, "one session, one id");
    let (_, init) = captured.span("initialize");
    assert_eq!(init["mcp.protocol.version"], "2025-11-25");
}

#[test]
fn stateless_requests_name_their_version_and_no_session() {
    let captured = run(async {
        let client = TestClient::stateless().await;
        client
            .call_tool("weather", json!({ "city": "Lima" }))
            .await
            .unwrap();
    });
    let (_, call) = captured.span("tools/call weather");
    assert_eq!(call["mcp.protocol.version"], "2026-07-28");
    assert!(!call.contains_key("mcp.session.id"), "{call:?}");
}
