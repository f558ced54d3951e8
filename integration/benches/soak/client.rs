//! A small HTTP/1.1 client over tokio's `TcpStream`, written by hand so that a scenario controls
//! every byte: well-behaved keep-alive calls for the load runs, and half-sent headers, bodies
//! that never finish or sockets closed mid-response for the abuse runs. Responses are framed by
//! `Content-Length` or chunked encoding; SSE bodies are read as raw bytes.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};

/// The `_meta` of every 2026-07-28 request.
pub const STATELESS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A session-era `initialize` (2025-11-25).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}"#;

/// A session-era `ping`: what keeps a session from idling out.
pub const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// What every correct `add {a:2,b:3}` answer contains.
pub const ADD_RESULT: &[u8] = br#""structuredContent":{"result":5}"#;

/// A session-era `tools/call add {a:2,b:3}` with request id `id`.
pub fn add_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
    )
}

/// A 2026-07-28 `tools/call` of `tool` with `arguments` (JSON) and request id `id`.
pub fn stateless_call(id: u64, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{STATELESS_META},"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

/// The headers a 2026-07-28 `tools/call` of `tool` must carry.
pub fn stateless_headers(tool: &str) -> Vec<(&'static str, String)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", tool.into()),
    ]
}

/// A 2026-07-28 `subscriptions/listen` with request id `id` and its headers.
pub fn listen_request(id: u64) -> (String, Vec<(&'static str, String)>) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"_meta":{STATELESS_META},"notifications":{{"toolsListChanged":true}}}}}}"#
    );
    let headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".into()),
        ("Mcp-Method", "subscriptions/listen".into()),
    ];
    (body, headers)
}

/// The text of a request: `POST`s get JSON content headers and `Content-Length`.
pub fn request_text(
    method: &str,
    path: &str,
    port: u16,
    headers: &[(&str, String)],
    body: &str,
) -> String {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    if method == "POST" {
        req.push_str(
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        );
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    req
}

/// A response's status line and headers.
#[derive(Debug, Default)]
pub struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One keep-alive connection to the server.
pub struct Conn {
    pub stream: BufReader<TcpStream>,
    pub port: u16,
    /// The session id `initialize` handed out, sent with every later request.
    pub session: Option<String>,
}

/// Opens a TCP connection to the server, with a small receive buffer if `rcvbuf` is given
/// (a slow reader's window then fills quickly).
pub async fn connect(port: u16, rcvbuf: Option<u32>) -> io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    if let Some(size) = rcvbuf {
        socket.set_recv_buffer_size(size)?;
    }
    let stream = socket.connect(([127, 0, 0, 1], port).into()).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

impl Conn {
    pub async fn open(port: u16) -> io::Result<Conn> {
        Ok(Conn {
            stream: BufReader::new(connect(port, None).await?),
            port,
            session: None,
        })
    }

    /// Writes a request (with the session id, if any) without reading the answer.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> io::Result<()> {
        let mut all: Vec<(&str, String)> = headers.to_vec();
        if let Some(s) = &self.session {
            all.push(("Mcp-Session-Id", s.clone()));
        }
        let text = request_text(method, path, self.port, &all, body);
        self.stream.get_mut().write_all(text.as_bytes()).await
    }

    /// Reads a response's head.
    pub async fn read_head(&mut self) -> io::Result<Head> {
        let mut head = Head::default();
        let mut line = String::new();
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let l = line.trim_end();
            if l.is_empty() {
                if head.status == 0 {
                    continue;
                }
                return Ok(head);
            }
            if head.status == 0 {
                head.status = l
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| io::Error::other(format!("bad status line {l:?}")))?;
                continue;
            }
            if let Some((name, value)) = l.split_once(':') {
                head.headers
                    .push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
    }

    /// Reads a whole (finite) body after `head`.
    pub async fn read_body(&mut self, head: &Head) -> io::Result<Vec<u8>> {
        if let Some(len) = head.header("content-length") {
            let len: usize = len.parse().map_err(io::Error::other)?;
            let mut body = vec![0; len];
            self.stream.read_exact(&mut body).await?;
            return Ok(body);
        }
        if head.header("transfer-encoding") == Some("chunked") {
            let mut body = Vec::new();
            let mut line = String::new();
            loop {
                line.clear();
                self.stream.read_line(&mut line).await?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(io::Error::other)?;
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await?;
                if size == 0 {
                    return Ok(body);
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        Ok(Vec::new())
    }

    /// Sends a request and reads its whole answer; keeps a session id the server hands out.
    pub async fn call(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> io::Result<(Head, Vec<u8>)> {
        self.send(method, path, headers, body).await?;
        let head = self.read_head().await?;
        if let Some(id) = head.header("mcp-session-id") {
            self.session = Some(id.to_owned());
        }
        let body = self.read_body(&head).await?;
        Ok((head, body))
    }

    /// `POST /mcp` with `body`.
    pub async fn post(&mut self, body: &str) -> io::Result<(Head, Vec<u8>)> {
        self.call("POST", "/mcp", &[], body).await
    }

    /// A session-era handshake on this connection: `initialize` + `notifications/initialized`.
    /// Returns the status of the `initialize` answer (200, or 503 at the session cap) and its head.
    pub async fn initialize(&mut self) -> io::Result<Head> {
        self.session = None;
        let (head, _) = self.post(INITIALIZE).await?;
        if head.status == 200 && self.session.is_some() {
            self.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await?;
        }
        Ok(head)
    }

    /// Reads whatever arrives within `wait` (SSE bytes), up to `max` bytes; `Ok(0)` at the end.
    pub async fn read_some(&mut self, max: usize, wait: Duration) -> io::Result<usize> {
        let mut buf = vec![0; max];
        match tokio::time::timeout(wait, self.stream.read(&mut buf)).await {
            Ok(r) => r,
            Err(_) => Err(io::ErrorKind::TimedOut.into()),
        }
    }

    /// Reads SSE bytes until `needle` has been seen (or the stream ends, or `wait` passes).
    pub async fn read_until(&mut self, needle: &[u8], wait: Duration) -> io::Result<Vec<u8>> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.windows(needle.len()).any(|w| w == needle) {
            let n = tokio::time::timeout_at(deadline, self.stream.read(&mut buf))
                .await
                .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))??;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            seen.extend_from_slice(&buf[..n]);
        }
        Ok(seen)
    }
}
