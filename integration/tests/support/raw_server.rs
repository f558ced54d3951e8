//! A scripted HTTP/1.1 server on a raw tokio socket, for tests of `mcp_runtime::client`
//! against servers that misbehave. Each request is parsed (its head, and a body framed by
//! `Content-Length`) and handed, with its connection, to the test's script, which writes
//! whatever bytes it likes (a redirect, a body that never ends, a head and then nothing) or
//! holds the connection open. The server counts the requests it read and the bytes it wrote,
//! so that a test can bound how much the client read.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// One request as the client sent it.
#[derive(Clone, Debug)]
pub struct RawRequest {
    pub method: String,
    pub target: String,
    /// Names lower-cased, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawRequest {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the body, if it has one.
    pub fn rpc_method(&self) -> Option<String> {
        self.json()
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}

/// The server side of one connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    written: Arc<AtomicU64>,
}

impl Conn {
    /// Writes raw bytes (counted).
    pub async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await?;
        self.written
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// A complete response: status, extra headers, a `Content-Length` body.
    pub async fn respond(
        &mut self,
        status: u16,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<()> {
        let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        self.write(head.as_bytes()).await?;
        self.write(body).await
    }

    /// A JSON response.
    pub async fn json(&mut self, status: u16, body: &Value) -> io::Result<()> {
        let body = serde_json::to_vec(body).unwrap();
        self.respond(status, &[("Content-Type", "application/json")], &body)
            .await
    }

    /// A response head whose body runs until the connection closes (`Connection: close`, no
    /// length): what follows is written with [`write`](Self::write) or [`event`](Self::event).
    pub async fn open_body(&mut self, status: u16, content_type: &str) -> io::Result<()> {
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n"
        );
        self.write(head.as_bytes()).await
    }

    /// One SSE `message` event carrying `message`.
    pub async fn event(&mut self, message: &Value) -> io::Result<()> {
        self.write(format!("data: {message}\n\n").as_bytes()).await
    }

    /// Keeps the connection open, writing nothing, until the server is dropped.
    pub async fn hold(self) -> Option<Conn> {
        let _keep = self;
        std::future::pending::<()>().await;
        None
    }

    async fn read_request(&mut self) -> io::Result<Option<RawRequest>> {
        let end = loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                break end;
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(None);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or("").split(' ');
        let method = first.next().unwrap_or("").to_owned();
        let target = first.next().unwrap_or("").to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        self.buf.drain(..end + 4);
        while self.buf.len() < length {
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(None);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
        let body = self.buf.drain(..length).collect();
        Ok(Some(RawRequest {
            method,
            target,
            headers,
            body,
        }))
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What a script returns: the connection to read the next request from, or `None` to close it.
pub type Reply = Pin<Box<dyn Future<Output = Option<Conn>> + Send>>;

/// A running server; dropping it stops it and every connection.
pub struct RawServer {
    pub addr: std::net::SocketAddr,
    requests: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<RawRequest>>>,
    written: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    /// Serves on an ephemeral loopback port: `script` answers every request.
    pub async fn start<F>(script: F) -> RawServer
    where
        F: Fn(RawRequest, Conn) -> Reply + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let written = Arc::new(AtomicU64::new(0));
        let script = Arc::new(script);
        let (count, bytes, log) = (requests.clone(), written.clone(), seen.clone());
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                // A head and its body are written apart: no Nagle delay between them.
                let _ = stream.set_nodelay(true);
                let (script, count, bytes, log) =
                    (script.clone(), count.clone(), bytes.clone(), log.clone());
                connections.spawn(async move {
                    let mut conn = Conn {
                        stream,
                        buf: Vec::new(),
                        written: bytes,
                    };
                    while let Ok(Some(req)) = conn.read_request().await {
                        count.fetch_add(1, Ordering::Relaxed);
                        log.lock().unwrap().push(RawRequest {
                            body: req.body.iter().copied().take(1024).collect(),
                            ..req.clone()
                        });
                        match script(req, conn).await {
                            Some(next) => conn = next,
                            None => return,
                        }
                    }
                });
                while connections.try_join_next().is_some() {}
            }
        });
        RawServer {
            addr,
            requests,
            seen,
            written,
            task,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Requests read so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// The requests read so far (their bodies cut at 1 KiB).
    pub fn seen(&self) -> Vec<RawRequest> {
        self.seen.lock().unwrap().clone()
    }

    /// Bytes written so far (heads and bodies).
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The session-era `initialize` result a fake server answers with.
pub fn initialize_result() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
        "serverInfo": {"name": "raw", "version": "0"}
    })
}

/// Answers what every session-era fake server answers the same way (`initialize`,
/// notifications and answers, `GET` (405: no stream), `DELETE`); returns the connection
/// back, or the request when it is for the script.
pub async fn session_basics(
    req: RawRequest,
    mut conn: Conn,
) -> Result<Option<Conn>, (RawRequest, Conn)> {
    let msg = req.json();
    let ok = match (req.method.as_str(), msg.get("method").and_then(Value::as_str)) {
        ("GET", _) => conn.respond(405, &[], b"").await,
        ("DELETE", _) => conn.respond(200, &[], b"").await,
        ("POST", Some("initialize")) => {
            let answer = json!({"jsonrpc": "2.0", "id": msg["id"], "result": initialize_result()});
            let body = serde_json::to_vec(&answer).unwrap();
            conn.respond(
                200,
                &[("Content-Type", "application/json"), ("Mcp-Session-Id", "raw-session")],
                &body,
            )
            .await
        }
        ("POST", Some("server/discover")) => {
            conn.json(
                400,
                &json!({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}),
            )
            .await
        }
        ("POST", _) if msg.get("id").is_none() || msg.get("method").is_none() => {
            conn.respond(202, &[], b"").await
        }
        _ => return Err((req, conn)),
    };
    Ok(ok.ok().map(|()| conn))
}

/// A JSON-RPC answer to `req` with `result`.
pub fn answer(req: &RawRequest, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": req.json()["id"], "result": result})
}
