//! [`McpService`]: the MCP endpoint as a value, for an app that runs its own HTTP server.
//! [`serve_http`](super::serve_http) is this service behind an accept loop; everything a request
//! meets (guards, CORS, limits, sessions, both eras) is the same either way.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::{Notify, watch};
use tokio::task::AbortHandle;

use super::body::{Body, HttpResponse};
use super::config::HttpConfig;
use super::sessions::Sessions;
use super::shared::Shared;
use super::{client_limits, service};
use crate::Server;
use crate::server::connection::{Connection, Wire};

/// The error type request bodies may have.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The Streamable HTTP endpoint (and the legacy `/sse` and `/messages` routes, when on) as a
/// hyper [`Service`](hyper::service::Service), to mount in an app that owns the HTTP server;
/// with the `tower` feature also a `tower_service::Service`, for axum's `Router::route_service`
/// or `nest_service`.
///
/// It serves the path of [`HttpConfig::path`] (default `/mcp`) as the request reaches it:
/// mounted with `route_service("/api/mcp", …)` the path is `/api/mcp`, so configure that; under
/// `nest_service("/api", …)` axum strips the prefix and the default `/mcp` is right. Every other
/// path is 404. The Host and Origin checks, CORS, the body and in-flight limits, sessions and
/// their idle expiry apply as with [`serve_http`](super::serve_http); the settings of the
/// accept loop (connection cap, header and idle timeouts, bind address) are the host's.
///
/// - **The peer address**: the service does not see the connection. Insert the client's
///   [`std::net::SocketAddr`] into the request's extensions (with axum, a middleware copying
///   `ConnectInfo<SocketAddr>`'s value) to give each client its own in-flight limit; without it
///   every client that sends no credential shares one.
/// - **The Host check** cannot tell whether a request came in through a loopback address, so it
///   assumes it did: unless [`HttpConfig::allowed_hosts`] lists names, only loopback `Host`s
///   are accepted. An app reached by name lists its names.
/// - **Shutdown** is the host's: call [`shutdown`](Self::shutdown) when the app stops (e.g. in
///   axum's `with_graceful_shutdown` future). It turns `/readyz` to 503, waits the drain delay
///   if one is configured, then ends the SSE streams, which would otherwise hold the host's
///   drain open (`subscriptions/listen` streams with their final result), and stops tasks;
///   requests after it get 503.
/// - **Health checks**: `GET /healthz` (200 while serving) and `GET /readyz` (200, 503 once
///   shutdown began) are answered before the Host, Origin and authorization checks, as the
///   service sees the path: nested with axum's `nest_service("/api", …)` they are
///   `/api/healthz` and `/api/readyz` (the [mount prefix](HttpConfig::mount_prefix)).
///   Mounted with `route_service` on the MCP path alone, they are not reachable; route them
///   to the service too, or answer them in the app.
///
/// Clones share one endpoint (its sessions, limits and shutdown). Requests must be served inside
/// a Tokio runtime.
///
/// ```
/// # async fn demo(server: mcp_runtime::Server) {
/// use mcp_runtime::transport::{HttpConfig, McpService};
///
/// let mcp = McpService::new(server, HttpConfig::default());
/// // hand `mcp.clone()` to hyper's `serve_connection` or to an axum router, then at exit:
/// mcp.shutdown().await;
/// # }
/// ```
#[derive(Clone)]
pub struct McpService {
    endpoint: Arc<Endpoint>,
}

struct Endpoint {
    state: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    /// A second [`McpService::shutdown`] during the drain delay: skip the rest of it.
    hurry: Notify,
    /// The session reaper, started with the first request when the service was made outside
    /// a runtime.
    reaper: OnceLock<AbortHandle>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(reaper) = self.reaper.get() {
            reaper.abort();
        }
    }
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("config", &self.endpoint.state.config)
            .finish_non_exhaustive()
    }
}

impl McpService {
    /// The endpoint of `server` with `config` (its address is not used: the host listens).
    pub fn new(server: Server, config: HttpConfig) -> McpService {
        let config = config.for_server(&server);
        for origin in &config.allowed_origins {
            if let Some(why) = super::origin_problem(origin) {
                tracing::warn!("allowed_origins: {why}; no browser will match it");
            }
        }
        let (shutdown, shutdown_rx) = watch::channel(false);
        let sessions = Sessions::for_config(&config);
        let state = Arc::new(Shared {
            stateless: Connection::stateless_only(server.clone(), Wire::HTTP),
            server,
            sessions,
            clients: client_limits::ClientLimits::new(config.max_in_flight_per_client),
            shutdown: shutdown_rx,
            draining: AtomicBool::new(false),
            config,
        });
        let mcp = McpService {
            endpoint: Arc::new(Endpoint {
                state,
                shutdown,
                hurry: Notify::new(),
                reaper: OnceLock::new(),
            }),
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            mcp.start_reaper();
        }
        mcp
    }

    /// The configuration this endpoint serves with.
    pub fn config(&self) -> &HttpConfig {
        &self.endpoint.state.config
    }

    /// Drains and stops the endpoint. At once `/readyz` answers 503; for the
    /// [drain delay](HttpConfig::drain_delay) (none unless configured) requests are still
    /// served while the load balancer notices; then `subscriptions/listen` streams end with
    /// their result, session SSE streams end, running tasks stop and later requests get 503.
    /// Requests already running finish; the host decides how long to wait for them.
    ///
    /// Call it from the host's shutdown hook (in axum, the `with_graceful_shutdown` future:
    /// axum stops accepting when it returns, which is after the delay). A second call while
    /// the first waits out the delay (the host saw a second signal) ends the wait: both return
    /// once the endpoint is stopped. A call after that does nothing more.
    pub async fn shutdown(&self) {
        if !self.start_draining() {
            self.endpoint.hurry.notify_one();
            self.stop().await;
            return;
        }
        let delay = self.config().drain_delay_for(false);
        if !delay.is_zero() {
            tracing::info!(
                delay_ms = delay.as_millis() as u64,
                "draining: /readyz answers 503; serving on until the load balancer notices"
            );
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.endpoint.hurry.notified() => {
                    tracing::info!("shutdown asked again: skipping the rest of the drain delay");
                }
            }
        }
        self.stop().await;
    }

    /// Whether the endpoint drains or has stopped (`/readyz` answers 503).
    pub(crate) fn is_draining(&self) -> bool {
        self.endpoint.state.draining.load(Ordering::Relaxed)
    }

    /// Turns `/readyz` to 503; `false` if it already was.
    pub(crate) fn start_draining(&self) -> bool {
        !self.endpoint.state.draining.swap(true, Ordering::Relaxed)
    }

    /// Stops the endpoint (after the drain delay): SSE streams end, listen streams with their
    /// result, tasks stop, and later requests get 503. Other 2026-07-28 requests in flight
    /// run on: they finish within the host's grace (or are dropped with the process).
    pub(crate) async fn stop(&self) {
        let endpoint = &self.endpoint;
        endpoint.state.draining.store(true, Ordering::Relaxed);
        if endpoint.shutdown.send_replace(true) {
            return;
        }
        if let Some(reaper) = endpoint.reaper.get() {
            reaper.abort();
        }
        endpoint.state.stateless.end_listens();
        endpoint.state.server.inner.tasks.shutdown().await;
    }

    /// Whether [`shutdown`](Self::shutdown) was called.
    pub fn is_shut_down(&self) -> bool {
        *self.endpoint.shutdown.borrow()
    }

    fn start_reaper(&self) {
        self.endpoint.reaper.get_or_init(|| {
            let sessions = self.endpoint.state.sessions.clone();
            let every = (self.endpoint.state.config.session_idle_timeout / 4)
                .clamp(Duration::from_secs(1), Duration::from_secs(60));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    sessions.reap();
                    sessions.keep_busy().await;
                }
            })
            .abort_handle()
        });
    }

    /// One request, from `peer`, through a loopback local address or not, with its
    /// connection's [`TokenMemo`](super::auth::TokenMemo) if it has one: the one path every
    /// request takes, from the accept loop or from a host app.
    pub(crate) fn respond<B>(
        &self,
        peer: IpAddr,
        local_loopback: bool,
        memo: Option<Arc<super::auth::TokenMemo>>,
        req: Request<B>,
    ) -> impl Future<Output = HttpResponse> + Send + use<B>
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        self.start_reaper();
        service::handle(self.endpoint.state.clone(), peer, local_loopback, memo, req)
    }

    fn call_mounted<B>(&self, req: Request<B>) -> ResponseFuture
    where
        B: HttpBody + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        // Without the host's word, every anonymous client is one client: the in-flight limit
        // then holds for all of them together, which is the safe side.
        let peer = req
            .extensions()
            .get::<SocketAddr>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), SocketAddr::ip);
        // A host app's requests come with no connection of ours: nothing is remembered.
        let response = self.respond(peer, true, None, req);
        ResponseFuture(Box::pin(async move { Ok(response.await.map(McpBody)) }))
    }
}

/// The body of [`McpService`]'s responses: a JSON document, nothing, or an SSE stream.
pub struct McpBody(pub(crate) Body);

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpBody").finish_non_exhaustive()
    }
}

impl HttpBody for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}

/// The future of [`McpService`]'s `call`: it never fails (errors are HTTP responses).
pub struct ResponseFuture(
    Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>,
);

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl Future for ResponseFuture {
    type Output = Result<Response<McpBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().0.as_mut().poll(cx)
    }
}

impl<B> hyper::service::Service<Request<B>> for McpService
where
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, req: Request<B>) -> ResponseFuture {
        self.call_mounted(req)
    }
}

/// Always ready: the limits answer with 429 or 503 rather than applying back-pressure, as a
/// mounted route must (axum requires its services to be ready).
#[cfg(feature = "tower")]
impl<B> tower_service::Service<Request<B>> for McpService
where
    B: HttpBody + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> ResponseFuture {
        self.call_mounted(req)
    }
}
