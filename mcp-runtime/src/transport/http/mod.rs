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
//!   shutdown, `TCP_NODELAY`, one log line per request.

mod body;
mod config;
mod events;
mod guard;
mod legacy;
mod service;
pub(crate) mod session;
pub(crate) mod state;
pub(crate) mod stateless;
mod stream;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use config::HttpConfig;
pub use events::{EventStore, MemoryEventStore, Replay, StoredEvent, WaitFuture};

use crate::Server;
use crate::server::connection::{Connection, Wire};
use session::Sessions;
use state::Shared;

/// Serves `server` over Streamable HTTP on `config`'s address until SIGINT/SIGTERM.
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
    serve_until(server, listener, config, super::shutdown_signal()).await
}

/// The accept loop; returns after `stop` completes and connections drain (within the grace).
pub(crate) async fn serve_until(
    server: Server,
    listener: TcpListener,
    config: HttpConfig,
    stop: impl std::future::Future<Output = ()>,
) -> io::Result<()> {
    let local = listener.local_addr()?;
    tracing::info!("serving MCP on http://{local}{}", config.path);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let sessions = Sessions::new(config.max_sessions, config.session_idle_timeout);
    let state = Arc::new(Shared {
        stateless: Connection::stateless_only(server.clone(), Wire::HTTP),
        server,
        loopback: config.is_loopback_bind(local),
        sessions: sessions.clone(),
        shutdown: shutdown_rx,
        config,
    });
    let reaper = {
        let every = (state.config.session_idle_timeout / 4)
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        let events = state.config.events.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                for id in sessions.reap() {
                    events.remove_session(&id);
                }
            }
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(state.config.header_read_timeout);
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
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
            _ = &mut stop => break,
        };
        // Answers are small and latency matters: no Nagle delay.
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let service = service_fn(move |req| service::handle(state.clone(), req));
        let conn = builder
            .serve_connection(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    tracing::info!("shutting down: no new connections, draining");
    reaper.abort();
    let _ = shutdown_tx.send(true);
    state.stateless.cancel_all();
    if tokio::time::timeout(state.config.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the grace period; closing them");
    }
    Ok(())
}
