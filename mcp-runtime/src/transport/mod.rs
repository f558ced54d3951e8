//! Transports: how a [`Server`](crate::Server) meets its clients.

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "stdio")]
pub(crate) mod stdio;

use std::fmt;

#[cfg(feature = "http")]
pub use http::{
    EventStore, HttpConfig, McpBody, McpService, MemoryEventStore, serve_http, serve_http_on,
};
#[cfg(feature = "stdio")]
pub use stdio::{serve_lines, serve_stdio};

/// Which transport to serve on.
///
/// `"stdio"` converts to [`Transport::Stdio`]; any other string is an HTTP listen address.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout (the default).
    Stdio,
    /// Streamable HTTP on this address (e.g. `127.0.0.1:8000`).
    Http(String),
}

impl Transport {
    /// Streamable HTTP on `addr`.
    pub fn http(addr: impl Into<String>) -> Self {
        Transport::Http(addr.into())
    }
}

impl From<&str> for Transport {
    fn from(s: &str) -> Self {
        match s.trim() {
            "stdio" | "" => Transport::Stdio,
            addr => Transport::Http(addr.to_owned()),
        }
    }
}

impl From<String> for Transport {
    fn from(s: String) -> Self {
        Transport::from(s.as_str())
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio => f.write_str("stdio"),
            Transport::Http(addr) => write!(f, "http://{addr}/mcp"),
        }
    }
}

/// Completes on SIGINT or SIGTERM (Ctrl-C elsewhere). The handlers are installed by this call,
/// not at the future's first poll: a signal that arrives in between (a supervisor's SIGTERM
/// right after the server said it listens) is seen, instead of meeting the default action,
/// which ends the process at once, without a drain.
#[cfg(all(unix, any(feature = "stdio", feature = "http")))]
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let streams = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    );
    async move {
        let (Ok(mut term), Ok(mut int)) = streams else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
}

#[cfg(all(not(unix), any(feature = "stdio", feature = "http")))]
pub(crate) async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await
    }
}
