//! The peer as an HTTP server on a loopback port, speaking either Streamable HTTP (`POST` answers
//! as JSON or an SSE stream, a session id from `initialize`, `GET` refused with 405) or the
//! deprecated HTTP+SSE transport (`GET` opens the event stream and names the endpoint, every
//! `POST` is accepted with 202 and answered on the stream). Requests are parsed by hand and
//! responses written as raw bytes, one thread per connection.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::play::{Ended, Framing, Sink, play};
use super::{Body, Ctx, Head, Script, healthy_answer};

/// Which HTTP transport the peer speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP, at `/mcp`.
    Streamable,
    /// HTTP+SSE (2024-11-05): the stream at `/sse`, messages to `/messages`.
    Legacy,
}

/// How long a connection may sit idle, and the longest a `hang` or `stall` holds one.
const HOLD: Duration = Duration::from_secs(30);
/// How often a held connection looks whether the peer was stopped.
const TICK: Duration = Duration::from_millis(100);
/// The largest request head and body read.
const MAX_HEAD: u64 = 64 * 1024;
const MAX_BODY: usize = 64 << 20;
/// Where an HTTP+SSE peer takes messages.
const ENDPOINT: &str = "/messages?session=1";

/// One request as the client sent it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `GET`, `POST`, …
    pub method: String,
    /// The request target.
    pub path: String,
    /// Names lower-cased, in order.
    pub headers: Vec<(String, String)>,
}

impl Seen {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running peer; stopped when dropped.
pub struct HttpPeer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    script: Script,
    transport: Transport,
    own: String,
    other: Mutex<String>,
    counts: Mutex<HashMap<String, usize>>,
    written: AtomicU64,
    seen: Mutex<Vec<Seen>>,
    /// HTTP+SSE: the open event stream, which carries every answer.
    stream: Mutex<Option<mpsc::Sender<Job>>>,
    stop: AtomicBool,
}

/// An answer for the HTTP+SSE stream to send.
struct Job {
    ctx: Ctx,
    healthy: Option<Value>,
    /// The script's steps (else the healthy answer).
    target: bool,
}

impl HttpPeer {
    /// Starts serving `script` on `127.0.0.1`, on a port of its own.
    pub fn start(script: Script, transport: Transport) -> io::Result<HttpPeer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script,
            transport,
            own: format!("http://{addr}"),
            other: Mutex::new(String::new()),
            counts: Mutex::new(HashMap::new()),
            written: AtomicU64::new(0),
            seen: Mutex::new(Vec::new()),
            stream: Mutex::new(None),
            stop: AtomicBool::new(false),
        });
        let accepting = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if accepting.stop.load(Ordering::Acquire) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let shared = accepting.clone();
                std::thread::spawn(move || serve(&shared, conn));
            }
        });
        Ok(HttpPeer { addr, shared })
    }

    /// `http://127.0.0.1:port`.
    pub fn origin(&self) -> &str {
        &self.shared.own
    }

    /// The URL a client connects to: `/mcp` (Streamable HTTP) or `/sse` (HTTP+SSE).
    pub fn url(&self) -> String {
        match self.shared.transport {
            Transport::Streamable => format!("{}/mcp", self.shared.own),
            Transport::Legacy => format!("{}/sse", self.shared.own),
        }
    }

    /// The origin `$other` names in the script.
    pub fn set_other(&self, origin: &str) {
        *self.shared.other.lock().unwrap() = origin.to_owned();
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The body bytes written to clients so far (heads and framing excluded).
    pub fn written(&self) -> u64 {
        self.shared.written.load(Ordering::Relaxed)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.stream.lock().unwrap().take();
        // Wakes the accept loop so it sees `stop`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// A request head.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn read_head(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut lines = Vec::new();
    let mut limited = reader.take(MAX_HEAD);
    loop {
        let mut line = String::new();
        match limited.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let line = line.trim_end().to_owned();
        if line.is_empty() {
            if lines.is_empty() {
                continue; // a stray CRLF between requests
            }
            break;
        }
        lines.push(line);
    }
    let mut first = lines.first()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers = lines[1..]
        .iter()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some(Request {
        method,
        path,
        headers,
    })
}

fn respond(
    out: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<()> {
    let mut all = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        all.push_str(&format!("{name}: {value}\r\n"));
    }
    all.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut all = all.into_bytes();
    all.extend_from_slice(body);
    out.write_all(&all)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Whatever",
    }
}

/// One connection: requests one after another until it closes or a response ends it.
fn serve(shared: &Arc<Shared>, conn: TcpStream) {
    let _ = conn.set_nodelay(true);
    let _ = conn.set_read_timeout(Some(HOLD));
    let _ = conn.set_write_timeout(Some(HOLD));
    let Ok(read_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut out = conn;
    while let Some(req) = read_head(&mut reader) {
        shared.seen.lock().unwrap().push(Seen {
            method: req.method.clone(),
            path: req.path.clone(),
            headers: req.headers.clone(),
        });
        let keep = match req.method.as_str() {
            "POST" => post(shared, &req, &mut reader, &mut out),
            "GET" => get(shared, &req, &mut reader, &mut out),
            "DELETE" => respond(&mut out, 204, &[], b"").is_ok(),
            _ => respond(&mut out, 405, &[], b"").is_ok(),
        };
        if !keep || shared.stop.load(Ordering::Acquire) {
            return;
        }
    }
}

fn post(
    shared: &Arc<Shared>,
    req: &Request,
    reader: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
) -> bool {
    // A `stall` is decided on the `Mcp-Method` header, before the body is read.
    let mut early = None;
    if shared.script.stalls()
        && let Some(method) = req.header("mcp-method")
    {
        early = Some(
            shared
                .script
                .is_target(&mut shared.counts.lock().unwrap(), method),
        );
        if early == Some(true) {
            wait_for_stop(shared);
            return false;
        }
    }
    let length: usize = req
        .header("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    if length > MAX_BODY {
        return false;
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return false;
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return respond(out, 400, &[], b"not JSON").is_ok();
    };
    let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
    let Some(method) = method.filter(|_| msg.get("id").is_some()) else {
        // A notification, or the client's answer to a request of ours.
        return respond(out, 202, &[], b"").is_ok();
    };
    let target = match early {
        Some(t) => t,
        None => shared
            .script
            .is_target(&mut shared.counts.lock().unwrap(), &method),
    };
    let healthy = healthy_answer(&msg);
    let ctx = Ctx {
        request: msg,
        own: shared.own.clone(),
        other: shared.other.lock().unwrap().clone(),
    };
    let legacy = shared.transport == Transport::Legacy;
    if target && (!legacy || shared.script.to_post) {
        let initialize = method == "initialize";
        return respond_steps(shared, ctx, healthy.as_ref(), initialize, reader, out);
    }
    if legacy {
        let job = Job {
            ctx,
            healthy,
            target,
        };
        if let Some(stream) = shared.stream.lock().unwrap().as_ref() {
            let _ = stream.send(job);
        }
        return respond(out, 202, &[], b"").is_ok();
    }
    let answer = serde_json::to_vec(&healthy.unwrap_or(Value::Null)).unwrap_or_default();
    let mut headers = vec![("Content-Type", "application/json")];
    if method == "initialize" {
        headers.push(("Mcp-Session-Id", "s-1"));
    }
    respond(out, 200, &headers, &answer).is_ok()
}

fn get(
    shared: &Arc<Shared>,
    _req: &Request,
    reader: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
) -> bool {
    let target = shared
        .script
        .is_target(&mut shared.counts.lock().unwrap(), "GET");
    let ctx = Ctx {
        request: Value::Null,
        own: shared.own.clone(),
        other: shared.other.lock().unwrap().clone(),
    };
    match shared.transport {
        Transport::Streamable if target => respond_steps(shared, ctx, None, false, reader, out),
        Transport::Streamable => respond(out, 405, &[], b"").is_ok(),
        Transport::Legacy => {
            if target && matches!(shared.script.head, Head::None | Head::Custom { .. }) {
                return respond_steps(shared, ctx, None, false, reader, out);
            }
            // The stream takes answers before it names the endpoint: a client's first POST,
            // sent as soon as it reads the endpoint, can be handled (on its connection's
            // thread) before this thread writes on (its answer was lost, and the client waited
            // for it, when the stream was handed over after the endpoint).
            let (tx, answers) = mpsc::channel();
            *shared.stream.lock().unwrap() = Some(tx);
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
                        Transfer-Encoding: chunked\r\n\r\n";
            if out.write_all(head.as_bytes()).is_err() {
                return false;
            }
            let mut sink = Sink {
                out,
                framing: Framing::Legacy,
                chunked: true,
                written: &shared.written,
                stall_ends: true,
            };
            let ended = if target {
                play(&shared.script.steps, &ctx, None, &mut sink)
            } else {
                let endpoint = format!("event: endpoint\ndata: {ENDPOINT}\n\n");
                match sink.write(endpoint.as_bytes()) {
                    Ok(()) => Ended::Finished,
                    Err(_) => Ended::Gone,
                }
            };
            match ended {
                Ended::Finished | Ended::Hung => serve_stream(shared, answers, &mut sink),
                Ended::Closed => {
                    let _ = sink.out.flush();
                    let _ = out.shutdown(Shutdown::Both);
                }
                Ended::Stalled => wait_for_stop(shared),
                Ended::Gone => {}
            }
            false
        }
    }
}

/// HTTP+SSE: sends every answer the `POST`s hand over (on `rx`), until the client or the peer
/// goes.
fn serve_stream(shared: &Arc<Shared>, rx: mpsc::Receiver<Job>, sink: &mut Sink<'_>) {
    let started = Instant::now();
    while started.elapsed() < HOLD * 2 {
        let job = match rx.recv_timeout(TICK) {
            Ok(job) => job,
            Err(mpsc::RecvTimeoutError::Timeout) if !shared.stop.load(Ordering::Acquire) => {
                continue;
            }
            Err(_) => return,
        };
        let ended = if job.target {
            play(&shared.script.steps, &job.ctx, job.healthy.as_ref(), sink)
        } else if let Some(answer) = &job.healthy {
            match sink.frame(&serde_json::to_vec(answer).unwrap_or_default()) {
                Ok(()) => Ended::Finished,
                Err(_) => Ended::Gone,
            }
        } else {
            Ended::Finished
        };
        match ended {
            Ended::Finished | Ended::Hung => {}
            Ended::Stalled => return wait_for_stop(shared),
            Ended::Closed | Ended::Gone => return,
        }
    }
}

/// A response made of the script's steps, after its head. Returns whether the connection
/// takes another request.
fn respond_steps(
    shared: &Arc<Shared>,
    ctx: Ctx,
    healthy: Option<&Value>,
    initialize: bool,
    reader: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
) -> bool {
    let script = &shared.script;
    let legacy = shared.transport == Transport::Legacy;
    let body = match (script.body(), legacy) {
        // HTTP+SSE answers on a POST are plain bodies, unless the script says SSE.
        (Body::Auto, true) => Body::Json,
        (b, _) => b,
    };
    let framing = if body == Body::Sse {
        Framing::Sse
    } else {
        Framing::Bare
    };
    let content_type = match body {
        Body::Sse => "text/event-stream",
        _ => "application/json",
    };
    let (head, chunked, until_close) = match &script.head {
        Head::None => (String::new(), false, true),
        Head::Default => {
            let session = if initialize {
                "Mcp-Session-Id: s-1\r\n"
            } else {
                ""
            };
            (
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{session}Transfer-Encoding: chunked\r\n\r\n"
                ),
                true,
                false,
            )
        }
        Head::Custom {
            status,
            headers,
            until_close,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(*status));
            let mut typed = false;
            let mut length = false;
            for (name, value) in headers {
                typed |= name.eq_ignore_ascii_case("content-type");
                length |= name.eq_ignore_ascii_case("content-length");
                if let Some(value) = value {
                    head.push_str(&format!("{name}: {}\r\n", ctx.fill_text(value)));
                }
            }
            if !typed {
                head.push_str(&format!("Content-Type: {content_type}\r\n"));
            }
            // 1xx, 204 and 304 have no body (RFC 9112 §6.3): no framing for one.
            let bodiless = *status < 200 || *status == 204 || *status == 304;
            let chunked = !until_close && !length && !bodiless;
            if chunked {
                head.push_str("Transfer-Encoding: chunked\r\n");
            }
            if *until_close {
                head.push_str("Connection: close\r\n");
            }
            head.push_str("\r\n");
            (head, chunked, *until_close)
        }
    };
    if out.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let mut sink = Sink {
        out,
        framing,
        chunked,
        written: &shared.written,
        stall_ends: true,
    };
    match play(&script.steps, &ctx, healthy, &mut sink) {
        Ended::Finished if until_close => {
            let _ = out.shutdown(Shutdown::Both);
            false
        }
        Ended::Finished => sink.finish().is_ok(),
        Ended::Hung => {
            hold(shared, reader);
            false
        }
        Ended::Closed => {
            let _ = out.shutdown(Shutdown::Both);
            false
        }
        Ended::Stalled => {
            wait_for_stop(shared);
            false
        }
        Ended::Gone => false,
    }
}

/// Keeps a connection open, reading (and dropping) whatever comes, until the client closes
/// it, the peer stops, or [`HOLD`].
fn hold(shared: &Shared, reader: &mut BufReader<TcpStream>) {
    let _ = reader.get_ref().set_read_timeout(Some(TICK));
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    while started.elapsed() < HOLD && !shared.stop.load(Ordering::Acquire) {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// Does nothing (not even read) until the peer stops, or [`HOLD`].
fn wait_for_stop(shared: &Shared) {
    let started = Instant::now();
    while started.elapsed() < HOLD && !shared.stop.load(Ordering::Acquire) {
        std::thread::sleep(TICK);
    }
}
