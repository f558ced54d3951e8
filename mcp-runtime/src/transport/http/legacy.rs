//! The deprecated HTTP+SSE transport (protocol 2024-11-05): `GET /sse` opens a session and its
//! one stream, announced by an `endpoint` event; `POST /messages?sessionId=…` answers 202 and
//! the response goes on that stream.

use std::sync::Arc;

use http::{HeaderMap, Request, StatusCode};
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::body::{self, HttpResponse};
use super::session::Full;
use super::state::{Shared, read_body};
use super::stream::spawn_stream;
use crate::protocol::McpError;
use crate::server::connection::{Arrival, Step};
use crate::server::dispatch::on_message_with;

pub(crate) fn open(state: &Arc<Shared>, _headers: &HeaderMap) -> HttpResponse {
    let (tx, rx) = mpsc::channel(256);
    let session = match state.sessions.create(&state.server, Some(tx.clone())) {
        Ok(s) => s,
        Err(Full(max)) => {
            return body::error(
                StatusCode::SERVICE_UNAVAILABLE,
                McpError::internal(format!("Too many sessions (limit {max})")),
            );
        }
    };
    *session.conn.standalone.lock().expect("standalone lock") =
        Some(super::stream::standalone_sink(&tx, Some("message")));
    let endpoint = format!("/messages?sessionId={}", session.id);
    let id = session.id.clone();
    let first = body::event(None, Some("endpoint"), endpoint.as_bytes());
    // Listed first, so a POST naming it (after the `endpoint` event) finds it.
    let stream_of = session.clone();
    state.sessions.insert(session);
    // The session lives as long as its stream: when the client goes away, it ends.
    let sessions = state.sessions.clone();
    let watch = tx.clone();
    tokio::spawn(async move {
        watch.closed().await;
        sessions.remove(&id);
        tracing::debug!(session = %id, "legacy SSE session closed");
    });
    spawn_stream(state, tx, &stream_of, Some(first));
    body::sse(rx)
}

pub(crate) async fn post(state: &Arc<Shared>, req: Request<Incoming>) -> HttpResponse {
    let id = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("sessionId=")))
        .map(str::to_owned);
    let Some(session) = id.as_deref().and_then(|id| state.sessions.get(id)) else {
        return body::error(
            StatusCode::NOT_FOUND,
            McpError::invalid_request("Unknown sessionId: open GET /sse first"),
        );
    };
    let Some(stream) = session.legacy.clone() else {
        return body::error(
            StatusCode::NOT_FOUND,
            McpError::invalid_request("Not an HTTP+SSE session"),
        );
    };
    let (parts, incoming) = req.into_parts();
    let bytes = match read_body(incoming, &parts.headers, state.config.max_body_bytes).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let text = String::from_utf8_lossy(&bytes);
    let send = |out: Vec<u8>| {
        let stream = stream.clone();
        async move {
            let _ = stream.send(body::event(None, Some("message"), &out)).await;
        }
    };
    // Notifications (progress, logs) go on the session's one stream too; dropped if it is full.
    let notes = stream.clone();
    let sink = crate::outbound::Sink::new(move |message| {
        notes
            .try_send(body::event(None, Some("message"), &message))
            .is_ok()
    });
    let arrival = Arrival {
        sink: Some(sink),
        headers: Some(Arc::new(parts.headers)),
        closer: None,
    };
    match on_message_with(&session.conn, &text, arrival) {
        Step::Reply(out) => send(out.bytes).await,
        Step::Nothing => {}
        Step::Run(fut) => {
            tokio::spawn(async move {
                if let Some(out) = fut.await {
                    let _ = stream
                        .send(body::event(None, Some("message"), &out.bytes))
                        .await;
                }
            });
        }
    }
    body::empty(StatusCode::ACCEPTED)
}
