//! How the user authorizes: [`RedirectHandler`] shows the authorization URL and brings back
//! the URL the authorization server redirected to. [`LoopbackRedirect`] is the usual one for a
//! desktop or command-line host (RFC 8252 §7.3): a listener on `127.0.0.1` on a port of its
//! own, and a hook that opens the URL (a browser, or a window of the host's).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::super::error::ClientError;

/// What [`RedirectHandler::authorize`] returns.
pub type AuthorizeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<String, ClientError>> + Send + 'a>>;

/// Takes the user through the authorization server's page and back.
pub trait RedirectHandler: Send + Sync + 'static {
    /// The redirect URI: registered with the authorization server and sent with every
    /// authorization request.
    fn redirect_uri(&self) -> String;

    /// Shows the user `authorization_url` and waits until the authorization server sends the
    /// browser back to the redirect URI; returns that whole URL, query included. The client
    /// checks its `state` (and `iss`) and reads the `code` or `error`.
    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AuthorizeFuture<'a>;
}

/// A loopback redirect: `http://127.0.0.1:<port>/callback`, the port chosen by the OS when
/// the handler is made and kept for its life (so a registration made with it stays good).
/// `open` is given each authorization URL: open a browser with it, or show it in a window of
/// your own; the handler then waits (up to [`timeout`](Self::timeout), 5 minutes by default)
/// for the browser to come back, answers it with a page saying it can be closed, and hands the
/// URL to the client.
pub struct LoopbackRedirect {
    port: u16,
    listener: tokio::sync::Mutex<Listener>,
    open: Arc<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
}

enum Listener {
    Std(std::net::TcpListener),
    Tokio(TcpListener),
    Gone,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// The path the browser comes back to.
const CALLBACK: &str = "/callback";
/// The largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

impl LoopbackRedirect {
    /// Listens on `127.0.0.1` on a free port; `open` is called with each authorization URL.
    pub fn bind(open: impl Fn(&str) + Send + Sync + 'static) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        Ok(LoopbackRedirect {
            port: listener.local_addr()?.port(),
            listener: tokio::sync::Mutex::new(Listener::Std(listener)),
            open: Arc::new(open),
            timeout: Duration::from_secs(300),
        })
    }

    /// How long to wait for the browser to come back (default 5 minutes).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    async fn wait(&self) -> Result<String, ClientError> {
        let mut guard = self.listener.lock().await;
        if let Listener::Std(_) = &*guard
            && let Listener::Std(std) = std::mem::replace(&mut *guard, Listener::Gone)
        {
            *guard = Listener::Tokio(TcpListener::from_std(std).map_err(|e| {
                ClientError::authorization(format!("the loopback listener failed: {e}"))
            })?);
        }
        let Listener::Tokio(listener) = &*guard else {
            return Err(ClientError::authorization("the loopback listener is gone"));
        };
        loop {
            let (mut stream, _) = listener.accept().await.map_err(|e| {
                ClientError::authorization(format!("the loopback listener failed: {e}"))
            })?;
            let Some(target) = read_target(&mut stream).await else {
                continue;
            };
            let path = target.split('?').next().unwrap_or("");
            if path != CALLBACK {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let page = "<!doctype html><title>Authorized</title><p>You can close this window.";
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
            return Ok(format!("http://127.0.0.1:{}{target}", self.port));
        }
    }
}

/// The request target of a `GET`, from its head (within 10 s, at most [`MAX_HEAD`] bytes).
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let read = async {
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
    let line = head.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut words = line.split(' ');
    (words.next()? == "GET").then_some(())?;
    words.next().map(str::to_owned)
}

impl RedirectHandler for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK}", self.port)
    }

    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let waiting = self.wait();
            (self.open)(authorization_url);
            tokio::time::timeout(self.timeout, waiting)
                .await
                .map_err(|_| {
                    ClientError::authorization(format!(
                        "the browser did not come back to the redirect URI within {:?}",
                        self.timeout
                    ))
                })?
        })
    }
}
