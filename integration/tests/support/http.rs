//! A minimal HTTP/1.1 client over `std::net::TcpStream` for tests of the Streamable HTTP
//! transport. The request text is written by hand, so a test controls every header (`Host`,
//! `Origin`, `Content-Length`, …) and can send what no well-behaved client library would.
//! Responses are parsed from the raw bytes: status line, headers, and a body framed by
//! `Content-Length`, chunked encoding or the end of the connection. SSE bodies are read
//! incrementally, one event at a time, with a timeout.

use std::fmt;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Proc;

/// Runs `start` with a port that nothing listened on a moment ago, for a server whose URL must
/// be known before it starts (an OAuth resource's, which its authorization server mints tokens
/// for); again with another port when something took that one in between (`start` failed
/// with `Address already in use`), up to 5 times. Any other failure panics with its message.
pub fn on_a_free_port<T>(mut start: impl FnMut(u16) -> Result<T, String>) -> T {
    let mut last = String::new();
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        match start(port) {
            Ok(started) => return started,
            Err(e) if e.contains("Address already in use") => last = e,
            Err(e) => panic!("{e}"),
        }
    }
    panic!("every port picked was taken before the server bound it; the last:\n{last}")
}

/// How long a test waits for any one response (or SSE event) by default.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The `_meta` every 2026-07-28 request carries.
pub fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A JSON-RPC request object.
pub fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A JSON-RPC notification object.
pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// A session-era `initialize` request.
pub fn initialize_request(version: &str) -> Value {
    rpc(
        0,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "http-test", "version": "1"}}),
    )
}

/// An example server serving HTTP on an ephemeral loopback port. The request methods are
/// those of its [`Endpoint`].
pub struct HttpServer {
    pub proc: Proc,
    pub port: u16,
    endpoint: Endpoint,
}

impl std::ops::Deref for HttpServer {
    type Target = Endpoint;

    fn deref(&self) -> &Endpoint {
        &self.endpoint
    }
}

/// Where requests go: `127.0.0.1:port`, for a server in another process or in this one.
#[derive(Clone, Copy, Debug)]
pub struct Endpoint {
    pub port: u16,
}

impl HttpServer {
    /// Starts example `name` with `--http 127.0.0.1:0` and waits for its
    /// `serving MCP on http://127.0.0.1:PORT/mcp` line on stderr.
    pub fn start(name: &str) -> HttpServer {
        HttpServer::start_program(&super::example(name))
    }

    /// [`HttpServer::start`] for an executable given by path (e.g. one from
    /// [`super::interop::build_examples`]).
    pub fn start_program(program: &Path) -> HttpServer {
        HttpServer::start_on(program, "127.0.0.1:0")
    }

    /// [`HttpServer::start_program`] listening on `addr` (e.g. `0.0.0.0:0`); requests still go
    /// to 127.0.0.1.
    pub fn start_on(program: &Path, addr: &str) -> HttpServer {
        HttpServer::start_on_with(program, addr, &[])
    }

    /// [`HttpServer::start_program`] with extra environment variables.
    pub fn start_with_env(program: &Path, env: &[(&str, &str)]) -> HttpServer {
        HttpServer::start_on_with(program, "127.0.0.1:0", env)
    }

    pub fn start_on_with(program: &Path, addr: &str, env: &[(&str, &str)]) -> HttpServer {
        HttpServer::start_args(program, &["--http", addr], env)
    }

    /// `program args…` (which make it listen on a port of its choosing, e.g. `mcp-bridge serve
    /// --http 127.0.0.1:0 -- …`), once it logged where it serves.
    pub fn start_args(program: &Path, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        HttpServer::try_start_args(program, args, env).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`HttpServer::start_on_with`], or why it did not start: its stderr so far when it ended
    /// (or the deadline passed) before it logged where it serves.
    pub fn try_start_on_with(
        program: &Path,
        addr: &str,
        env: &[(&str, &str)],
    ) -> Result<HttpServer, String> {
        HttpServer::try_start_args(program, &["--http", addr], env)
    }

    fn try_start_args(
        program: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<HttpServer, String> {
        let name = program.display();
        let proc = Proc::spawn_program(program, args, env);
        // A failure bound only: a bridge starts its upstream first (node takes seconds on a
        // loaded machine).
        let deadline = Instant::now() + 6 * TIMEOUT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match proc.stderr.recv_timeout(left) {
                Ok(line) => line,
                Err(e) => {
                    return Err(format!(
                        "{name} did not log `serving MCP on http://…` ({e}); stderr so far:\n{}",
                        seen.join("\n")
                    ));
                }
            };
            if let Some(port) = serving_port(&line) {
                return Ok(HttpServer {
                    proc,
                    port,
                    endpoint: Endpoint { port },
                });
            }
            seen.push(line);
        }
    }

    /// The server's stderr so far (for failure messages).
    pub fn log(&mut self) -> String {
        self.proc.stderr_text()
    }
}

impl Endpoint {
    /// `127.0.0.1:PORT`, the `Host` header every request gets unless it sets its own.
    pub fn authority(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The server's URL for `path` (e.g. `/mcp`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.authority())
    }

    /// Sends `req` on a new connection and reads the whole response.
    pub fn send(&self, req: &Req) -> Response {
        let mut conn = self.connect(req);
        let head = conn.read_head(TIMEOUT).unwrap_or_else(|e| {
            panic!(
                "no response head to\n{}\n{e}",
                req.describe(&self.authority())
            )
        });
        let body = conn.read_to_end(TIMEOUT).unwrap_or_else(|e| {
            panic!(
                "incomplete response body to\n{}\nhead: {head:?}\n{e}",
                req.describe(&self.authority())
            )
        });
        Response { head, body }
    }

    /// Sends `req` and returns once the response head has arrived, with the body (an SSE
    /// stream) left to read event by event.
    pub fn open_stream(&self, req: &Req) -> SseStream {
        let mut conn = self.connect(req);
        let head = conn.read_head(TIMEOUT).unwrap_or_else(|e| {
            panic!(
                "no response head to\n{}\n{e}",
                req.describe(&self.authority())
            )
        });
        SseStream {
            head,
            conn,
            text: Vec::new(),
            seen: String::new(),
        }
    }

    /// POSTs `body` as JSON to `/mcp` with the usual headers and `extra` ones.
    pub fn post(&self, body: &Value, extra: &[(&str, &str)]) -> Response {
        self.send(&Req::post("/mcp").headers(extra).json(body))
    }

    /// A session-era handshake at 2025-11-25: `initialize`, then `notifications/initialized`
    /// (which must get 202). Returns the session id.
    pub fn open_session(&self) -> String {
        let r = self.post(&initialize_request("2025-11-25"), &[]);
        assert_eq!(r.status(), 200, "initialize: {r}");
        let id = r
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("initialize issued no Mcp-Session-Id: {r}"))
            .to_owned();
        let r = self.post(
            &notification("notifications/initialized"),
            &[
                ("Mcp-Session-Id", &id),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
        );
        assert_eq!(r.status(), 202, "notifications/initialized: {r}");
        id
    }

    /// Fails unless the server still answers a fresh `initialize` (used after a refusal).
    pub fn assert_still_serving(&self) {
        let r = self.post(&initialize_request("2025-11-25"), &[]);
        assert_eq!(r.status(), 200, "the server stopped serving: {r}");
        assert_eq!(
            r.json()["result"]["protocolVersion"],
            "2025-11-25",
            "the server stopped serving: {r}"
        );
    }

    fn connect(&self, req: &Req) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.authority()));
        stream.set_nodelay(true).unwrap();
        let mut conn = Conn {
            stream,
            raw: Vec::new(),
            framing: Framing::Eof,
            eof: false,
        };
        conn.stream
            .write_all(&req.to_bytes(&self.authority()))
            .unwrap_or_else(|e| panic!("cannot send\n{}\n{e}", req.describe(&self.authority())));
        conn
    }
}

/// The port in a `serving MCP on http://127.0.0.1:PORT/mcp` log line.
fn serving_port(line: &str) -> Option<u16> {
    let rest = line.split("serving MCP on http://").nth(1)?;
    let authority = rest.split('/').next()?;
    authority.rsplit_once(':')?.1.trim().parse().ok()
}

/// A request to write by hand. By default it gets `Host: 127.0.0.1:PORT`,
/// `Connection: close`, and for a body `Content-Length`; POSTs also get
/// `Content-Type: application/json` and `Accept: application/json, text/event-stream`.
/// Setting a header of the same name replaces the default; [`Req::without`] drops it.
#[derive(Clone)]
pub struct Req {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    omit: Vec<String>,
    body: Vec<u8>,
}

impl Req {
    pub fn new(method: &str, target: &str) -> Req {
        let mut req = Req {
            method: method.to_owned(),
            target: target.to_owned(),
            headers: Vec::new(),
            omit: Vec::new(),
            body: Vec::new(),
        };
        if method == "POST" {
            req = req
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream");
        }
        req
    }

    pub fn post(target: &str) -> Req {
        Req::new("POST", target)
    }

    pub fn get(target: &str) -> Req {
        Req::new("GET", target)
    }

    /// Sets `name` (replacing any header of that name, case-insensitively).
    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.omit.retain(|n| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds another `name` header, keeping those already set (a repeated header).
    pub fn also(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn headers(mut self, headers: &[(&str, &str)]) -> Req {
        for (n, v) in headers {
            self = self.header(n, v);
        }
        self
    }

    /// Sends no `name` header, not even the default one.
    pub fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.omit.push(name.to_owned());
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Req {
        self.body = body.into();
        self
    }

    pub fn json(self, body: &Value) -> Req {
        self.body(body.to_string())
    }

    fn has(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
            || self.omit.iter().any(|n| n.eq_ignore_ascii_case(name))
    }

    fn head_text(&self, authority: &str) -> String {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        if !self.has("host") {
            head.push_str(&format!("Host: {authority}\r\n"));
        }
        for (n, v) in &self.headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        if !self.has("content-length") && (!self.body.is_empty() || self.method == "POST") {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        if !self.has("connection") {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        head
    }

    fn to_bytes(&self, authority: &str) -> Vec<u8> {
        let mut out = self.head_text(authority).into_bytes();
        out.extend_from_slice(&self.body);
        out
    }

    /// The request as sent, for failure messages (long bodies shortened).
    pub fn describe(&self, authority: &str) -> String {
        format!(
            "{}{}",
            self.head_text(authority),
            shorten(&String::from_utf8_lossy(&self.body))
        )
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 2000;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// Status line and headers of a response.
#[derive(Clone, Debug)]
pub struct Head {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type of `Content-Type`, lowercased, without parameters.
    pub fn content_type(&self) -> Option<String> {
        self.header("content-type").map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    }
}

impl fmt::Display for Head {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "HTTP/1.1 {} {}", self.status, self.reason)?;
        for (n, v) in &self.headers {
            writeln!(f, "{n}: {v}")?;
        }
        Ok(())
    }
}

/// A whole response.
pub struct Response {
    pub head: Head,
    pub body: Vec<u8>,
}

impl Response {
    pub fn status(&self) -> u16 {
        self.head.status
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.header(name)
    }

    pub fn content_type(&self) -> Option<String> {
        self.head.content_type()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics (showing the response) if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("response body is not JSON ({e}):\n{self}"))
    }

    /// The `error.code` of a JSON-RPC error body; panics (showing the response) otherwise.
    pub fn error_code(&self) -> i64 {
        let body = self.json();
        assert_eq!(body["jsonrpc"], "2.0", "not a JSON-RPC message:\n{self}");
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not a JSON-RPC error:\n{self}"))
    }
}

impl fmt::Display for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{}\n{}", self.head, shorten(&self.text()))
    }
}

/// How the body of a response ends.
enum Framing {
    Length(usize),
    Chunked(Chunk),
    /// Until the server closes the connection.
    Eof,
}

/// Where a chunked decoder stands.
enum Chunk {
    /// Expecting a size line.
    Size,
    /// Inside a chunk, with this many bytes left.
    Data(usize),
    /// Expecting the CRLF after a chunk.
    Crlf,
    /// The last chunk has been read.
    Done,
}

/// Why reading stopped.
#[derive(Debug)]
pub enum ReadError {
    Timeout(Duration),
    /// The server closed the connection before the end.
    Closed,
    Io(std::io::Error),
    Malformed(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Timeout(t) => write!(f, "nothing more within {t:?}"),
            ReadError::Closed => write!(f, "the server closed the connection"),
            ReadError::Io(e) => write!(f, "I/O error: {e}"),
            ReadError::Malformed(m) => write!(f, "malformed response: {m}"),
        }
    }
}

/// One connection: bytes read but not yet decoded, and the body's framing.
struct Conn {
    stream: TcpStream,
    raw: Vec<u8>,
    framing: Framing,
    eof: bool,
}

impl Conn {
    /// Reads more bytes into `raw`, waiting until `deadline` at most.
    fn fill(&mut self, deadline: Instant, timeout: Duration) -> Result<(), ReadError> {
        if self.eof {
            return Err(ReadError::Closed);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadError::Timeout(timeout));
        }
        self.stream
            .set_read_timeout(Some(left))
            .map_err(ReadError::Io)?;
        let mut buf = [0u8; 16 * 1024];
        match self.stream.read(&mut buf) {
            Ok(0) => {
                self.eof = true;
                Err(ReadError::Closed)
            }
            Ok(n) => {
                self.raw.extend_from_slice(&buf[..n]);
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Err(ReadError::Timeout(timeout))
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(()),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                self.eof = true;
                Err(ReadError::Closed)
            }
            Err(e) => Err(ReadError::Io(e)),
        }
    }

    /// Reads the status line and headers (skipping any 1xx responses).
    fn read_head(&mut self, timeout: Duration) -> Result<Head, ReadError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(end) = find(&self.raw, b"\r\n\r\n") {
                let text = String::from_utf8_lossy(&self.raw[..end]).into_owned();
                self.raw.drain(..end + 4);
                let head = parse_head(&text)?;
                if (100..200).contains(&head.status) {
                    continue;
                }
                self.framing =
                    if head
                        .header("transfer-encoding")
                        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"))
                    {
                        Framing::Chunked(Chunk::Size)
                    } else if let Some(len) = head.header("content-length") {
                        Framing::Length(len.trim().parse().map_err(|_| {
                            ReadError::Malformed(format!("bad Content-Length {len:?}"))
                        })?)
                    } else if head.status == 204 || head.status == 304 {
                        Framing::Length(0)
                    } else {
                        Framing::Eof
                    };
                return Ok(head);
            }
            self.fill(deadline, timeout)?;
        }
    }

    /// Moves whatever body bytes `raw` holds into `out`; true once the body is complete.
    fn decode(&mut self, out: &mut Vec<u8>) -> Result<bool, ReadError> {
        loop {
            match &mut self.framing {
                Framing::Eof => {
                    out.append(&mut self.raw);
                    return Ok(self.eof);
                }
                Framing::Length(left) => {
                    let n = (*left).min(self.raw.len());
                    out.extend(self.raw.drain(..n));
                    *left -= n;
                    return Ok(*left == 0);
                }
                Framing::Chunked(state) => match state {
                    Chunk::Done => return Ok(true),
                    Chunk::Size => {
                        let Some(end) = find(&self.raw, b"\r\n") else {
                            return Ok(false);
                        };
                        let line = String::from_utf8_lossy(&self.raw[..end]).into_owned();
                        self.raw.drain(..end + 2);
                        let size = line.split(';').next().unwrap_or("").trim();
                        let size = usize::from_str_radix(size, 16).map_err(|_| {
                            ReadError::Malformed(format!("bad chunk size line {line:?}"))
                        })?;
                        // The last chunk; trailers (none expected) are not read.
                        *state = if size == 0 {
                            Chunk::Done
                        } else {
                            Chunk::Data(size)
                        };
                    }
                    Chunk::Data(left) => {
                        if self.raw.is_empty() {
                            return Ok(false);
                        }
                        let n = (*left).min(self.raw.len());
                        out.extend(self.raw.drain(..n));
                        *left -= n;
                        if *left == 0 {
                            *state = Chunk::Crlf;
                        }
                    }
                    Chunk::Crlf => {
                        if self.raw.len() < 2 {
                            return Ok(false);
                        }
                        if &self.raw[..2] != b"\r\n" {
                            return Err(ReadError::Malformed("no CRLF after a chunk".into()));
                        }
                        self.raw.drain(..2);
                        *state = Chunk::Size;
                    }
                },
            }
        }
    }

    /// Reads the rest of the body.
    fn read_to_end(&mut self, timeout: Duration) -> Result<Vec<u8>, ReadError> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        loop {
            if self.decode(&mut out)? {
                return Ok(out);
            }
            match self.fill(deadline, timeout) {
                Ok(()) => {}
                // Closing ends an EOF-framed body; `decode` reports it complete next turn.
                Err(ReadError::Closed) if matches!(self.framing, Framing::Eof) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(text: &str) -> Result<Head, ReadError> {
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Malformed(format!(
            "bad status line {status_line:?}"
        )));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ReadError::Malformed(format!("bad status line {status_line:?}")))?;
    let reason = parts.next().unwrap_or("").to_owned();
    let headers = lines
        .map(|line| {
            line.split_once(':')
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| ReadError::Malformed(format!("bad header line {line:?}")))
        })
        .collect::<Result<_, _>>()?;
    Ok(Head {
        status,
        reason,
        headers,
    })
}

/// One SSE event (comment-only blocks are skipped, but kept in [`SseStream::seen`]).
#[derive(Clone, Debug, Default)]
pub struct Event {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
    pub retry: Option<String>,
    /// The event's lines as received.
    pub raw: String,
}

impl Event {
    /// The data as JSON; panics (showing the event) if it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("SSE event data is not JSON ({e}):\n{}", self.raw))
    }
}

/// An open SSE response, read event by event.
pub struct SseStream {
    pub head: Head,
    conn: Conn,
    /// Decoded body bytes not yet split into events.
    text: Vec<u8>,
    seen: String,
}

impl SseStream {
    /// Everything received on the stream so far (for failure messages).
    pub fn seen(&self) -> String {
        format!("{}\n{}", self.head, self.seen)
    }

    /// The next event, waiting at most `timeout`.
    pub fn next_event(&mut self, timeout: Duration) -> Result<Event, ReadError> {
        let deadline = Instant::now() + timeout;
        loop {
            while let Some(block) = self.take_block() {
                if let Some(event) = parse_event(&block) {
                    return Ok(event);
                }
            }
            if self.conn.decode(&mut self.text)? && !self.has_block() {
                return Err(ReadError::Closed);
            }
            if self.has_block() {
                continue;
            }
            match self.conn.fill(deadline, timeout) {
                Ok(()) => {}
                Err(ReadError::Closed) => {
                    let _ = self.conn.decode(&mut self.text);
                    if !self.has_block() {
                        return Err(ReadError::Closed);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The next event, or a panic showing what the stream carried.
    pub fn expect_event(&mut self, what: &str) -> Event {
        match self.next_event(TIMEOUT) {
            Ok(e) => e,
            Err(e) => panic!(
                "expected {what} on the SSE stream: {e}; received:\n{}",
                self.seen()
            ),
        }
    }

    /// Whether the server ends the stream within `timeout` (events before the end are read
    /// and dropped).
    pub fn closes_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_event(left.max(Duration::from_millis(1))) {
                Ok(_) => continue,
                Err(ReadError::Closed) => return true,
                Err(_) => return false,
            }
        }
    }

    fn has_block(&self) -> bool {
        block_end(&self.text).is_some()
    }

    /// Removes and returns the next blank-line-terminated block of lines.
    fn take_block(&mut self) -> Option<String> {
        let (end, sep) = block_end(&self.text)?;
        let block = String::from_utf8_lossy(&self.text[..end]).into_owned();
        self.text.drain(..end + sep);
        self.seen.push_str(&block);
        self.seen.push_str("\n\n");
        Some(block)
    }
}

/// The end of the first event block in `text` and the length of its blank-line separator.
fn block_end(text: &[u8]) -> Option<(usize, usize)> {
    [&b"\r\n\r\n"[..], b"\n\n", b"\r\r"]
        .iter()
        .filter_map(|sep| find(text, sep).map(|i| (i, sep.len())))
        .min()
}

/// Parses one block per the SSE rules; `None` for a block of only comments.
fn parse_event(block: &str) -> Option<Event> {
    let mut event = Event {
        raw: block.to_owned(),
        ..Event::default()
    };
    let mut data: Vec<&str> = Vec::new();
    let mut any = false;
    for line in block.split(['\n', '\r']).filter(|l| !l.is_empty()) {
        if line.starts_with(':') {
            continue;
        }
        any = true;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => event.id = Some(value.to_owned()),
            "event" => event.event = Some(value.to_owned()),
            "data" => data.push(value),
            "retry" => event.retry = Some(value.to_owned()),
            _ => {}
        }
    }
    event.data = data.join("\n");
    any.then_some(event)
}
