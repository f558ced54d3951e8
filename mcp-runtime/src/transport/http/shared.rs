//! What every HTTP handler shares: the server, the configuration, the sessions and the
//! shutdown signal; and the small helpers they all use (header reading, body reading).

use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use http::HeaderMap;
use http::StatusCode;
use http::header::CONTENT_LENGTH;
use http::header::{AsHeaderName, HeaderName};
use http_body_util::{BodyExt, Limited};
use tokio::sync::watch;

use super::body::{self, HttpResponse};
use super::config::HttpConfig;
use super::sessions::Sessions;
use crate::Server;
use crate::protocol::McpError;
use crate::server::connection::Connection;

// Named once: a lookup by `&str` parses and lowercases the name on every request.
pub(crate) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(crate) static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
pub(crate) static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
pub(crate) static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// A request body of any kind (hyper's for the accept loop, the host's for a mounted service).
pub(crate) trait RequestBody:
    hyper::body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
    + Send
    + 'static
{
}

impl<B> RequestBody for B where
    B: hyper::body::Body<Data: Send, Error: Into<Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static
{
}

/// Everything a request handler needs.
pub(crate) struct Shared {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Arc<Sessions>,
    /// 2026-07-28 requests in progress per client.
    pub(crate) clients: Arc<super::client_limits::ClientLimits>,
    /// Stateless (2026-07-28) requests share one connection: it never opens a session.
    pub(crate) stateless: Arc<Connection>,
    /// Flips to `true` at shutdown, ending SSE streams.
    pub(crate) shutdown: watch::Receiver<bool>,
    /// Set at the shutdown signal, before the drain delay: `/readyz` answers 503 (health.rs).
    pub(crate) draining: std::sync::atomic::AtomicBool,
}

/// A digest of the request's caller (`ServerInner::caller`), which a session
/// is bound to: the raw credential is not kept.
pub(crate) fn owner(
    state: &Shared,
    headers: &HeaderMap,
    principal: Option<&crate::auth::Principal>,
) -> Option<[u8; 32]> {
    // A verified caller's digest is made once per token, not per request.
    if let Some(principal) = principal {
        return Some(principal.caller_digest());
    }
    let caller = state.server.inner.caller(Some(headers), None)?;
    Some(crate::id::sha256(&caller))
}

/// `response` with `Connection: close`: the connection carries no other request after it.
pub(crate) fn closing(mut response: HttpResponse) -> HttpResponse {
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// A header's value, if present and visible ASCII.
pub(crate) fn header(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A body as text: one that is not UTF-8 is 400 with a JSON-RPC parse error.
// The error is the response itself, built once for a bad request (as `read_body`'s).
#[allow(clippy::result_large_err)]
pub(crate) fn utf8(bytes: &[u8]) -> Result<&str, HttpResponse> {
    std::str::from_utf8(bytes).map_err(|_| {
        body::error(
            StatusCode::BAD_REQUEST,
            McpError::new(
                crate::protocol::ErrorCode::PARSE_ERROR,
                "Parse error: invalid UTF-8",
            ),
        )
    })
}

/// The headers a request may carry at most once: two copies could each be read by a different
/// hop (a proxy routes on one, the server acts on the other), so a repeat is refused (400).
pub(crate) static SINGLE_HEADERS: [&HeaderName; 5] = [
    &VERSION_HEADER,
    &SESSION_HEADER,
    &METHOD_HEADER,
    &NAME_HEADER,
    &LAST_EVENT_ID,
];

/// The first header of [`SINGLE_HEADERS`] that `headers` repeats.
pub(crate) fn repeated(headers: &HeaderMap) -> Option<&'static HeaderName> {
    // As many values as names: nothing is repeated (the common case, without a lookup).
    if headers.len() == headers.keys_len() {
        return None;
    }
    SINGLE_HEADERS
        .into_iter()
        .find(|name| headers.get_all(*name).iter().nth(1).is_some())
}

/// Reads the body, refusing more than the configured limit with 413 and one slower than the
/// body read timeout with 408.
pub(crate) async fn read_body<B: RequestBody>(
    body: B,
    headers: &HeaderMap,
    config: &HttpConfig,
) -> Result<Bytes, HttpResponse> {
    let (limit, timeout) = (config.max_body_bytes, config.body_read_timeout);
    let too_large = || {
        body::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            McpError::invalid_request(format!("Request body larger than {limit} bytes")),
        )
    };
    if header(headers, CONTENT_LENGTH)
        .and_then(|l| l.parse::<usize>().ok())
        .is_some_and(|l| l > limit)
    {
        return Err(too_large());
    }
    let mut read = std::pin::pin!(Limited::new(body, limit).collect());
    // A body that came with its head (most do) is read without arming the timer.
    let first = std::future::poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
    let read = match first {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(timeout, read).await,
    };
    match read {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(_)) => Err(body::error(
            StatusCode::BAD_REQUEST,
            McpError::invalid_request("Could not read the request body"),
        )),
        Err(_) => {
            let r = body::error(
                StatusCode::REQUEST_TIMEOUT,
                McpError::invalid_request(format!(
                    "The request body did not arrive within {} s",
                    timeout.as_secs_f32()
                )),
            );
            // What is left of the body is not read: the connection cannot carry another request.
            Err(closing(r))
        }
    }
}
