//! Streamable HTTP, hand-built on hyper: one endpoint (default `/mcp`) serving both protocol
//! eras, sessions for the session era, SSE streams, and the deprecated HTTP+SSE transport.
//!
//! - **Session era** (`initialize`, 2024-11-05 … 2025-11-25): `initialize` issues an
//!   `Mcp-Session-Id`; later requests without it get 400, with an unknown one 404;
//!   notifications and client responses get 202; `GET` opens the session's SSE stream (priming
//!   event, `retry` hint, keep-alive comments); `DELETE` ends the session.
//! - **Stateless era** (2026-07-28): `POST` only; `MCP-Protocol-Version`, `Mcp-Method` and
//!   `Mcp-Name` must agree with the body (400 with -32020 otherwise); errors map to statuses as
//!   the spec says (unknown method 404, version or capability problems 400); closing the
//!   connection cancels the request.
//! - **Safe by default** ([`HttpConfig`]): loopback bind, Host and Origin checks (403),
//!   body limit (413), header-read timeout, bounded sessions with idle expiry, graceful
//!   shutdown, `TCP_NODELAY`, one log line per request (health checks at debug level only).
//! - **In a fleet** (several instances behind a load balancer): `GET /healthz` answers 200 while
//!   the process serves and `GET /readyz` 200 until shutdown begins, then 503 (plain text, no
//!   detail; before the Host, Origin and authorization checks, so a load balancer's health check
//!   needs no allowed host or token; other methods 405). On SIGTERM or SIGINT the server drains:
//!   `/readyz` turns 503 at once, requests are still served for the drain delay
//!   ([`HttpConfig::drain_delay`], `MCP_DRAIN_DELAY`; 5 s on a non-loopback address, none
//!   on loopback) while load balancers take the instance out, then (on Linux) new handshakes
//!   stop for a moment while those begun complete, and the listener closes,
//!   `subscriptions/listen` streams end with their `complete` result, session SSE streams end,
//!   and running requests have the server's shutdown grace
//!   ([`ServerBuilder::shutdown_grace`](crate::ServerBuilder::shutdown_grace), which stdio
//!   honours too) to finish. A second signal skips the rest of the delay; one more closes what
//!   is still open.
//!   Every SSE response carries `X-Accel-Buffering: no` (nginx passes events on at once) and a
//!   keep-alive comment at least every 15 s ([`HttpConfig::sse_keep_alive`]), so proxies
//!   with a read timeout keep idle streams open.
//! - **Browsers**: CORS for the origins listed with [`HttpConfig::allowed_origins`], and
//!   nothing for any other.
//! - **Embedding**: [`McpService`] is the endpoint as a hyper (and, with the `tower` feature,
//!   tower) service for an app that runs its own server; [`serve_http`] serves through it.

mod auth;
mod body;
mod card;
mod client_limits;
mod config;
mod cors;
mod events;
mod guard;
mod handshakes;
mod health;
mod idle;
mod legacy;
mod mount;
mod origin;
mod route;
mod service;
mod session_era;
pub(crate) mod sessions;
pub(crate) mod shared;
pub(crate) mod stateless;
mod stream;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

pub use config::HttpConfig;
#[allow(deprecated)]
pub use events::Replay;
pub use events::{
    EventFuture, EventReplay, EventStore, EventStoreError, MemoryEventStore, StoredEvent,
    WaitFuture,
};
pub use mount::{McpBody, McpService, ResponseFuture};
pub use route::{InvalidRouteToken, RouteToken};
pub use session_era::SessionEra;
#[allow(deprecated)]
pub use sessions::Touched;
pub use sessions::{
    MemorySessionStore, SessionFuture, SessionRecord, SessionStore, SessionStoreError, TouchOutcome,
};

pub(crate) use origin::origin_problem;

use crate::Server;

/// How long a connection accepted as the listener closes has to send its first request before
/// the graceful shutdown counts it idle.
const ACCEPTED_SETTLE: Duration = Duration::from_millis(50);

/// Serves `server` over Streamable HTTP on `config`'s address until SIGINT/SIGTERM, then
/// drains: `/readyz` answers 503 at once, requests are served for the
/// [drain delay](HttpConfig::drain_delay) (a second signal cuts it short), each HTTP/1
/// answer with `Connection: close` so a load balancer stops reusing connections; then no new
/// connections are accepted (those already queued or, on Linux, with their handshake under way
/// are served), `subscriptions/listen` streams
/// end with their result and running requests get the server's
/// [shutdown grace](crate::ServerBuilder::shutdown_grace) to finish (a further signal closes
/// them at once). Request bodies are bounded by the server's
/// [`max_message_bytes`](crate::ServerBuilder::max_message_bytes) (413).
pub async fn serve_http(server: Server, config: HttpConfig) -> io::Result<()> {
    let listener = TcpListener::bind(&config.addr).await?;
    serve_http_on(server, listener, config).await
}

/// Serves `server` on an already bound listener (e.g. port 0 in tests; `config.addr` is unused).
pub async fn serve_http_on(
    server: Server,
    listener: TcpListener,
    config: HttpConfig,
) -> io::Result<()> {
    serve_until(server, listener, config, super::shutdown_signal).await
}

/// Descriptors kept free of client connections (the listener, stdio, files and sockets tools
/// open).
#[cfg(unix)]
const SPARE_DESCRIPTORS: u64 = 64;

/// The connection limit this process can honour: the open-file limit is raised to its hard
/// maximum (as Go does at start-up), and connections are capped below it, so a crowd of
/// clients meets the connection cap (closed at once, the rest served) rather than `accept`
/// failing for everyone with "too many open files".
fn connection_limit(configured: usize) -> usize {
    #[cfg(unix)]
    {
        // SAFETY: getrlimit and setrlimit only read and write the struct passed in.
        let soft = unsafe {
            let mut limit = std::mem::zeroed::<libc::rlimit>();
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return configured;
            }
            if limit.rlim_cur < limit.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit.rlim_cur = limit.rlim_max;
                }
            }
            limit.rlim_cur
        };
        let room = usize::try_from(soft.saturating_sub(SPARE_DESCRIPTORS)).unwrap_or(usize::MAX);
        if room < configured {
            tracing::warn!(
                configured,
                open_file_limit = soft,
                "the open-file limit allows fewer connections than configured; capping at {room}"
            );
            return room.max(1);
        }
    }
    configured
}

/// Completes when `future` does; never when there is none.
async fn or_never<F: std::future::Future<Output = ()> + Unpin>(future: Option<&mut F>) {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

/// One request of an accepted connection, answered by `mcp`; the connection counts as busy
/// while `active` lives (until the response's body is sent).
// One async fn rather than a block around `respond`'s future: a block that captures a future
// and awaits it holds room for it twice, and hyper moves each request's future into place.
async fn answer(
    mcp: McpService,
    peer: std::net::IpAddr,
    local_loopback: bool,
    memo: Option<Arc<auth::TokenMemo>>,
    req: http::Request<hyper::body::Incoming>,
    active: idle::Active,
) -> Result<http::Response<body::Body>, std::convert::Infallible> {
    let http1 = req.version() < http::Version::HTTP_2;
    let mut response = mcp.respond(peer, local_loopback, memo, req).await;
    // Draining: each connection closes after its answer, which a load balancer sees in the
    // answer, so it does not send a request on a connection the server is about to close (a
    // POST it could not safely retry).
    if http1 && mcp.is_draining() {
        response.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    Ok(response.map(|body| body.holding(active)))
}

/// The accept loop. `signal()` makes a future completing at the next shutdown signal: the first
/// starts the drain, one during the drain delay ends the delay, one during the grace closes
/// the connections still open. Returns once they are closed.
pub(crate) async fn serve_until<S, F>(
    server: Server,
    listener: TcpListener,
    config: HttpConfig,
    mut signal: S,
) -> io::Result<()>
where
    S: FnMut() -> F,
    F: std::future::Future<Output = ()>,
{
    let local = listener.local_addr()?;
    #[cfg(feature = "auth")]
    if let Some(auth) = &config.auth {
        auth.validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        tracing::info!(issuer = %auth.issuer, resource = %auth.resource, "authorization: bearer tokens required");
    }
    // Listening for the first signal before saying the server listens: one sent as soon as
    // the line below appears must start the drain, not end the process.
    let stop = signal();
    tracing::info!("serving MCP on http://{local}{}", config.path);
    crate::server::warn_if_request_state_key_is_ephemeral(&server, local);
    let drain_delay = config.drain_delay_for(!guard::is_loopback_ip(local.ip()));
    let mcp = McpService::new(server, config);
    let config = mcp.config();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout);
    // HTTP/2 has no header timeout: pings find dead peers, and a connection multiplexes a
    // bounded number of requests.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(Duration::from_secs(30)))
        .keep_alive_timeout(Duration::from_secs(20))
        .max_concurrent_streams(256);
    let max_connections = connection_limit(config.max_connections);
    let connections = Arc::new(tokio::sync::Semaphore::new(max_connections));
    let graceful = GracefulShutdown::new();
    // One accepted connection, served until it closes (or the graceful shutdown ends it).
    let serve = |stream: tokio::net::TcpStream, peer: std::net::SocketAddr| {
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tracing::warn!(%peer, limit = max_connections, "too many connections: closing a new one");
            drop(stream);
            return;
        };
        // Answers are small and latency matters: no Nagle delay.
        let _ = stream.set_nodelay(true);
        // The Host check follows the connection, not the bind: a server bound to `0.0.0.0`
        // reached through 127.0.0.1 is as open to DNS rebinding as one bound to loopback.
        let local_loopback = stream
            .local_addr()
            .is_ok_and(|a| guard::is_loopback_ip(a.ip()));
        let activity = Arc::new(idle::Activity::default());
        let io = idle::IdleIo::new(
            stream,
            activity.clone(),
            config.header_read_timeout,
            config.idle_connection_timeout,
        );
        let mcp = mcp.clone();
        let memo = auth::TokenMemo::for_connection(config);
        let service = service_fn(move |req| {
            let active = activity.begin();
            answer(
                mcp.clone(),
                peer.ip(),
                local_loopback,
                memo.clone(),
                req,
                active,
            )
        });
        let conn = builder
            .serve_connection(TokioIo::new(io), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    };
    tokio::pin!(stop);
    let mut signalled = false;
    // Set during the drain delay: its end, and the next signal.
    let mut delay: Option<Pin<Box<tokio::time::Sleep>>> = None;
    let mut again: Option<Pin<Box<F>>> = None;
    // After the drain delay: new handshakes are stopped and `delay` is the settle.
    let mut settling = false;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Too many open files and the like pass; the loop must not die.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop, if !signalled => {
                signalled = true;
                mcp.start_draining();
                if drain_delay.is_zero() {
                    break;
                }
                tracing::info!(
                    delay_ms = drain_delay.as_millis() as u64,
                    "draining: /readyz answers 503; serving on until load balancers notice \
                     (signal again to stop now)"
                );
                delay = Some(Box::pin(tokio::time::sleep(drain_delay)));
                again = Some(Box::pin(signal()));
                continue;
            }
            () = or_never(delay.as_mut()), if delay.is_some() => {
                // The drain delay is over: new handshakes stop, those begun complete and are
                // served, then the listener closes (see `handshakes`).
                if settling || handshakes::stop_new(&listener).is_err() {
                    break;
                }
                settling = true;
                delay = Some(Box::pin(tokio::time::sleep(handshakes::SETTLE)));
                continue;
            }
            () = or_never(again.as_mut()), if again.is_some() => {
                tracing::info!("signalled again: skipping the rest of the drain delay");
                again = None;
                break;
            }
        };
        serve(stream, peer);
    }
    // Connections the kernel completed but the loop had not taken yet would be reset by the
    // close, with the request a load balancer already sent on them: they are served first.
    while let Poll::Ready(Ok((stream, peer))) =
        std::future::poll_fn(|cx| Poll::Ready(listener.poll_accept(cx))).await
    {
        serve(stream, peer);
    }
    // Closed now rather than on return: a new connection is refused at once (a load balancer
    // retries it elsewhere) instead of waiting in the backlog for the grace to run out.
    drop(listener);
    mcp.start_draining();
    tracing::info!("shutting down: no new connections; finishing the requests in progress");
    // The connections just taken have not had their first request read: to hyper they are
    // idle, and the graceful shutdown would close them on it. A moment lets them read it.
    tokio::time::sleep(ACCEPTED_SETTLE).await;
    // Polled once before the endpoint stops: hyper reads no further request on any connection
    // (idle ones close, busy ones close after their response), so a request that a load
    // balancer sends on a kept-alive connection is never answered "shutting down" (which it
    // could not retry) but finds the connection closed before it was read.
    let mut grace = Box::pin(tokio::time::timeout(
        config.shutdown_grace,
        graceful.shutdown(),
    ));
    let early = std::future::poll_fn(|cx| Poll::Ready(grace.as_mut().poll(cx))).await;
    mcp.stop().await;
    let finished = match early {
        Poll::Ready(finished) => finished,
        // The drain delay's pending signal future, or a new one: a further signal ends the
        // grace.
        Poll::Pending => {
            let again = again.unwrap_or_else(|| Box::pin(signal()));
            tokio::select! {
                finished = grace => finished,
                () = again => {
                    tracing::warn!("signalled again: closing the connections still open");
                    Ok(())
                }
            }
        }
    };
    if finished.is_err() {
        tracing::warn!("connections still open after the grace period; closing them");
    }
    Ok(())
}
