//! One `tracing` span per request, named and attributed per the OpenTelemetry semantic
//! conventions for MCP (`docs/gen-ai/mcp.md` in `open-telemetry/semantic-conventions-genai`):
//!
//! - name (`otel.name`): `{mcp.method.name} {target}`, the target being the tool or prompt name
//!   when there is one; kind (`otel.kind`) `server`;
//! - `mcp.method.name`, `jsonrpc.request.id`, `jsonrpc.protocol.version`,
//!   `mcp.protocol.version`, `mcp.session.id` (a digest, never the id itself, which admits to
//!   the session), `mcp.resource.uri`, `gen_ai.tool.name` with `gen_ai.operation.name =
//!   "execute_tool"`, `gen_ai.prompt.name`, `network.transport` (`pipe` for stdio, `tcp` for
//!   HTTP) and `network.protocol.name`;
//! - on failure `error.type` (the JSON-RPC error code, or `tool_error` for a tool result with
//!   `isError`) and `rpc.response.status_code` (the code).
//!
//! The span is at `DEBUG` level under the target `mcp_runtime::request`: a subscriber that does
//! not ask for it pays nothing for it. A tool's own `tracing` events happen inside it.

use tracing::field::Empty;

use super::connection::Connection;
use crate::protocol::params::Request;
use crate::request::{Reply, ReplyKind};

/// The span of one request (disabled, and free, when nothing listens).
pub(super) fn request_span(
    conn: &Connection,
    req: &Request,
    headers: Option<&http::HeaderMap>,
) -> tracing::Span {
    let span = tracing::debug_span!(
        target: "mcp_runtime::request",
        "mcp.request",
        otel.name = Empty,
        otel.kind = "server",
        mcp.method.name = &*req.method,
        jsonrpc.request.id = %req.id,
        jsonrpc.protocol.version = "2.0",
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        mcp.resource.uri = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        gen_ai.operation.name = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    let name = req.params.name();
    let target = match (&*req.method, name) {
        ("tools/call", Some(tool)) => {
            span.record("gen_ai.tool.name", tool);
            span.record("gen_ai.operation.name", "execute_tool");
            Some(tool)
        }
        ("prompts/get", Some(prompt)) => {
            span.record("gen_ai.prompt.name", prompt);
            Some(prompt)
        }
        _ => None,
    };
    match target {
        Some(target) => span.record("otel.name", format!("{} {target}", req.method)),
        None => span.record("otel.name", &*req.method),
    };
    if let Some(uri) = req.params.uri() {
        span.record("mcp.resource.uri", uri);
    }
    match conn.wire.name {
        "stdio" => span.record("network.transport", "pipe"),
        "http" => {
            span.record("network.transport", "tcp");
            span.record("network.protocol.name", "http")
        }
        other => span.record("network.transport", other),
    };
    let session = headers
        .and_then(|h| h.get("mcp-session-id"))
        .map(|v| v.as_bytes().to_vec())
        .or_else(|| {
            conn.session()
                .is_some()
                .then(|| conn.task_owner().into_bytes())
        });
    #[cfg(feature = "opentelemetry")]
    if let Some(meta) = req.params.meta.as_ref() {
        parent_from_meta(&span, meta);
    }
    if let Some(session) = session {
        let digest = hmac_sha256::Hash::hash(&session);
        span.record("mcp.session.id", crate::id::hex(&digest[..8]));
    }
    span
}

/// Makes the W3C trace context in `_meta` (`traceparent`, `tracestate`) the span's parent, so
/// that a trace started by the client continues here. A malformed `traceparent` is ignored.
#[cfg(feature = "opentelemetry")]
fn parent_from_meta(span: &tracing::Span, meta: &crate::protocol::params::RequestMeta) {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let Some(parent) = meta.traceparent.as_ref().and_then(|v| v.as_str()) else {
        return;
    };
    // version "-" trace-id "-" parent-id "-" trace-flags (W3C Trace Context, level 1).
    let parts: Vec<&str> = parent.trim().split('-').collect();
    let [version, trace, id, flags, ..] = parts[..] else {
        return;
    };
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    if !hex(version, 2) || version == "ff" || (version == "00" && parts.len() != 4) {
        return;
    }
    if !hex(trace, 32) || !hex(id, 16) || !hex(flags, 2) {
        return;
    }
    let (Ok(trace), Ok(id), Ok(flags)) = (
        TraceId::from_hex(trace),
        SpanId::from_hex(id),
        u8::from_str_radix(flags, 16),
    ) else {
        return;
    };
    if trace == TraceId::INVALID || id == SpanId::INVALID {
        return;
    }
    let state = meta
        .tracestate
        .as_ref()
        .and_then(|v| v.as_str())
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let context = SpanContext::new(trace, id, TraceFlags::new(flags & 1), true, state);
    let cx = opentelemetry::Context::new().with_remote_span_context(context);
    let _ = span.set_parent(cx);
}

/// Records how the request ended, when it failed.
pub(super) fn record_reply(span: &tracing::Span, reply: &Reply) {
    if let ReplyKind::Error(code) | ReplyKind::Missing(code) = reply.kind {
        let code = code.0.to_string();
        span.record("error.type", &*code);
        span.record("rpc.response.status_code", &*code);
    }
}

/// Records a tool result with `isError` (from inside the request's span).
pub(super) fn record_tool_error() {
    tracing::Span::current().record("error.type", "tool_error");
}
