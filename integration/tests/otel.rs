//! W3C trace context from `_meta` (`traceparent`, `tracestate`) parents the request span, so a
//! trace the client started continues in the tool: exported through tracing-opentelemetry to an
//! in-memory OpenTelemetry exporter. mcp-runtime's `opentelemetry` feature is on in every
//! workspace build (integration/Cargo.toml).

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{ProtocolVersion, Server};
use opentelemetry::trace::{SpanId, SpanKind, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Looks something up, in a span of its own.
#[tool]
async fn lookup(key: String) -> String {
    let _inner = tracing::info_span!("lookup.inner").entered();
    format!("value of {key}")
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

fn exported(
    version: ProtocolVersion,
    meta: serde_json::Value,
) -> Vec<opentelemetry_sdk::trace::SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("otel-test")));
    let _default = tracing::subscriber::set_default(subscriber);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = TestClient::connect_to(Server::builder().build().unwrap(), version)
                .await
                .unwrap();
            // (The stateless client adds its own `_meta` members beside these.)
            let params = json!({ "name": "lookup", "arguments": { "key": "k" }, "_meta": meta });
            let result = client.request("tools/call", params).await.unwrap();
            assert_eq!(result["content"][0]["text"], "value of k");
        });
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

#[test]
fn the_request_span_continues_the_clients_trace() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let spans = exported(
            version,
            json!({ "traceparent": format!("00-{TRACE}-{PARENT}-01"), "tracestate": "vendor=opaque" }),
        );
        let request = spans
            .iter()
            .find(|s| s.name == "tools/call lookup")
            .unwrap_or_else(|| {
                panic!(
                    "{version}: no request span in {:?}",
                    spans.iter().map(|s| &s.name).collect::<Vec<_>>()
                )
            });
        assert_eq!(request.span_kind, SpanKind::Server, "{version}");
        assert_eq!(
            request.span_context.trace_id(),
            TraceId::from_hex(TRACE).unwrap(),
            "{version}"
        );
        assert_eq!(
            request.parent_span_id,
            SpanId::from_hex(PARENT).unwrap(),
            "{version}"
        );
        assert!(request.parent_span_is_remote, "{version}");
        assert_eq!(
            request.span_context.trace_state().get("vendor"),
            Some("opaque")
        );
        let attribute = |key: &str| {
            request
                .attributes
                .iter()
                .find(|kv| kv.key.as_str() == key)
                .map(|kv| kv.value.to_string())
        };
        assert_eq!(attribute("gen_ai.tool.name").as_deref(), Some("lookup"));
        assert_eq!(attribute("mcp.method.name").as_deref(), Some("tools/call"));
        // The tool's own span is a child of the request span, in the same trace.
        let inner = spans
            .iter()
            .find(|s| s.name == "lookup.inner")
            .expect("the tool's span");
        assert_eq!(
            inner.span_context.trace_id(),
            request.span_context.trace_id()
        );
        assert_eq!(inner.parent_span_id, request.span_context.span_id());
    }
}

#[test]
fn a_malformed_traceparent_starts_a_new_trace() {
    for bad in [
        json!("00-zz-00f067aa0ba902b7-01"),
        json!(format!("00-{}-{PARENT}-01", "0".repeat(32))),
        json!(42),
    ] {
        let spans = exported(ProtocolVersion::V2025_11_25, json!({ "traceparent": bad }));
        let request = spans
            .iter()
            .find(|s| s.name == "tools/call lookup")
            .unwrap();
        assert_ne!(
            request.span_context.trace_id(),
            TraceId::from_hex(TRACE).unwrap()
        );
        assert_eq!(
            request.parent_span_id,
            SpanId::INVALID,
            "{bad}: a root span"
        );
    }
}
