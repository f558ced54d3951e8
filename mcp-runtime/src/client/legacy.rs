//! The deprecated HTTP+SSE transport (2024-11-05), for servers that have nothing newer: `GET`
//! the URL, wait for the `endpoint` event, `POST` every message there; everything the server
//! sends arrives on the one stream.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use tokio::time::{Instant, timeout_at};

use super::body::status_error;
use super::core::{Inbound, Link, LinkFuture, Outgoing};
use super::error::ClientError;
use super::http::Hyper;
use super::limits::Limits;
use super::oauth::Authorizer;
use super::peek;
use super::router::Inbox;
use super::sse::SseParser;

/// How long the server has to announce its endpoint.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

pub(crate) struct LegacyLink {
    client: Hyper,
    endpoint: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    auth: Option<Arc<Authorizer>>,
    stream: Mutex<Option<AbortHandle>>,
    /// Why the stream ended, once it has: every answer comes on it, so nothing more is sent.
    gone: Arc<Mutex<Option<ClientError>>>,
}

/// `endpoint` (absolute, or a path on `base`'s origin) as a URI on the same origin: a server
/// cannot send the client's messages elsewhere.
fn resolve(base: &Uri, endpoint: &str) -> Result<Uri, ClientError> {
    let endpoint = endpoint.trim();
    let uri: Uri = if endpoint.starts_with('/') {
        let scheme = base.scheme_str().unwrap_or("http");
        let authority = base.authority().map(|a| a.as_str()).unwrap_or("");
        format!("{scheme}://{authority}{endpoint}")
            .parse()
            .map_err(|e| ClientError::protocol(format!("a bad endpoint {endpoint:?}: {e}")))?
    } else {
        endpoint
            .parse()
            .map_err(|e| ClientError::protocol(format!("a bad endpoint {endpoint:?}: {e}")))?
    };
    if uri.authority() != base.authority() || uri.scheme() != base.scheme() {
        return Err(ClientError::protocol(format!(
            "the server named an endpoint on another origin ({endpoint:?}); refused"
        )));
    }
    Ok(uri)
}

impl LegacyLink {
    /// Opens the stream at `url` and waits for its `endpoint` event, both within the request
    /// timeout (and the endpoint within [`ENDPOINT_WAIT`] of it).
    pub(crate) async fn open(
        client: Hyper,
        url: Uri,
        headers: Vec<(HeaderName, HeaderValue)>,
        auth: Option<Arc<Authorizer>>,
        limits: &Limits,
        inbox: Inbox,
    ) -> Result<LegacyLink, ClientError> {
        let limit = limits.request_timeout;
        let deadline = Instant::now() + limit;
        let mut tries = Default::default();
        let resp = loop {
            if let Some(auth) = &auth {
                auth.before_send().await;
            }
            let generation = auth.as_ref().map(|a| a.generation()).unwrap_or(0);
            let mut req = Request::builder()
                .method(Method::GET)
                .uri(url.clone())
                .header(ACCEPT, "text/event-stream");
            for (name, value) in &headers {
                req = req.header(name, value);
            }
            for (name, value) in auth.iter().flat_map(|a| a.headers("GET", &url)) {
                req = req.header(name, value);
            }
            let req = req
                .body(Full::new(Bytes::new()))
                .map_err(ClientError::transport)?;
            let resp = timeout_at(deadline, client.request(req))
                .await
                .map_err(|_| ClientError::Timeout(limit))?
                .map_err(|e| ClientError::request_failed(format_args!("GET {url}"), &url, &e))?;
            match &auth {
                Some(auth) => {
                    let again = timeout_at(
                        deadline,
                        auth.after(
                            resp.status().as_u16(),
                            resp.headers(),
                            generation,
                            &mut tries,
                        ),
                    )
                    .await
                    .map_err(|_| ClientError::Timeout(limit))??;
                    if !again {
                        break resp;
                    }
                }
                None => break resp,
            }
        };
        if resp.status() != StatusCode::OK {
            return Err(timeout_at(deadline, status_error(resp))
                .await
                .map_err(|_| ClientError::Timeout(limit))?);
        }
        // A web page (a login portal, a proxy's error) is not waited on for an endpoint.
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !content_type.trim_start().starts_with("text/event-stream") {
            return Err(ClientError::protocol(format!(
                "GET {url} answered {content_type:?}, not an event stream (not an HTTP+SSE server)"
            )));
        }
        // The endpoint, or why the stream ended before naming one.
        let (endpoint_tx, endpoint_rx) = oneshot::channel::<Result<String, ClientError>>();
        let gone = Arc::new(Mutex::new(None));
        let gone_tx = gone.clone();
        let max_event = limits.max_message_bytes;
        let task = tokio::spawn(async move {
            let mut body = resp.into_body();
            let mut parser = SseParser::new(max_event);
            let mut endpoint_tx = Some(endpoint_tx);
            let mut why = ClientError::transport("the server closed its SSE stream");
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let fed = parser.feed(&data);
                for ev in fed.events {
                    match ev.event.as_deref() {
                        Some("endpoint") => {
                            if let Some(tx) = endpoint_tx.take() {
                                let _ = tx.send(Ok(ev.data));
                            }
                        }
                        None | Some("message") => match peek::read(&ev.data) {
                            Ok(msg) => {
                                if inbox.send(Inbound::Read(msg)).await.is_err() {
                                    return;
                                }
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "an SSE event that is not JSON")
                            }
                        },
                        Some(_) => {}
                    }
                }
                if let Some(e) = fed.error {
                    why = e;
                    break;
                }
            }
            if let Some(tx) = endpoint_tx.take() {
                let _ = tx.send(Err(why.clone()));
            }
            // Before the pending requests fail: a request sent after that fails at once.
            *gone_tx.lock().unwrap() = Some(why.clone());
            let _ = inbox.send(Inbound::Closed(why)).await;
        });
        let wait = deadline.min(Instant::now() + ENDPOINT_WAIT);
        let endpoint = match timeout_at(wait, endpoint_rx).await {
            Ok(Ok(Ok(endpoint))) => endpoint,
            Ok(Ok(Err(ended))) => {
                task.abort();
                return Err(ended);
            }
            waited => {
                task.abort();
                if waited.is_err() && Instant::now() >= deadline {
                    return Err(ClientError::Timeout(limit));
                }
                return Err(ClientError::protocol(
                    "the SSE stream announced no endpoint (not an HTTP+SSE server)",
                ));
            }
        };
        let endpoint = match resolve(&url, &endpoint) {
            Ok(e) => e,
            Err(e) => {
                task.abort();
                return Err(e);
            }
        };
        Ok(LegacyLink {
            client,
            endpoint,
            headers,
            auth,
            stream: Mutex::new(Some(task.abort_handle())),
            gone,
        })
    }
}

impl Link for LegacyLink {
    fn send(&self, out: Outgoing) -> LinkFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if let Some(why) = self.gone.lock().unwrap().as_ref() {
                let why = match why {
                    ClientError::Transport(why) => why.clone(),
                    other => other.to_string(),
                };
                return Err(ClientError::transport(format!(
                    "the server's SSE stream has ended ({why}): connect again"
                )));
            }
            let body = Bytes::from(out.body);
            let mut tries = Default::default();
            let resp = loop {
                if let Some(auth) = &self.auth {
                    auth.before_send().await;
                }
                let generation = self.auth.as_ref().map(|a| a.generation()).unwrap_or(0);
                let mut req = Request::builder()
                    .method(Method::POST)
                    .uri(self.endpoint.clone())
                    .header(CONTENT_TYPE, "application/json");
                for (name, value) in &self.headers {
                    req = req.header(name, value);
                }
                for (name, value) in self
                    .auth
                    .iter()
                    .flat_map(|a| a.headers("POST", &self.endpoint))
                {
                    req = req.header(name, value);
                }
                let req = req
                    .body(Full::new(body.clone()))
                    .map_err(ClientError::transport)?;
                let resp = self.client.request(req).await.map_err(|e| {
                    ClientError::request_failed(
                        format_args!("POST {}", self.endpoint),
                        &self.endpoint,
                        &e,
                    )
                })?;
                let Some(auth) = &self.auth else {
                    break resp;
                };
                if !auth
                    .after(
                        resp.status().as_u16(),
                        resp.headers(),
                        generation,
                        &mut tries,
                    )
                    .await?
                {
                    break resp;
                }
            };
            if resp.status().is_success() {
                // The answer comes on the stream; this body (`Accepted`) is not needed.
                return Ok(());
            }
            // Only the start of an error's body is read (a body that never ends grew the
            // client without bound when it was read whole).
            Err(status_error(resp).await)
        })
    }

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            // The session lives as long as its stream.
            if let Some(task) = self.stream.lock().unwrap().take() {
                task.abort();
            }
        })
    }
}

impl Drop for LegacyLink {
    fn drop(&mut self) {
        if let Some(task) = self.stream.lock().unwrap().take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_stay_on_the_origin() {
        let base: Uri = "http://127.0.0.1:9/sse".parse().unwrap();
        assert_eq!(
            resolve(&base, "/messages?sessionId=a").unwrap(),
            "http://127.0.0.1:9/messages?sessionId=a"
        );
        assert!(resolve(&base, "http://127.0.0.1:9/m").is_ok());
        assert!(resolve(&base, "http://evil.example/m").is_err());
        assert!(resolve(&base, "http://127.0.0.1:10/m").is_err());
        // The scheme too: an https:// stream's endpoint is https:// on the same origin.
        assert!(resolve(&base, "https://127.0.0.1:9/m").is_err());
        let tls: Uri = "https://mcp.example/sse".parse().unwrap();
        assert_eq!(
            resolve(&tls, "/messages?sessionId=a").unwrap(),
            "https://mcp.example/messages?sessionId=a"
        );
        assert!(resolve(&tls, "http://mcp.example/messages").is_err());
    }
}
