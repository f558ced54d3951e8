//! The setters of [`HttpConfig`] as 0.1 named them, kept for one release: each delegates to
//! its new name, or pins the value for HTTP over the server's (the body limit and the shutdown
//! grace moved to the server, which both transports read). Delete this file in 0.3.

use std::sync::Arc;
use std::time::Duration;

use super::HttpConfig;
use crate::transport::http::{EventStore, RouteToken, SessionStore};

impl HttpConfig {
    /// The MCP endpoint's path.
    #[deprecated(since = "0.2.0", note = "use `path`")]
    pub fn with_path(self, path: impl Into<String>) -> Self {
        self.path(path)
    }

    /// `Host` header values to accept.
    #[deprecated(since = "0.2.0", note = "use `allowed_hosts`")]
    pub fn with_allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(self, hosts: I) -> Self {
        self.allowed_hosts(hosts)
    }

    /// Browser origins to accept besides loopback ones.
    #[deprecated(since = "0.2.0", note = "use `allowed_origins`")]
    pub fn with_allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(
        self,
        origins: I,
    ) -> Self {
        self.allowed_origins(origins)
    }

    /// The largest request body, for this HTTP server only: it wins over the server's
    /// [`max_message_bytes`](crate::ServerBuilder::max_message_bytes), which both transports
    /// honour.
    #[deprecated(
        since = "0.2.0",
        note = "use `ServerBuilder::max_message_bytes`, which stdio and HTTP both honour"
    )]
    pub fn with_max_body_bytes(mut self, n: usize) -> Self {
        self.pinned.max_body_bytes = Some(n);
        self.max_body_bytes = n;
        self
    }

    /// How long a client may take to send its request headers.
    #[deprecated(since = "0.2.0", note = "use `header_read_timeout`")]
    pub fn with_header_read_timeout(self, t: Duration) -> Self {
        self.header_read_timeout(t)
    }

    /// How long a client may take to send a request body.
    #[deprecated(since = "0.2.0", note = "use `body_read_timeout`")]
    pub fn with_body_read_timeout(self, t: Duration) -> Self {
        self.body_read_timeout(t)
    }

    /// The most client connections open at once.
    #[deprecated(since = "0.2.0", note = "use `max_connections`")]
    pub fn with_max_connections(self, n: usize) -> Self {
        self.max_connections(n)
    }

    /// How long a connection may stay open with no request in progress.
    #[deprecated(since = "0.2.0", note = "use `idle_connection_timeout`")]
    pub fn with_idle_connection_timeout(self, t: Duration) -> Self {
        self.idle_connection_timeout(t)
    }

    /// The most 2026-07-28 requests one client may have in progress at once.
    #[deprecated(since = "0.2.0", note = "use `max_in_flight_per_client`")]
    pub fn with_max_in_flight_per_client(self, n: usize) -> Self {
        self.max_in_flight_per_client(n)
    }

    /// How long an unused session lives.
    #[deprecated(since = "0.2.0", note = "use `session_idle_timeout`")]
    pub fn with_session_idle_timeout(self, t: Duration) -> Self {
        self.session_idle_timeout(t)
    }

    /// The most sessions at once.
    #[deprecated(since = "0.2.0", note = "use `max_sessions`")]
    pub fn with_max_sessions(self, n: usize) -> Self {
        self.max_sessions(n)
    }

    /// Interval of keep-alive comments on SSE streams.
    #[deprecated(since = "0.2.0", note = "use `sse_keep_alive`")]
    pub fn with_sse_keep_alive(self, t: Duration) -> Self {
        self.sse_keep_alive(t)
    }

    /// Serve the deprecated HTTP+SSE transport.
    #[deprecated(since = "0.2.0", note = "use `legacy_sse`")]
    pub fn with_legacy_sse(self, on: bool) -> Self {
        self.legacy_sse(on)
    }

    /// Where SSE events are kept for resumption.
    #[deprecated(since = "0.2.0", note = "use `event_store`")]
    pub fn with_event_store(self, store: Arc<dyn EventStore>) -> Self {
        self.event_store(store)
    }

    /// The instance's route token.
    #[deprecated(since = "0.2.0", note = "use `route_token`")]
    pub fn with_route_token(self, token: RouteToken) -> Self {
        self.route_token(token)
    }

    /// Names this instance in an `X-Mcp-Instance` header on every answer.
    #[deprecated(since = "0.2.0", note = "use `instance_header`")]
    pub fn with_instance_header(self, name: http::HeaderValue) -> Self {
        self.instance_header(name)
    }

    /// Keeps session-era sessions in `store` too.
    #[deprecated(since = "0.2.0", note = "use `session_store`")]
    pub fn with_session_store(self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store(store)
    }

    /// The path prefix an app mounts the service under.
    #[deprecated(since = "0.2.0", note = "use `mount_prefix`")]
    pub fn with_mount_prefix(self, prefix: impl Into<String>) -> Self {
        self.mount_prefix(prefix)
    }

    /// How long running requests may finish, for this HTTP server only: it wins over the
    /// server's [`shutdown_grace`](crate::ServerBuilder::shutdown_grace), which both
    /// transports honour.
    #[deprecated(
        since = "0.2.0",
        note = "use `ServerBuilder::shutdown_grace`, which stdio and HTTP both honour"
    )]
    pub fn with_shutdown_grace(mut self, t: Duration) -> Self {
        self.pinned.shutdown_grace = Some(t);
        self.shutdown_grace = t;
        self
    }

    /// How long the server keeps serving after a shutdown signal.
    #[deprecated(since = "0.2.0", note = "use `drain_delay`")]
    pub fn with_drain_delay(self, t: Duration) -> Self {
        self.drain_delay(t)
    }

    /// Makes the server an OAuth 2.1 resource server.
    #[cfg(feature = "auth")]
    #[deprecated(since = "0.2.0", note = "use `auth`")]
    pub fn with_auth(self, auth: crate::auth::Auth) -> Self {
        self.auth(auth)
    }
}
