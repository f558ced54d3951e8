//! A stand-in authorization server for the unit tests: answers each HTTP request on loopback
//! with what the test's function returns for its request line, or never (`None`), and counts
//! the requests and how many it is holding at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};

/// What the peer has seen.
pub(crate) struct Seen {
    /// Requests read, in all.
    pub(crate) requests: AtomicUsize,
    /// Requests being answered (or held) right now, and the most there ever were.
    pub(crate) open: AtomicUsize,
    pub(crate) most_open: AtomicUsize,
    /// Signalled on every request read.
    pub(crate) arrived: Notify,
    /// Answers of [`Reply::Gated`] wait for a permit of this (the test adds them).
    pub(crate) gate: Semaphore,
}

impl Seen {
    pub(crate) fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Waits until at least `n` requests have arrived.
    pub(crate) async fn until(&self, n: usize) {
        loop {
            let arrived = self.arrived.notified();
            if self.requests() >= n {
                return;
            }
            arrived.await;
        }
    }
}

/// How to answer one request.
pub(crate) enum Reply {
    /// `200` with this JSON body, at once.
    Now(String),
    /// `200` with this JSON body once [`Seen::gate`] gives a permit.
    Gated(String),
    /// Never: the connection stays open, unanswered, until the client gives up.
    Hold,
}

/// The reply to a request, by its request line (`GET /jwks HTTP/1.1`).
pub(crate) type Answer = dyn Fn(&str) -> Reply + Send + Sync;

/// Serves on a loopback port; returns `http://127.0.0.1:PORT` and what it sees.
pub(crate) async fn serve(answer: Arc<Answer>) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Seen {
        requests: AtomicUsize::new(0),
        open: AtomicUsize::new(0),
        most_open: AtomicUsize::new(0),
        arrived: Notify::new(),
        gate: Semaphore::new(0),
    });
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let (seen, answer) = (seen2.clone(), answer.clone());
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let line = text.lines().next().unwrap_or("").to_owned();
                let open = seen.open.fetch_add(1, Ordering::SeqCst) + 1;
                seen.most_open.fetch_max(open, Ordering::SeqCst);
                seen.requests.fetch_add(1, Ordering::SeqCst);
                seen.arrived.notify_waiters();
                let body = match answer(&line) {
                    Reply::Now(body) => Some(body),
                    Reply::Gated(body) => {
                        seen.gate.acquire().await.unwrap().forget();
                        Some(body)
                    }
                    Reply::Hold => None,
                };
                match body {
                    Some(body) => {
                        let resp = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = stream.write_all(resp.as_bytes()).await;
                        seen.open.fetch_sub(1, Ordering::SeqCst);
                    }
                    None => {
                        let _ = stream.read(&mut buf).await;
                        seen.open.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    (base, seen)
}
