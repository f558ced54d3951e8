//! Streamable HTTP from the client side: one `POST` per message (the answer as JSON or an SSE
//! stream), the session id kept from `initialize` and `DELETE`d on close, the session's `GET`
//! stream, and streams resumed with `Last-Event-ID` after the server's `retry` delay.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::task::AbortHandle;

use super::body::{read_body, read_start, status_error};
use super::core::{Inbound, Link, LinkFuture, Outgoing};
use super::error::ClientError;
use super::limits::{Limits, MAX_ERROR_BODY, STREAM_OPEN};
use super::oauth::Authorizer;
use super::peek;
use super::router::Inbox;
use super::sse::SseParser;
use crate::protocol::{McpError, ProtocolVersion};

/// The reconnection delay when the server gave none (ms).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Reconnection attempts in a row before a stream is given up.
const MAX_RECONNECTS: u32 = 8;

pub(crate) type Hyper = crate::http_client::HttpClient;

struct Shared {
    client: Hyper,
    url: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// OAuth: the token on every request, and what to do on a 401 or 403.
    auth: Option<Arc<Authorizer>>,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<&'static str>>,
    /// The largest JSON body or SSE event read.
    max_message: usize,
    /// How long a `GET` stream's response head may take: [`STREAM_OPEN`], or the request
    /// timeout when that is shorter (a server that never answers the session's `GET` must not
    /// hold `connect` past the deadlines its caller chose; the session works without it).
    stream_open: Duration,
    inbox: Inbox,
}

pub(crate) struct HttpLink {
    shared: Arc<Shared>,
    /// The stream of each request whose answer is still coming, by request id.
    streams: Arc<Mutex<HashMap<i64, AbortHandle>>>,
    get_stream: Mutex<Option<AbortHandle>>,
}

/// Checks and parses an endpoint URL: `http://`, or `https://` with the `tls` feature.
pub(crate) fn parse_url(url: &str) -> Result<Uri, ClientError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| ClientError::transport(format!("{url:?} is not a URL: {e}")))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(ClientError::transport(format!("{url:?} names no host")));
    }
    match uri.scheme_str() {
        Some("http") => Ok(uri),
        #[cfg(feature = "tls")]
        Some("https") => Ok(uri),
        #[cfg(not(feature = "tls"))]
        Some("https") => Err(ClientError::transport(format!(
            "{url:?}: https:// needs mcp-runtime's `tls` feature, which this build does not have \
             (features = [\"client\", \"tls\"])"
        ))),
        _ => Err(ClientError::transport(format!(
            "{url:?} is not an http:// or https:// URL"
        ))),
    }
}

/// The pooled client for `url` (with the builder's TLS settings: whatever the URL, every
/// request goes to its origin, so an `http://` one needs no trust roots).
pub(crate) fn hyper_client(url: &Uri, tls: &Tls) -> Result<Hyper, ClientError> {
    #[cfg(feature = "tls")]
    {
        crate::http_client::build(tls, url.scheme_str() == Some("https"))
            .map_err(ClientError::transport)
    }
    #[cfg(not(feature = "tls"))]
    {
        let _ = (url, tls);
        Ok(crate::http_client::plain())
    }
}

/// The client for an MCP server's authorization servers: `https://` under the builder's TLS
/// settings too, whatever the MCP server's own scheme (with the `tls` feature).
pub(crate) fn authorization_client(tls: &Tls) -> Result<Hyper, String> {
    #[cfg(feature = "tls")]
    {
        crate::http_client::build(tls, true)
    }
    #[cfg(not(feature = "tls"))]
    {
        let _ = tls;
        Ok(crate::http_client::plain())
    }
}

/// The builder's TLS settings (nothing without the `tls` feature).
#[cfg(feature = "tls")]
pub(crate) type Tls = crate::http_client::TlsSettings;
/// The builder's TLS settings (nothing without the `tls` feature).
#[cfg(not(feature = "tls"))]
#[derive(Clone, Default)]
pub(crate) struct Tls;

impl HttpLink {
    pub(crate) fn new(
        client: Hyper,
        url: Uri,
        headers: Vec<(HeaderName, HeaderValue)>,
        auth: Option<Arc<Authorizer>>,
        limits: &Limits,
        inbox: Inbox,
    ) -> HttpLink {
        HttpLink {
            shared: Arc::new(Shared {
                client,
                url,
                headers,
                auth,
                session: Mutex::new(None),
                version: Mutex::new(None),
                max_message: limits.max_message_bytes,
                stream_open: STREAM_OPEN.min(limits.request_timeout),
                inbox,
            }),
            streams: Arc::new(Mutex::new(HashMap::new())),
            get_stream: Mutex::new(None),
        }
    }
}

impl Shared {
    fn request(&self, method: Method, version: Option<&str>) -> http::request::Builder {
        let method_name = method.to_string();
        let method_name = method_name.as_str();
        let mut req = Request::builder().method(method).uri(self.url.clone());
        if let Some(session) = self.session.lock().unwrap().clone() {
            req = req.header("Mcp-Session-Id", session);
        }
        if let Some(v) = version.or(*self.version.lock().unwrap()) {
            req = req.header("MCP-Protocol-Version", v);
        }
        for (name, value) in &self.headers {
            req = req.header(name, value);
        }
        for (name, value) in self
            .auth
            .iter()
            .flat_map(|a| a.headers(method_name, &self.url))
        {
            req = req.header(name, value);
        }
        req
    }

    /// Opens (or resumes) an SSE stream with `GET`: its response head within `stream_open`.
    async fn get(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<hyper::Response<Incoming>, ClientError> {
        let mut req = self
            .request(Method::GET, None)
            .header(ACCEPT, "text/event-stream");
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let req = req
            .body(Full::new(Bytes::new()))
            .map_err(ClientError::transport)?;
        tokio::time::timeout(self.stream_open, self.client.request(req))
            .await
            .map_err(|_| ClientError::Timeout(self.stream_open))?
            .map_err(|e| {
                ClientError::request_failed(format_args!("GET {}", self.url), &self.url, &e)
            })
    }

    /// Routes what was read (see [`Inbox`]); returns once it is routed.
    async fn push(&self, inbound: Inbound) {
        let _ = self.inbox.send(inbound).await;
    }
}

fn is_sse(resp: &hyper::Response<Incoming>) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// Reads an SSE body (and, when it ends early, its resumptions) into the inbox. `id`: the
/// request whose answer the stream carries (`None` for the session's `GET` stream, which
/// is reopened whenever it ends).
async fn pump(shared: Arc<Shared>, mut body: Incoming, id: Option<i64>) {
    let mut parser = SseParser::new(shared.max_message);
    let mut failures = 0u32;
    loop {
        let mut answered = false;
        let mut broken = None;
        loop {
            match body.frame().await {
                None => break,
                Some(Err(e)) => {
                    broken = Some(e.to_string());
                    break;
                }
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    let fed = parser.feed(&data);
                    for ev in fed.events {
                        if ev.data.trim().is_empty()
                            || ev.event.as_deref().is_some_and(|e| e != "message")
                        {
                            continue; // a priming event, or an event type MCP does not use
                        }
                        match peek::read(&ev.data) {
                            Ok(msg) => {
                                failures = 0;
                                answered |= id.is_some_and(|id| msg.answers(id));
                                shared.push(Inbound::Read(msg)).await;
                            }
                            Err(e) => tracing::warn!(error = %e, "an SSE event that is not JSON"),
                        }
                    }
                    if answered {
                        return;
                    }
                    // Too large an event: resuming would replay it (or skip it); the stream
                    // ends, and the request waiting for it fails (after what came before it).
                    if let Some(error) = fed.error {
                        match id {
                            Some(id) => shared.push(Inbound::Failed { id, error }).await,
                            None => tracing::warn!(%error, "the session's GET stream ended"),
                        }
                        return;
                    }
                }
            }
        }
        // The stream ended before its answer (or, for the GET stream, at all): resume it
        // where it stopped, after the delay the server asked for (SEP-1699).
        let last = parser.last_id.clone();
        if last.is_none()
            && let Some(id) = id
        {
            let why = broken.unwrap_or_else(|| "the server closed it".into());
            shared
                .push(Inbound::Failed {
                    id,
                    error: ClientError::transport(format!(
                        "the answer's stream ended before the answer ({why}) and cannot be resumed (no event id)"
                    )),
                })
                .await;
            return;
        }
        // (The GET stream without event ids is reopened from the start.)
        loop {
            failures += 1;
            if failures > MAX_RECONNECTS {
                if let Some(id) = id {
                    shared
                        .push(Inbound::Failed {
                            id,
                            error: ClientError::transport(
                                "the answer's stream could not be resumed",
                            ),
                        })
                        .await;
                }
                return;
            }
            let wait = parser.retry.unwrap_or(DEFAULT_RETRY_MS);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            match shared.get(last.as_deref()).await {
                Ok(resp) if resp.status() == StatusCode::OK && is_sse(&resp) => {
                    body = resp.into_body();
                    break;
                }
                Ok(resp) if resp.status() == StatusCode::NOT_FOUND => {
                    if let Some(id) = id {
                        shared
                            .push(Inbound::Failed {
                                id,
                                error: ClientError::SessionExpired,
                            })
                            .await;
                    }
                    return;
                }
                Ok(resp) if resp.status() == StatusCode::METHOD_NOT_ALLOWED => {
                    if let Some(id) = id {
                        shared.push(Inbound::Failed {
                            id,
                            error: ClientError::transport(
                                "the answer's stream ended and the server does not allow resuming it (GET is 405)",
                            ),
                        })
                        .await;
                    }
                    return;
                }
                Ok(resp) => tracing::debug!(status = %resp.status(), "resuming the stream failed"),
                Err(e) => tracing::debug!(error = %e, "resuming the stream failed"),
            }
        }
    }
}

impl Drop for HttpLink {
    /// A client dropped without [`close`](super::Client::close): its streams stop, and its
    /// session is `DELETE`d in the background when a runtime is there to do it.
    fn drop(&mut self) {
        if let Some(task) = self.get_stream.lock().unwrap().take() {
            task.abort();
        }
        for (_, task) in self.streams.lock().unwrap().drain() {
            task.abort();
        }
        let Some(session) = self.shared.session.lock().unwrap().take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = self.shared.clone();
        runtime.spawn(async move {
            let req = shared
                .request(Method::DELETE, None)
                .header("Mcp-Session-Id", session)
                .body(Full::new(Bytes::new()));
            if let Ok(req) = req {
                let _ =
                    tokio::time::timeout(Duration::from_secs(5), shared.client.request(req)).await;
            }
        });
    }
}

impl Link for HttpLink {
    fn send(&self, out: Outgoing) -> LinkFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let shared = &self.shared;
            let body = Bytes::from(out.body);
            let mut tries = Default::default();
            let (resp, had_session) = loop {
                if let Some(auth) = &shared.auth {
                    auth.before_send().await;
                }
                let generation = shared.auth.as_ref().map(|a| a.generation()).unwrap_or(0);
                let mut req = shared
                    .request(Method::POST, out.version)
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, "application/json, text/event-stream");
                if let Some(method) = &out.method {
                    req = req.header("Mcp-Method", method.as_str());
                }
                for (name, value) in &out.headers {
                    req = req.header(name.as_str(), value.as_str());
                }
                let req = req
                    .body(Full::new(body.clone()))
                    .map_err(|e| ClientError::protocol(format!("cannot send this request: {e}")))?;
                let had_session = shared.session.lock().unwrap().is_some();
                let resp = shared.client.request(req).await.map_err(|e| {
                    ClientError::request_failed(
                        format_args!("POST {}", shared.url),
                        &shared.url,
                        &e,
                    )
                })?;
                let Some(auth) = &shared.auth else {
                    break (resp, had_session);
                };
                match auth
                    .after(
                        resp.status().as_u16(),
                        resp.headers(),
                        generation,
                        &mut tries,
                    )
                    .await
                {
                    Ok(true) => continue,
                    Ok(false) => break (resp, had_session),
                    Err(error) => {
                        return match out.id {
                            Some(id) => {
                                shared.push(Inbound::Failed { id, error }).await;
                                Ok(())
                            }
                            None => Err(error),
                        };
                    }
                }
            };
            let status = resp.status();
            if out.method.as_deref() == Some("initialize")
                && status.is_success()
                && let Some(session) = resp.headers().get("mcp-session-id")
            {
                *shared.session.lock().unwrap() = Some(session.clone());
            }
            // An error for a request goes to the request (it waits for its answer); for a
            // notification or an answer, to the sender.
            let fail = async |error: ClientError| match out.id {
                Some(id) => {
                    shared.push(Inbound::Failed { id, error }).await;
                    Ok(())
                }
                None => Err(error),
            };
            if status == StatusCode::NOT_FOUND && had_session {
                return fail(ClientError::SessionExpired).await;
            }
            if status == StatusCode::METHOD_NOT_ALLOWED || status.is_redirection() {
                // The URL takes no POST at all (an HTTP+SSE server's stream URL, a proxy), or
                // sends it elsewhere (never followed: the headers stay with this origin).
                return fail(status_error(resp).await).await;
            }
            if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
                if let (Some(id), StatusCode::NO_CONTENT) = (out.id, status) {
                    // An answer with no body: an empty result.
                    shared
                        .push(Inbound::Message(
                            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}}),
                        ))
                        .await;
                }
                return Ok(());
            }
            if status.is_success() && is_sse(&resp) {
                // A stream for a notification or an answer (the spec says 202) carries nothing
                // this client waits for: it is not read, and goes with its connection.
                let Some(id) = out.id else {
                    return Ok(());
                };
                let task = tokio::spawn(pump(shared.clone(), resp.into_body(), Some(id)));
                let streams = self.streams.clone();
                streams.lock().unwrap().insert(id, task.abort_handle());
                tokio::spawn(async move {
                    let _ = task.await;
                    streams.lock().unwrap().remove(&id);
                });
                return Ok(());
            }
            // An answer up to the message limit; of an error, only its start (a body that
            // never ends is not read to its end).
            let body = if status.is_success() {
                match read_body(resp.into_body(), shared.max_message).await {
                    Ok(body) => body,
                    Err(e) => return fail(e).await,
                }
            } else {
                read_start(resp.into_body(), MAX_ERROR_BODY).await
            };
            // A notification or an answer has no answer: a body is not read as one.
            if status.is_success() && out.id.is_none() {
                return Ok(());
            }
            if status.is_success() {
                // Read only as far as routing it needs (its result is passed on as it came).
                let read = std::str::from_utf8(&body).ok().map(peek::read);
                return match read {
                    Some(Ok(msg)) => {
                        shared.push(Inbound::Read(msg)).await;
                        Ok(())
                    }
                    _ => {
                        fail(ClientError::Status {
                            status: status.as_u16(),
                            body: String::from_utf8_lossy(&body).into_owned(),
                        })
                        .await
                    }
                };
            }
            let parsed = serde_json::from_slice::<Value>(&body).ok();
            match parsed {
                // A JSON-RPC error with an HTTP error status (2026-07-28 maps errors to
                // statuses; the id may be null when the body could not be read).
                Some(msg) if msg.get("error").is_some() => {
                    let error = serde_json::from_value::<McpError>(msg["error"].clone())
                        .map(ClientError::Rpc)
                        .unwrap_or_else(|_| ClientError::Status {
                            status: status.as_u16(),
                            body: String::from_utf8_lossy(&body).into_owned(),
                        });
                    fail(error).await
                }
                _ => {
                    fail(ClientError::Status {
                        status: status.as_u16(),
                        body: String::from_utf8_lossy(&body).into_owned(),
                    })
                    .await
                }
            }
        })
    }

    fn negotiated(&self, version: ProtocolVersion) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            *self.shared.version.lock().unwrap() = Some(version.as_str());
            if version == ProtocolVersion::V2026_07_28 {
                return; // no session, no GET stream
            }
            // Opened (its response head awaited, within `stream_open`) before any later request
            // is sent.
            let resp = match self.shared.get(None).await {
                Ok(resp) if resp.status() == StatusCode::OK && is_sse(&resp) => resp,
                // 405: the server offers no GET stream; anything else: none either.
                Ok(resp) => return tracing::debug!(status = %resp.status(), "no GET stream"),
                Err(e) => return tracing::debug!(error = %e, "no GET stream"),
            };
            let task = tokio::spawn(pump(self.shared.clone(), resp.into_body(), None));
            *self.get_stream.lock().unwrap() = Some(task.abort_handle());
        })
    }

    fn abandon(&self, id: i64) {
        if let Some(task) = self.streams.lock().unwrap().remove(&id) {
            task.abort();
        }
    }

    fn session_id(&self) -> Option<String> {
        let session = self.shared.session.lock().unwrap();
        session
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    fn reset_session(&self) {
        *self.shared.session.lock().unwrap() = None;
        if let Some(task) = self.get_stream.lock().unwrap().take() {
            task.abort();
        }
    }

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            if let Some(task) = self.get_stream.lock().unwrap().take() {
                task.abort();
            }
            for (_, task) in self.streams.lock().unwrap().drain() {
                task.abort();
            }
            let session = self.shared.session.lock().unwrap().take();
            if let Some(session) = session {
                let req = self
                    .shared
                    .request(Method::DELETE, None)
                    .header("Mcp-Session-Id", session)
                    .body(Full::new(Bytes::new()));
                if let Ok(req) = req {
                    let done = tokio::time::timeout(
                        Duration::from_secs(5),
                        self.shared.client.request(req),
                    );
                    if let Ok(Ok(resp)) = done.await {
                        tracing::debug!(status = %resp.status(), "session deleted");
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_http_or_https() {
        assert!(parse_url("http://127.0.0.1:9/mcp").is_ok());
        let https = parse_url("https://mcp.example/mcp");
        #[cfg(feature = "tls")]
        assert!(https.is_ok());
        // Without TLS, the error says which feature brings it.
        #[cfg(not(feature = "tls"))]
        assert!(https.unwrap_err().to_string().contains("`tls` feature"));
        for bad in ["ftp://mcp.example/mcp", "mcp.example/mcp", "http:///mcp"] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
