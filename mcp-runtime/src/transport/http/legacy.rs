//! The deprecated HTTP+SSE transport (protocol 2024-11-05): `GET /sse` opens a session and its
//! one stream, announced by an `endpoint` event; `POST /messages?sessionId=…` answers 202 and
//! the response goes on that stream.

use std::sync::Arc;

use http::{HeaderMap, Request, StatusCode};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::body::{self, HttpResponse};
use super::sessions::Full;
use super::shared::{RequestBody, Shared, owner, read_body, utf8};
use super::stream::spawn_stream;
use crate::auth::Principal;
use crate::protocol::McpError;
use crate::server::connection::{Arrival, Step};
use crate::server::dispatch::on_decoded;

pub(crate) fn open(
    state: &Arc<Shared>,
    headers: &HeaderMap,
    principal: Option<Arc<Principal>>,
) -> HttpResponse {
    let (tx, rx) = mpsc::channel(256);
    let owner = owner(state, headers, principal.as_deref());
    let session = match state
        .sessions
        .create(&state.server, Some(tx.clone()), owner)
    {
        Ok(s) => s,
        Err(Full(max)) => return body::too_many_sessions(max),
    };
    *session.conn.standalone.lock().expect("standalone lock") =
        Some(super::stream::standalone_sink(&tx, Some("message")));
    // Where the client posts, as the client sees it: under the prefix the app mounts us at.
    let endpoint = format!(
        "{}/messages?sessionId={}",
        state.config.mount_prefix, session.id
    );
    let id = session.id.clone();
    let first = body::event(None, Some("endpoint"), endpoint.as_bytes());
    // The session lives as long as its stream: when the client goes away, it ends, and at
    // shutdown (the stream cannot end while the session holds a sender to it).
    let sessions = state.sessions.clone();
    let watch = tx.clone();
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = watch.closed() => {}
            _ = shutdown.wait_for(|stopped| *stopped) => {}
        }
        drop(watch);
        sessions.remove(&id);
        tracing::debug!(session = %id, "legacy SSE session closed");
    });
    spawn_stream(state, tx, &session, Some(first));
    body::sse(rx)
}

pub(crate) async fn post<B: RequestBody>(
    state: &Arc<Shared>,
    req: Request<B>,
    principal: Option<Arc<Principal>>,
) -> HttpResponse {
    let id = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("sessionId=")))
        .map(str::to_owned);
    let owner = owner(state, req.headers(), principal.as_deref());
    // An HTTP+SSE session lives with its stream: it is never restored from a store.
    let found = match id.as_deref() {
        Some(id) => state.sessions.get(id, owner.as_ref(), None).await,
        None => Ok(None),
    };
    let Ok(Some(session)) = found else {
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
    let bytes = match read_body(incoming, &parts.headers, &state.config).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let text = match utf8(&bytes) {
        Ok(text) => text,
        Err(r) => return r,
    };
    // Decoded once: the scope checks read the value the connection runs.
    let decoded = crate::server::envelope::decode_any(text);
    if let Err(refused) = super::auth::check_scopes_all(state, &decoded, principal.as_deref()) {
        return refused;
    }
    // Responses go on the session's one stream without waiting: a client that stops reading
    // it cannot make the server hold a task (and a response) per request it keeps posting.
    // When the stream is full, the client is not keeping up: its session ends.
    let respond = {
        let sessions = state.sessions.clone();
        let id = session.id.clone();
        let stream = stream.clone();
        move |out: Vec<u8>| {
            if let Err(TrySendError::Full(_)) =
                stream.try_send(body::event(None, Some("message"), &out))
            {
                tracing::warn!(session = %id, "HTTP+SSE client is not reading its stream: ending the session");
                sessions.remove(&id);
            }
        }
    };
    // Notifications (progress, logs) go on the session's one stream too; dropped if it is full.
    let notes = stream.clone();
    let sink = crate::request::Sink::new(move |message| {
        notes
            .try_send(body::event(None, Some("message"), &message))
            .is_ok()
    });
    let arrival = Arrival {
        sink: Some(sink),
        headers: Some(Arc::new(parts.headers)),
        closer: None,
        principal,
        peer: None,
    };
    match on_decoded(&session.conn, decoded, arrival) {
        Step::Reply(out) => respond(out.bytes),
        Step::Nothing => {}
        // The request holds its in-flight slot until `fut` completes, so these tasks are
        // bounded by the session's `max_in_flight`.
        Step::Run(fut) => {
            tokio::spawn(async move {
                if let Some(out) = fut.await {
                    respond(out.bytes);
                }
            });
        }
    }
    body::empty(StatusCode::ACCEPTED)
}
