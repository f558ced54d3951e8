//! The bounds a client keeps against its server, in time and in bytes: a server that stops
//! answering, trickles, sends without end or asks without end costs the client a bounded
//! wait and bounded memory, and ends in a [`ClientError`](super::ClientError) that says which.

use std::future::Future;
use std::time::Duration;

/// What [`ClientBuilder`](super::ClientBuilder) sets (its rustdoc lists the defaults).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// One request, from the first byte sent to the answer.
    pub(crate) request_timeout: Duration,
    /// The whole handshake of `connect`/`spawn`.
    pub(crate) connect_timeout: Duration,
    /// How long a stdio server may leave `server/discover` unanswered.
    pub(crate) probe_timeout: Duration,
    /// One message: an HTTP body, an SSE event (and line), a stdio line.
    pub(crate) max_message_bytes: usize,
    /// The items of one `list_*` call, across its pages.
    pub(crate) max_list_items: usize,
    /// The JSON of one `list_*` call's pages together.
    pub(crate) max_list_bytes: usize,
    /// Requests from the server (elicitation, sampling, roots) answered at once.
    pub(crate) max_server_requests: usize,
    /// Whether lists and discovery are cached for their `ttlMs` ([`super::cache`]).
    pub(crate) cache: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(2),
            max_message_bytes: 16 * 1024 * 1024,
            max_list_items: 100_000,
            max_list_bytes: 32 * 1024 * 1024,
            max_server_requests: 16,
            cache: false,
        }
    }
}

/// The most bytes read of an HTTP error's body (the rest is not read).
pub(crate) const MAX_ERROR_BODY: usize = 64 * 1024;
/// The most pages one `list_*` call follows (pages can be empty: the items and bytes do not
/// bound them).
pub(crate) const MAX_PAGES: usize = 10_000;
/// Messages read from the server before the client existed, queued for the router task (after
/// that, each reader routes what it reads before reading on: see `router::Inbox`); a reader
/// waits when the queue is full, so what the server sends queues in its socket.
pub(crate) const INBOX: usize = 64;
/// Refusals of server requests (past `max_server_requests`) waiting to be sent; when they
/// are this many, reading from the server waits.
pub(crate) const REFUSALS: usize = 64;
/// How long the HTTP session's `GET` stream may take to open (or reopen).
pub(crate) const STREAM_OPEN: Duration = Duration::from_secs(10);

/// `fut`, or [`ClientError::Timeout`](super::ClientError::Timeout) when it takes longer than
/// `limit` (it is dropped then: whatever it was doing stops).
pub(crate) async fn within<T>(
    limit: Duration,
    fut: impl Future<Output = Result<T, super::ClientError>>,
) -> Result<T, super::ClientError> {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or(Err(super::ClientError::Timeout(limit)))
}
