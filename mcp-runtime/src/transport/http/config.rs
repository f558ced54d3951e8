//! [`HttpConfig`]: every HTTP default in one place, safe for a local server out of the box.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::events::{EventStore, MemoryEventStore};
use super::route::RouteToken;
use super::session_era::SessionEra;
use super::sessions::SessionStore;
use crate::env::{invalid, var};
use crate::server::Limits;

mod deprecated;

/// The longest interval between SSE keep-alive comments.
const MAX_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// The shortest: anything shorter would flood the client.
const MIN_SSE_KEEP_ALIVE: Duration = Duration::from_secs(1);
/// The drain delay of a server listening on a non-loopback address, unless configured.
const DEFAULT_DRAIN_DELAY: Duration = Duration::from_secs(5);

/// Settings of the Streamable HTTP transport: what only HTTP has (address, path, `Host` and
/// `Origin` checks, timeouts, connections, sessions, SSE, drain delay, authorization).
///
/// The defaults suit a local server: bound to loopback, only loopback `Host`s and `Origin`s
/// accepted (DNS-rebinding protection), bounded bodies, sessions and idle time. A public
/// deployment lists its host names and browser origins explicitly.
///
/// Every setting is a by-value method named after the setting, with no prefix
/// (`.max_sessions(n)`, as tokio's, hyper's and reqwest's builders do); a setting of the server
/// holds on every transport and lives on [`ServerBuilder`](crate::ServerBuilder) (the largest
/// message and the shutdown grace are the server's), while one that only HTTP has lives here;
/// `with_env()` reads the `MCP_*` variables over them.
///
/// ```
/// use std::time::Duration;
/// use mcp_runtime::transport::HttpConfig;
///
/// let config = HttpConfig::new("0.0.0.0:8000")
///     .allowed_hosts(["mcp.example.com"])
///     .allowed_origins(["https://app.example.com"])
///     .session_idle_timeout(Duration::from_secs(600))
///     .drain_delay(Duration::from_secs(10));
/// # drop(config);
/// ```
#[derive(Clone)]
pub struct HttpConfig {
    pub(crate) addr: String,
    pub(crate) path: String,
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Vec<String>,
    /// The server's `max_message_bytes`, copied by [`HttpConfig::for_server`].
    pub(crate) max_body_bytes: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) body_read_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) idle_connection_timeout: Duration,
    pub(crate) max_in_flight_per_client: usize,
    pub(crate) session_idle_timeout: Duration,
    pub(crate) max_sessions: usize,
    pub(crate) sse_keep_alive: Duration,
    pub(crate) sse_retry: Duration,
    pub(crate) legacy_sse: bool,
    pub(crate) json_only: bool,
    /// The server's `shutdown_grace`, copied by [`HttpConfig::for_server`].
    pub(crate) shutdown_grace: Duration,
    /// Set by the deprecated `with_max_body_bytes` and `with_shutdown_grace`: they win over the
    /// server's values, as they did, until they go.
    pub(crate) pinned: Pinned,
    /// `None`: chosen from the bind address ([`HttpConfig::drain_delay`]).
    pub(crate) drain_delay: Option<Duration>,
    pub(crate) events: Arc<dyn EventStore>,
    pub(crate) mount_prefix: String,
    pub(crate) route: Option<RouteToken>,
    pub(crate) sessions: Option<Arc<dyn SessionStore>>,
    pub(crate) instance_header: Option<http::HeaderValue>,
    pub(crate) session_era: SessionEra,
    /// `None`: the default ([`HttpConfig::server_card`]).
    pub(crate) server_card: Option<bool>,
    #[cfg(feature = "auth")]
    pub(crate) auth: Option<Arc<crate::auth::Auth>>,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("addr", &self.addr)
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_sessions", &self.max_sessions)
            .field("max_connections", &self.max_connections)
            .field("drain_delay", &self.drain_delay)
            .field("session_era", &self.session_era)
            .finish_non_exhaustive()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            addr: "127.0.0.1:8000".into(),
            path: "/mcp".into(),
            allowed_hosts: None,
            allowed_origins: Vec::new(),
            max_body_bytes: Limits::default().max_message_bytes,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 10_000,
            idle_connection_timeout: Duration::from_secs(60),
            max_in_flight_per_client: 128,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            sse_keep_alive: Duration::from_secs(15),
            sse_retry: Duration::from_secs(3),
            legacy_sse: true,
            json_only: false,
            shutdown_grace: Limits::default().shutdown_grace,
            pinned: Pinned::default(),
            drain_delay: None,
            events: Arc::new(MemoryEventStore::new(256)),
            mount_prefix: String::new(),
            route: None,
            sessions: None,
            instance_header: None,
            session_era: SessionEra::Serve,
            server_card: None,
            #[cfg(feature = "auth")]
            auth: None,
        }
    }
}

impl HttpConfig {
    /// Defaults, listening on `addr` (e.g. `127.0.0.1:8000`).
    pub fn new(addr: impl Into<String>) -> Self {
        HttpConfig {
            addr: addr.into(),
            ..HttpConfig::default()
        }
    }

    /// Applies what the environment configures of an HTTP server, over what the code set:
    ///
    /// - `MCP_ALLOWED_ORIGINS=ORIGIN,...`: [`HttpConfig::allowed_origins`];
    /// - `MCP_ALLOWED_HOSTS=HOST,...`: [`HttpConfig::allowed_hosts`] (the `Host` names a
    ///   reverse proxy forwards);
    /// - `MCP_ROUTE_TOKEN=TOKEN`: [`HttpConfig::route_token`];
    /// - `MCP_DRAIN_DELAY=SECONDS`: [`HttpConfig::drain_delay`] (0 to 600, decimals allowed);
    /// - `MCP_INSTANCE_HEADER=NAME`: [`HttpConfig::instance_header`];
    /// - `MCP_SESSION_ERA=serve|stateless|reject`: [`HttpConfig::session_era`];
    /// - `MCP_SERVER_CARD=on|off`: [`HttpConfig::server_card`];
    /// - `MCP_AUTH_ISSUER`, `MCP_AUTH_RESOURCE`, `MCP_AUTH_SCOPES` (with the `auth` feature):
    ///   `HttpConfig::auth`.
    ///
    /// An unset or empty variable keeps the code's setting. `run!()` and
    /// [`Server::serve`](crate::Server::serve) call this; a program that calls
    /// [`serve_http`](crate::transport::serve_http) itself calls it too:
    ///
    /// ```no_run
    /// # async fn serve(server: mcp_runtime::Server) -> std::io::Result<()> {
    /// use mcp_runtime::transport::{HttpConfig, serve_http};
    /// serve_http(server, HttpConfig::new("0.0.0.0:8000").with_env()?).await
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// A variable that is set but unusable, with a message that names it.
    pub fn with_env(self) -> io::Result<Self> {
        let mut config = self;
        if let Some(raw) = var("MCP_ALLOWED_ORIGINS")? {
            let origins =
                parse_origins(&raw).map_err(|e| invalid(format!("MCP_ALLOWED_ORIGINS: {e}")))?;
            config = config.allowed_origins(origins);
        }
        if let Some(raw) = var("MCP_ALLOWED_HOSTS")? {
            let hosts =
                parse_hosts(&raw).map_err(|e| invalid(format!("MCP_ALLOWED_HOSTS: {e}")))?;
            config = config.allowed_hosts(hosts);
        }
        if let Some(token) = route_token_from(var("MCP_ROUTE_TOKEN")?.as_deref())? {
            config = config.route_token(token);
        }
        if let Some(raw) = var("MCP_DRAIN_DELAY")? {
            let delay =
                parse_drain_delay(&raw).map_err(|e| invalid(format!("MCP_DRAIN_DELAY: {e}")))?;
            config = config.drain_delay(delay);
        }
        if let Some(raw) = var("MCP_INSTANCE_HEADER")? {
            let name = http::HeaderValue::from_str(raw.trim()).map_err(|_| {
                invalid(format!(
                    "MCP_INSTANCE_HEADER={raw:?}: not a header value (control characters)"
                ))
            })?;
            config = config.instance_header(name);
        }
        if let Some(raw) = var("MCP_SESSION_ERA")? {
            let era = raw
                .parse::<SessionEra>()
                .map_err(|e| invalid(format!("MCP_SESSION_ERA: {e}")))?;
            config = config.session_era(era);
        }
        if let Some(raw) = var("MCP_SERVER_CARD")? {
            let on = match raw.trim().to_ascii_lowercase().as_str() {
                "on" | "true" | "1" => true,
                "off" | "false" | "0" => false,
                _ => {
                    return Err(invalid(format!("MCP_SERVER_CARD={raw:?}: use on or off")));
                }
            };
            config = config.server_card(on);
        }
        auth_from_env(config)
    }

    /// The MCP endpoint's path (default `/mcp`; `/mcp/` is served too).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// `Host` header values to accept (`name` or `name:port`). By default a request that comes
    /// in through a loopback address (the server bound to loopback, or bound to `0.0.0.0`/`[::]`
    /// and reached through 127.0.0.1 or `::1`) must name a loopback host, and one through any
    /// other address may name any host. Behind a reverse proxy on the same machine that
    /// forwards the public `Host`, list the public names here.
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Browser origins to accept besides loopback ones (`https://app.example.com`, compared
    /// exactly but for case: no path, no trailing `/`, no wildcard). A request with any other
    /// non-loopback `Origin` gets 403.
    ///
    /// The same list turns on CORS for these origins (and only these, loopback ones included
    /// only when listed): preflights are answered and every response carries
    /// `Access-Control-Allow-Origin` and `Access-Control-Expose-Headers`, so a page served from
    /// a listed origin can use the endpoint. With no origins listed (the default) no CORS header
    /// is ever sent. One list rather than two because an origin the server would answer with
    /// CORS but refuse with 403, or the reverse, is never what a deployment means.
    pub fn allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        origins: I,
    ) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// How long a client may take to send its request headers (default 10 s).
    pub fn header_read_timeout(mut self, t: Duration) -> Self {
        self.header_read_timeout = t;
        self
    }

    /// How long a client may take to send a request body, from its first byte on (default
    /// 30 s: 4 MiB at about 1 Mbit/s). A body still incomplete then gets 408 and the
    /// connection is closed, so a trickled body holds no task, buffer or session slot.
    pub fn body_read_timeout(mut self, t: Duration) -> Self {
        self.body_read_timeout = t;
        self
    }

    /// The most client connections open at once (default 10,000); one more is closed as soon
    /// as it is accepted. Idle keep-alive connections count, so this also bounds the memory a
    /// crowd of idle clients can hold. On Unix, serving raises the process's open-file limit
    /// to its hard maximum and caps connections 64 below it, so a crowd meets this cap rather
    /// than `accept` failing for everyone.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long a connection may stay open with no request in progress (default 60 s; a new
    /// connection gets the header read timeout for its first request). A request in progress,
    /// an SSE stream included, is never idle. Silent connections would otherwise hold a place
    /// under [`max_connections`](Self::max_connections) forever.
    pub fn idle_connection_timeout(mut self, t: Duration) -> Self {
        self.idle_connection_timeout = t;
        self
    }

    /// The most 2026-07-28 requests one client may have in progress at once, open
    /// `subscriptions/listen` streams included (default 128); one more gets 429 with
    /// `Retry-After`. Stateless clients share the server's `max_in_flight` and `max_listens`:
    /// this keeps one of them from taking every slot. A client is the principal a token
    /// verifier named ([`HttpConfig::auth`]), wherever it connects from; without one, its IP
    /// address. An identity nobody verified (the `Authorization` header as sent, or what
    /// `ServerBuilder::request_state_caller` reads from the headers) only narrows that: the
    /// request counts against its address and that identity, so made-up headers cannot open
    /// new buckets. Behind a reverse proxy without token verification every client shares the
    /// proxy's address: raise this limit there.
    pub fn max_in_flight_per_client(mut self, n: usize) -> Self {
        self.max_in_flight_per_client = n.max(1);
        self
    }

    /// How long an unused session lives (default 30 min).
    pub fn session_idle_timeout(mut self, t: Duration) -> Self {
        self.session_idle_timeout = t;
        self
    }

    /// The most sessions at once (default 10,000). At the limit, `initialize` ends the session
    /// idle the longest that has nothing running and no stream open; when all are busy it
    /// gets 503 with `Retry-After`.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// Interval of keep-alive comments (`: keep-alive`) on SSE streams that have nothing else
    /// to send: every kind (session GET streams, POST answers that became streams,
    /// `subscriptions/listen` streams, resumed streams and the HTTP+SSE transport's stream).
    ///
    /// Default and maximum 15 s: proxies close a response that is silent for longer than
    /// their read timeout (nginx's `proxy_read_timeout` is 60 s by default; some load
    /// balancers use 30 s), so a longer interval is lowered to 15 s, with a warning, rather
    /// than refused. The minimum is 1 s (a shorter one is raised to it): an interval near zero
    /// would only flood the client.
    pub fn sse_keep_alive(mut self, t: Duration) -> Self {
        if t > MAX_SSE_KEEP_ALIVE {
            tracing::warn!(
                asked_ms = t.as_millis() as u64,
                "sse_keep_alive: proxies drop SSE streams silent for long; using 15 s"
            );
        }
        self.sse_keep_alive = t.clamp(MIN_SSE_KEEP_ALIVE, MAX_SSE_KEEP_ALIVE);
        self
    }

    /// Always answer with one JSON document, never an SSE stream: progress and log
    /// notifications of HTTP requests are then dropped (default off). For clients or proxies
    /// that cannot read SSE.
    pub fn json_only(mut self, on: bool) -> Self {
        self.json_only = on;
        self
    }

    /// Serve the deprecated HTTP+SSE transport (`GET /sse`, `POST /messages`) for 2024-11-05
    /// clients (default on).
    pub fn legacy_sse(mut self, on: bool) -> Self {
        self.legacy_sse = on;
        self
    }

    /// Where SSE events are kept for resumption (default: in memory, 256 per stream).
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.events = store;
        self
    }

    /// The instance's route token: every session id it mints starts with it
    /// (`<token>-<32 hex digits>`), so a load balancer routes a session to its instance
    /// with a `map` on the `Mcp-Session-Id` prefix. Default: random per process (the runner
    /// reads `MCP_ROUTE_TOKEN`).
    pub fn route_token(mut self, token: RouteToken) -> Self {
        self.route = Some(token);
        self
    }

    /// Names this instance in an `X-Mcp-Instance` header on every answer (health checks
    /// included), to see which instance of a fleet a load balancer picked. Off by default: it
    /// tells clients something about the deployment. The runner reads `MCP_INSTANCE_HEADER`.
    ///
    /// ```
    /// use mcp_runtime::http::HeaderValue;
    /// use mcp_runtime::transport::HttpConfig;
    /// let config = HttpConfig::new("0.0.0.0:8001").instance_header(HeaderValue::from_static("i1"));
    /// # let _ = config;
    /// ```
    pub fn instance_header(mut self, name: http::HeaderValue) -> Self {
        self.instance_header = Some(name);
        self
    }

    /// How clients of the session era (protocol 2025-11-25 and earlier, which open a session
    /// with `initialize`) are served: with sessions ([`SessionEra::Serve`], the default),
    /// one request at a time with no session table ([`SessionEra::Stateless`]), or not at all
    /// ([`SessionEra::Reject`], a 400 with -32022 naming 2026-07-28). 2026-07-28 clients are
    /// served the same in every position. [`SessionEra`] has the table of what each position
    /// costs; `run!()` reads `MCP_SESSION_ERA` (`serve`, `stateless`, `reject`).
    ///
    /// ```
    /// use mcp_runtime::transport::HttpConfig;
    /// use mcp_runtime::transport::http::SessionEra;
    /// let config = HttpConfig::new("0.0.0.0:8000").session_era(SessionEra::Reject);
    /// # let _ = config;
    /// ```
    pub fn session_era(mut self, era: SessionEra) -> Self {
        self.session_era = era;
        self
    }

    /// Serves the server card (SEP-2127) at `<path>/server-card` (`/mcp/server-card`), as
    /// `application/mcp-server-card+json`, to anyone (CORS `*`, `Cache-Control: public,
    /// max-age=3600`, an `ETag`). Default: on unless [`auth`](Self::auth) is configured (the card
    /// tells who the server is, which an authorizing server tells token holders only). A server
    /// without a reverse-DNS name ([`ServerBuilder::card_name`](crate::ServerBuilder::card_name))
    /// has no card either way. The same setting serves the AI Catalog at
    /// `/.well-known/ai-catalog.json` with the card as its one entry. The runner reads
    /// `MCP_SERVER_CARD=on|off`.
    pub fn server_card(mut self, on: bool) -> Self {
        self.server_card = Some(on);
        self
    }

    /// Keeps session-era sessions in `store` too (default: in this instance only), so an
    /// instance that meets a session it does not hold restores it instead of answering 404.
    /// Its expiry is the session idle timeout, pushed back at most once a minute per session
    /// in use. A request whose session cannot be looked up because the store fails gets 503
    /// (never 404, which would make the client drop its session). See [`SessionStore`] for
    /// what moves between instances and what does not.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// The path prefix an app mounts [`McpService`](super::McpService) under (e.g. `/api` for
    /// axum's `nest_service("/api", …)`), which the service does not see: the HTTP+SSE
    /// transport's `endpoint` event names `/api/messages`, where the client must post. Leading
    /// `/` added, trailing `/` removed; default none.
    pub fn mount_prefix(mut self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        let trimmed = prefix.trim_matches('/');
        self.mount_prefix = if trimmed.is_empty() {
            String::new()
        } else {
            format!("/{trimmed}")
        };
        self
    }

    /// How long the server keeps serving after a shutdown signal (SIGTERM, SIGINT, or
    /// [`McpService::shutdown`](super::McpService::shutdown)) while `/readyz` already answers
    /// 503, so that load balancers take the instance out of rotation before it stops accepting
    /// connections. Requests that arrive during the delay are served as usual. A second
    /// signal skips the rest of the delay. Then the server stops accepting, ends
    /// `subscriptions/listen` streams with their result and session SSE streams, and gives
    /// running requests the server's
    /// [shutdown grace](crate::ServerBuilder::shutdown_grace) to finish.
    ///
    /// Default: **5 s** when [`serve_http`](super::serve_http) listens on a non-loopback
    /// address, **none** on loopback and for an [`McpService`](super::McpService) mounted in an
    /// app (which cannot tell where its host listens). Load balancers need a few seconds to
    /// notice: HAProxy with `check inter 1s fall 2` takes 2 s, Kubernetes a few seconds to take
    /// a terminating pod's endpoint out of its Services; 5 s plus the 5 s grace stays well
    /// within Kubernetes' default 30 s termination grace period. A developer stopping a server
    /// on loopback should not wait. A load balancer on the same machine (nginx in front of
    /// `127.0.0.1:8001`) is the exception: set the delay explicitly, or with the environment
    /// variable `MCP_DRAIN_DELAY` (seconds) that [`run!`](crate::run) reads. Health checks
    /// slower than the default (an AWS ALB checks every 5 to 30 s) need a longer delay.
    pub fn drain_delay(mut self, t: Duration) -> Self {
        self.drain_delay = Some(t);
        self
    }

    /// The drain delay of a server listening on a non-loopback address (`public`), or on
    /// loopback or mounted in an app.
    pub(crate) fn drain_delay_for(&self, public: bool) -> Duration {
        match self.drain_delay {
            Some(t) => t,
            None if public => DEFAULT_DRAIN_DELAY,
            None => Duration::ZERO,
        }
    }

    /// Makes the server an OAuth 2.1 resource server: every request to the MCP endpoint (and
    /// the HTTP+SSE routes) needs a valid bearer token, its principal binds sessions,
    /// `requestState` and tasks, and the RFC 9728 metadata is served (see [`Auth`]).
    ///
    /// [`Auth`]: crate::auth::Auth
    #[cfg(feature = "auth")]
    pub fn auth(mut self, auth: crate::auth::Auth) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// This configuration as it serves `server`: the body limit and the shutdown grace are the
    /// server's ([`ServerBuilder::max_message_bytes`], [`ServerBuilder::shutdown_grace`]),
    /// which stdio honours too, unless the deprecated setters of this type pinned them.
    ///
    /// [`ServerBuilder::max_message_bytes`]: crate::ServerBuilder::max_message_bytes
    /// [`ServerBuilder::shutdown_grace`]: crate::ServerBuilder::shutdown_grace
    pub(crate) fn for_server(mut self, server: &crate::Server) -> Self {
        let limits = &server.inner.limits;
        self.max_body_bytes = self
            .pinned
            .max_body_bytes
            .unwrap_or(limits.max_message_bytes);
        self.shutdown_grace = self.pinned.shutdown_grace.unwrap_or(limits.shutdown_grace);
        self
    }
}

/// `MCP_ROUTE_TOKEN`, if set: a bad value is an error naming the variable.
fn route_token_from(raw: Option<&str>) -> io::Result<Option<RouteToken>> {
    raw.map(|raw| {
        RouteToken::new(raw).map_err(|e| invalid(format!("MCP_ROUTE_TOKEN={raw:?}: {e}")))
    })
    .transpose()
}

/// `MCP_AUTH_ISSUER` / `MCP_AUTH_RESOURCE` / `MCP_AUTH_SCOPES` make an HTTP server a resource
/// server (HTTP only: a stdio server belongs to its client).
fn auth_from_env(config: HttpConfig) -> io::Result<HttpConfig> {
    #[cfg(feature = "auth")]
    match crate::auth::Auth::from_env() {
        None => Ok(config),
        Some(Ok(auth)) => Ok(config.auth(auth)),
        Some(Err(e)) => Err(invalid(e.to_string())),
    }
    #[cfg(not(feature = "auth"))]
    Ok(config)
}

/// The longest drain delay `MCP_DRAIN_DELAY` may ask for: more is a typo, not a plan (an
/// orchestrator kills the process long before).
const MAX_DRAIN_DELAY_SECS: f64 = 600.0;

/// `MCP_DRAIN_DELAY`'s value: seconds, a whole or decimal number from 0 to 600.
fn parse_drain_delay(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let secs: f64 = raw
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite())
        .ok_or_else(|| format!("{raw:?} is not a number of seconds (e.g. 5 or 0.5)"))?;
    if !(0.0..=MAX_DRAIN_DELAY_SECS).contains(&secs) {
        return Err(format!(
            "{raw} seconds is out of range (0 to {MAX_DRAIN_DELAY_SECS})"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `MCP_ALLOWED_ORIGINS`: comma-separated origins, each `http://` or `https://` and a host with
/// an optional port, nothing after it (the `Origin` a browser sends is compared exactly, so
/// anything else would never match).
fn parse_origins(raw: &str) -> Result<Vec<String>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(|origin| {
            let origin = origin.strip_suffix('/').unwrap_or(origin);
            match super::origin_problem(origin) {
                Some(why) => Err(why),
                None => Ok(origin.to_owned()),
            }
        })
        .collect()
}

/// `MCP_ALLOWED_HOSTS`: comma-separated `Host` values, `name` or `name:port` (a URL or a path
/// would never match a `Host` header, so it is an error rather than a dead entry).
fn parse_hosts(raw: &str) -> Result<Vec<String>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|host| {
            let bad = host.contains("://")
                || host
                    .bytes()
                    .any(|b| !(b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b)));
            if bad {
                Err(format!(
                    "{host:?} is not a host name (give `name` or `name:port`, e.g. mcp.example.com)"
                ))
            } else {
                Ok(host.to_ascii_lowercase())
            }
        })
        .collect()
}

/// What the deprecated per-transport setters pinned (`None`: the server's value).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pinned {
    max_body_bytes: Option<usize>,
    shutdown_grace: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;

    fn server(max_message_bytes: usize, shutdown_grace: Duration) -> Server {
        Server::builder()
            .max_message_bytes(max_message_bytes)
            .shutdown_grace(shutdown_grace)
            .build()
            .unwrap()
    }

    /// Serves `server` with `config` on a loopback port until `stop` is notified.
    async fn serve(
        server: Server,
        config: HttpConfig,
        stop: Arc<tokio::sync::Notify>,
    ) -> (u16, tokio::task::JoinHandle<io::Result<()>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let signal = move || {
            let stop = stop.clone();
            async move { stop.notified().await }
        };
        let serving = tokio::spawn(super::super::serve_until(server, listener, config, signal));
        (port, serving)
    }

    /// Sends the head of a `POST /mcp` announcing a body of `len` bytes, then the first `sent`
    /// bytes of a `ping` padded with spaces to `len`.
    async fn post(port: u16, len: usize, sent: usize) -> tokio::net::TcpStream {
        use tokio::io::AsyncWriteExt as _;
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {len}\r\n\
             Connection: close\r\n\r\n"
        );
        let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
        body.resize(len, b' ');
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&body[..sent.min(len)]).await.unwrap();
        stream
    }

    /// The status code of a `POST /mcp` announcing a body of `len` bytes. The body is sent only
    /// when `send_body`: one over the limit is refused on its `Content-Length` before it is
    /// read, and a body left unread could reset the connection before the answer is read.
    async fn post_status(port: u16, len: usize, send_body: bool) -> String {
        use tokio::io::AsyncReadExt as _;
        let mut stream = post(port, len, if send_body { len } else { 0 }).await;
        let mut answer = Vec::new();
        let read = stream.read_to_end(&mut answer);
        let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
        let answer = String::from_utf8_lossy(&answer);
        answer.split(' ').nth(1).unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn http_bodies_are_bounded_by_the_servers_message_limit() {
        let stop = Arc::new(tokio::sync::Notify::new());
        let small = server(2048, Duration::from_secs(5));
        let (port, serving) = serve(small.clone(), HttpConfig::default(), stop.clone()).await;
        let under = post_status(port, 1000, true).await;
        assert_ne!(under, "413");
        assert!(!under.is_empty(), "no answer");
        assert_eq!(post_status(port, 3000, false).await, "413");
        stop.notify_one();
        serving.await.unwrap().unwrap();
        // The deprecated per-HTTP setter still wins over the server's value.
        #[allow(deprecated)]
        let pinned = HttpConfig::default().with_max_body_bytes(8192);
        let (port, serving) = serve(small, pinned, stop.clone()).await;
        assert_eq!(post_status(port, 3000, true).await, under);
        assert_eq!(post_status(port, 9000, false).await, "413");
        stop.notify_one();
        serving.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn http_running_requests_get_the_servers_shutdown_grace() {
        let stop = Arc::new(tokio::sync::Notify::new());
        let grace = Duration::from_millis(300);
        let (port, serving) =
            serve(server(4 << 20, grace), HttpConfig::default(), stop.clone()).await;
        // A request whose body is still coming (the body read timeout is 30 s) keeps its
        // connection busy past any grace.
        let _busy = post(port, 1000, 10).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let stopping = std::time::Instant::now();
        stop.notify_one();
        tokio::time::timeout(Duration::from_secs(10), serving)
            .await
            .expect("the server stops")
            .unwrap()
            .unwrap();
        let took = stopping.elapsed();
        // HTTP's own default (5 s) would be used if it ignored the server's grace.
        assert!(
            took >= grace && took < Duration::from_secs(3),
            "stopped after {took:?}, with a grace of {grace:?}"
        );
    }

    #[test]
    fn the_body_limit_and_the_grace_are_the_servers_unless_pinned() {
        let server = server(2048, Duration::from_millis(300));
        let config = HttpConfig::default().for_server(&server);
        assert_eq!(config.max_body_bytes, 2048);
        assert_eq!(config.shutdown_grace, Duration::from_millis(300));
        #[allow(deprecated)]
        let pinned = HttpConfig::default()
            .with_max_body_bytes(8192)
            .with_shutdown_grace(Duration::from_secs(1))
            .for_server(&server);
        assert_eq!(pinned.max_body_bytes, 8192);
        assert_eq!(pinned.shutdown_grace, Duration::from_secs(1));
    }

    #[test]
    fn route_tokens_from_the_environment_are_checked() {
        assert_eq!(route_token_from(None).unwrap(), None);
        assert_eq!(
            route_token_from(Some("i1")).unwrap().unwrap().as_str(),
            "i1"
        );
        for bad in ["", "i-1", "a very long route token"] {
            let e = route_token_from(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("MCP_ROUTE_TOKEN="), "{e}");
        }
    }

    #[test]
    fn origins_from_the_environment_are_checked() {
        assert_eq!(
            parse_origins(" https://app.example.com, http://127.0.0.1:5173/ ,").unwrap(),
            ["https://app.example.com", "http://127.0.0.1:5173"]
        );
        for bad in [
            "app.example.com",
            "https://*.example.com",
            "https://a.example/path",
            "ftp://x",
            "https://",
        ] {
            let e = parse_origins(bad).unwrap_err();
            assert!(e.contains("is not an origin"), "{bad}: {e}");
        }
    }

    #[test]
    fn hosts_from_the_environment_are_checked() {
        assert_eq!(
            parse_hosts(" MCP.example.com, 127.0.0.1:8080 ,,[::1]:80").unwrap(),
            ["mcp.example.com", "127.0.0.1:8080", "[::1]:80"]
        );
        for bad in ["https://mcp.example.com", "mcp.example.com/mcp", "a b"] {
            let e = parse_hosts(bad).unwrap_err();
            assert!(e.contains("is not a host name"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_drain_delay_from_the_environment_is_checked() {
        assert_eq!(parse_drain_delay("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_drain_delay(" 0.25 "), Ok(Duration::from_millis(250)));
        assert_eq!(parse_drain_delay("0"), Ok(Duration::ZERO));
        for bad in ["-1", "601", "NaN", "inf", "5s", "", "1e400"] {
            assert!(parse_drain_delay(bad).is_err(), "{bad:?} accepted");
        }
        assert!(
            parse_drain_delay("5s")
                .unwrap_err()
                .contains("not a number")
        );
        assert!(
            parse_drain_delay("-1")
                .unwrap_err()
                .contains("out of range")
        );
    }

    #[test]
    fn sse_keep_alive_stays_between_one_and_fifteen_seconds() {
        let at = |t| HttpConfig::default().sse_keep_alive(t).sse_keep_alive;
        assert_eq!(
            HttpConfig::default().sse_keep_alive,
            Duration::from_secs(15)
        );
        assert_eq!(at(Duration::from_secs(60)), Duration::from_secs(15));
        assert_eq!(at(Duration::from_secs(5)), Duration::from_secs(5));
        assert_eq!(at(Duration::ZERO), Duration::from_secs(1));
    }

    #[test]
    fn the_drain_delay_defaults_by_bind_address() {
        let default = HttpConfig::default();
        assert_eq!(default.drain_delay_for(false), Duration::ZERO);
        assert_eq!(default.drain_delay_for(true), Duration::from_secs(5));
        let set = HttpConfig::default().drain_delay(Duration::from_millis(1500));
        assert_eq!(set.drain_delay_for(false), Duration::from_millis(1500));
        assert_eq!(set.drain_delay_for(true), Duration::from_millis(1500));
        let none = HttpConfig::default().drain_delay(Duration::ZERO);
        assert_eq!(none.drain_delay_for(true), Duration::ZERO);
    }
}
