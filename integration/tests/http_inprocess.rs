//! HTTP behaviour that needs the server in this process: cancellation when a stateless client
//! hangs up (and no cancellation in the session era), the session limits, and user-defined
//! injected parameters that read (and reject on) request headers.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, serve_http_on};

static STATELESS_STARTED: AtomicBool = AtomicBool::new(false);
static STATELESS_DROPPED: AtomicBool = AtomicBool::new(false);
static SESSION_FINISHED: AtomicBool = AtomicBool::new(false);

struct OnDrop(&'static AtomicBool);
impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits forever, noting when it starts and when it is dropped.
#[tool]
async fn wait_forever() -> String {
    let _guard = OnDrop(&STATELESS_DROPPED);
    STATELESS_STARTED.store(true, Ordering::SeqCst);
    std::future::pending::<()>().await;
    unreachable!()
}

/// Finishes after 300 ms, noting that it did.
#[tool]
async fn finish_later() -> String {
    tokio::time::sleep(Duration::from_millis(300)).await;
    SESSION_FINISHED.store(true, Ordering::SeqCst);
    "done".into()
}

/// The request's API key, from the `x-api-key` header: a request without one is rejected
/// before the tool runs.
struct ApiKey(String);

impl mcp_runtime::FromContext for ApiKey {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        ctx.headers()
            .and_then(|h| h.get("x-api-key"))
            .and_then(|v| v.to_str().ok())
            .map(|key| ApiKey(key.to_owned()))
            .ok_or_else(|| McpError::invalid_params("missing x-api-key header"))
    }
}

/// The client's `User-Agent`, if any (never rejects).
struct UserAgent(Option<String>);

impl mcp_runtime::FromContext for UserAgent {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        let agent = ctx
            .headers()
            .and_then(|h| h.get(mcp_runtime::http::header::USER_AGENT));
        Ok(UserAgent(
            agent.and_then(|v| v.to_str().ok()).map(str::to_owned),
        ))
    }
}

/// Greets the caller named by its API key.
#[tool]
async fn whoami(#[inject] key: ApiKey, greeting: String, #[inject] agent: UserAgent) -> String {
    format!(
        "{greeting}, {} ({})",
        key.0,
        agent.0.as_deref().unwrap_or("?")
    )
}

/// Starts a server with `config` on a free port, on a runtime of its own; returns the port.
fn start(config: HttpConfig) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let server = mcp_runtime::Server::builder()
                .name("inprocess")
                .version("1")
                .build()
                .unwrap();
            let _ = serve_http_on(server, listener, config).await;
        });
    });
    rx.recv().unwrap()
}

fn send(port: u16, body: &str, headers: &[(&str, &str)]) -> TcpStream {
    send_on(
        TcpStream::connect(("127.0.0.1", port)).unwrap(),
        port,
        body,
        headers,
    )
}

/// A connection to the server from another loopback address, as another machine would be.
fn connect_from(source: [u8; 4], port: u16) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind((source, 0).into()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let stream = rt
        .block_on(socket.connect(([127, 0, 0, 1], port).into()))
        .unwrap()
        .into_std()
        .unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

fn send_on(mut stream: TcpStream, port: u16, body: &str, headers: &[(&str, &str)]) -> TcpStream {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).unwrap();
    stream
}

/// The status code and the whole response text (headers and body) of a short exchange.
fn exchange(port: u16, body: &str, headers: &[(&str, &str)]) -> (u16, String) {
    read_exchange(send(port, body, headers))
}

/// The status code and the whole response text of the exchange `stream` has begun.
fn read_exchange(mut stream: TcpStream) -> (u16, String) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut text = String::new();
    while !text.contains("\r\n\r\n") || !body_complete(&text) {
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text)
}

fn body_complete(text: &str) -> bool {
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("content-length:")
            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
    });
    length.is_none_or(|l| body.len() >= l)
}

fn session_id(text: &str) -> String {
    text.lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .expect("a session id")
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn wait_for(flag: &AtomicBool, limit: Duration) -> bool {
    let start = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

#[test]
fn a_stateless_client_hanging_up_cancels_its_request() {
    let port = start(HttpConfig::default());
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_forever","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let stream = send(
        port,
        body,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "wait_forever"),
        ],
    );
    assert!(
        wait_for(&STATELESS_STARTED, Duration::from_secs(5)),
        "the tool never started"
    );
    drop(stream);
    assert!(
        wait_for(&STATELESS_DROPPED, Duration::from_secs(5)),
        "closing the connection did not cancel the handler"
    );
}

#[test]
fn a_session_client_hanging_up_does_not_cancel_its_request() {
    let port = start(HttpConfig::default());
    let (status, text) = exchange(port, INIT, &[]);
    assert_eq!(status, 200, "{text}");
    let id = session_id(&text);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"finish_later"}}"#;
    let stream = send(port, call, &[("Mcp-Session-Id", &id)]);
    std::thread::sleep(Duration::from_millis(50));
    drop(stream);
    assert!(
        wait_for(&SESSION_FINISHED, Duration::from_secs(3)),
        "in the session era a disconnect is not a cancellation (the client sends notifications/cancelled)"
    );
}

/// Opens the session's GET stream and returns the connection once its headers are in.
fn open_get_stream(port: u16, session: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = stream.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    stream
}

/// At the limit a handshake ends the session idle the longest instead of being refused (10,000
/// handshakes never used again used to lock everyone out for the idle timeout); only when
/// every session is busy is it 503, with `Retry-After`. Idle sessions still expire.
#[test]
fn at_the_session_cap_the_longest_idle_session_makes_room() {
    let port = start(
        HttpConfig::default()
            .max_sessions(2)
            .session_idle_timeout(Duration::from_secs(1)),
    );
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let first = session_id(&exchange(port, INIT, &[]).1);
    std::thread::sleep(Duration::from_millis(20));
    let second = session_id(&exchange(port, INIT, &[]).1);
    let (status, text) = exchange(port, INIT, &[]);
    assert_eq!(status, 200, "a third handshake makes room: {text}");
    let third = session_id(&text);
    let (status, text) = exchange(port, ping, &[("Mcp-Session-Id", &first)]);
    assert_eq!(status, 404, "the longest-idle session made room: {text}");
    let (status, text) = exchange(port, ping, &[("Mcp-Session-Id", &second)]);
    assert_eq!(status, 200, "{text}");
    // Sessions with an open stream are busy: neither is ended to make room.
    let streams = [
        open_get_stream(port, &second),
        open_get_stream(port, &third),
    ];
    let (status, text) = exchange(port, INIT, &[]);
    assert_eq!(status, 503, "every session is busy: {text}");
    assert!(text.contains("Too many sessions"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("retry-after: "),
        "{text}"
    );
    // Busy sessions do not expire either; once their streams close, they do (the reaper runs
    // every second; an idle session is gone within about two).
    std::thread::sleep(Duration::from_millis(1500));
    let (status, text) = exchange(port, ping, &[("Mcp-Session-Id", &third)]);
    assert_eq!(
        status, 200,
        "a session with an open stream is not reaped: {text}"
    );
    drop(streams);
    std::thread::sleep(Duration::from_millis(2600));
    let (status, text) = exchange(port, ping, &[("Mcp-Session-Id", &second)]);
    assert_eq!(status, 404, "an expired session is unknown: {text}");
    let (status, _) = exchange(port, INIT, &[]);
    assert_eq!(status, 200, "room for new sessions again");
}

/// Concurrent handshakes at the limit cannot overshoot it: the check and the insertion are one
/// step. 32 at once against a limit of 4, all of them then holding a stream: exactly 4 open.
#[test]
fn concurrent_handshakes_do_not_overshoot_the_session_limit() {
    let port = start(HttpConfig::default().max_sessions(4));
    let opened: Vec<Option<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..32)
            .map(|_| {
                scope.spawn(move || {
                    let (status, text) = exchange(port, INIT, &[]);
                    (status == 200).then(|| session_id(&text))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Every handshake succeeded (each evicting an idle one); only the last 4 still exist.
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let alive = opened
        .iter()
        .flatten()
        .filter(|id| exchange(port, ping, &[("Mcp-Session-Id", id)]).0 == 200)
        .count();
    assert_eq!(alive, 4, "{opened:?}");
}

/// Reports progress three times, then answers.
#[tool]
async fn three_steps(ctx: Context) -> &'static str {
    for step in [1.0, 2.0, 3.0] {
        ctx.progress(step, Some(3.0), None);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    "stepped"
}

/// Reads until the chunked body ends (`0\r\n\r\n`), or `limit` passes.
fn read_stream(mut stream: TcpStream, limit: Duration) -> String {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut text = String::new();
    let mut buf = vec![0u8; 16 * 1024];
    while !text.ends_with("0\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    text
}

/// `(id, data)` of each SSE event in a (de-chunked enough) response text.
fn events(text: &str) -> Vec<(Option<String>, String)> {
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    body.split("\n\n")
        .filter(|e| e.contains("data:"))
        .map(|e| {
            let id = e
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .map(str::to_owned);
            let data = e
                .lines()
                .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
                .collect::<String>();
            (id, data)
        })
        .collect()
}

#[test]
fn progress_turns_the_answer_into_an_sse_stream_that_can_be_resumed() {
    let port = start(HttpConfig::default());
    let id = session_id(&exchange(port, INIT, &[]).1);
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"three_steps","_meta":{"progressToken":"p"}}}"#;
    let text = read_stream(
        send(port, call, &[("Mcp-Session-Id", &id)]),
        Duration::from_secs(5),
    );
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{text}"
    );
    let evs = events(&text);
    assert_eq!(evs.len(), 5, "priming, three progress, the result: {evs:?}");
    assert!(
        evs[0].1.trim().is_empty() && text.contains("retry: "),
        "a priming event first: {text}"
    );
    assert!(
        evs.iter().all(|(id, _)| id.is_some()),
        "every event has an id: {evs:?}"
    );
    let mut ids: Vec<&String> = evs.iter().map(|(id, _)| id.as_ref().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 5, "ids are unique");
    for (i, step) in [1, 2, 3].iter().enumerate() {
        let note: serde_json::Value = serde_json::from_str(&evs[i + 1].1).unwrap();
        assert_eq!(
            (note["method"].clone(), note["params"]["progress"].clone()),
            (
                serde_json::json!("notifications/progress"),
                serde_json::json!(*step as f64)
            )
        );
    }
    let result: serde_json::Value = serde_json::from_str(&evs[4].1).unwrap();
    assert_eq!(
        (
            result["id"].clone(),
            result["result"]["content"][0]["text"].clone()
        ),
        (serde_json::json!(5), serde_json::json!("stepped"))
    );

    // A client that lost the stream after the second progress event gets the rest again.
    let after = evs[2].0.clone().unwrap();
    let mut get = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(get, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\nLast-Event-ID: {after}\r\n\r\n").unwrap();
    let replay = events(&read_stream(get, Duration::from_secs(3)));
    let data: Vec<&str> = replay
        .iter()
        .map(|(_, d)| d.as_str())
        .filter(|d| !d.trim().is_empty())
        .collect();
    assert_eq!(
        data.len(),
        2,
        "the third progress event and the result: {replay:?}"
    );
    assert!(data[1].contains("\"stepped\""), "{replay:?}");
}

#[test]
fn stateless_streams_carry_no_event_ids() {
    let port = start(HttpConfig::default());
    let call = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"three_steps","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let stream = send(
        port,
        call,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "three_steps"),
        ],
    );
    let evs = events(&read_stream(stream, Duration::from_secs(5)));
    assert_eq!(
        evs.len(),
        4,
        "three progress events and the result: {evs:?}"
    );
    assert!(
        evs.iter().all(|(id, _)| id.is_none()),
        "2026-07-28 has no resumption: {evs:?}"
    );
    assert!(evs[3].1.contains("\"resultType\":\"complete\""), "{evs:?}");
}

#[test]
fn json_only_mode_answers_with_json_even_when_a_tool_reports_progress() {
    let port = start(HttpConfig::default().json_only(true));
    let id = session_id(&exchange(port, INIT, &[]).1);
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"three_steps","_meta":{"progressToken":"p"}}}"#;
    let (status, text) = exchange(port, call, &[("Mcp-Session-Id", &id)]);
    assert_eq!(status, 200, "{text}");
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{text}"
    );
    assert!(
        text.contains("\"stepped\"") && !text.contains("notifications/progress"),
        "{text}"
    );
}

#[test]
fn slow_request_headers_are_cut_off() {
    let port = start(HttpConfig::default().header_read_timeout(Duration::from_millis(500)));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    let n = stream.read(&mut buf).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "the connection was not cut"
    );
    assert!(
        n == 0 || text.starts_with("HTTP/1.1 408"),
        "closed or 408: {text:?}"
    );
}

/// A body announced but trickled (10 of 100 bytes, then nothing) is cut off at the body read
/// timeout with 408 and a closed connection: it holds no task or buffer (there was no body
/// timeout, only one for headers).
#[test]
fn a_stalled_request_body_is_cut_off() {
    let port = start(HttpConfig::default().body_read_timeout(Duration::from_millis(500)));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let start = Instant::now();
    let mut text = String::new();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    assert!(start.elapsed() < Duration::from_secs(4), "not cut: {text}");
    assert!(text.starts_with("HTTP/1.1 408"), "{text:?}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
}

/// A connection that sends nothing is closed at the header timeout, and one that goes quiet
/// after a request at the idle timeout (hyper's header timeout only starts at a request's
/// first byte: silent connections stayed open forever). An SSE stream in progress is not idle.
#[test]
fn silent_and_idle_connections_are_closed() {
    let port = start(
        HttpConfig::default()
            .header_read_timeout(Duration::from_millis(400))
            .idle_connection_timeout(Duration::from_millis(600)),
    );
    let closed_within = |stream: &mut TcpStream, limit: Duration| -> bool {
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let start = Instant::now();
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return start.elapsed() < limit,
                Ok(_) => {}
            }
        }
    };
    let mut silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    assert!(
        closed_within(&mut silent, Duration::from_secs(3)),
        "a silent connection stayed open"
    );
    // A keep-alive connection: one request answered, then quiet.
    let mut quiet = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = INIT;
    write!(
        quiet,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    assert!(
        closed_within(&mut quiet, Duration::from_secs(3)),
        "an idle keep-alive connection stayed open"
    );
    // A GET stream sends keep-alives only every 15 s and the client sends nothing: it stays.
    let id = session_id(&exchange(port, INIT, &[]).1);
    let mut stream = open_get_stream(port, &id);
    stream
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    let mut buf = [0u8; 256];
    match stream.read(&mut buf) {
        Err(e) => assert!(
            matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{e}"
        ),
        Ok(n) => assert!(n > 0, "an open SSE stream was closed as idle"),
    }
}

/// Waits a second and a half.
#[tool]
async fn hold_on() -> &'static str {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    "held"
}

/// 2026-07-28 clients share the server's limits; each also has its own, so one client cannot
/// take every slot: a third request in progress from the same client is 429 with
/// `Retry-After`. Without a token verifier, an `Authorization` header is something nobody
/// checked: another one from the same address is the same client (issue #27: eight made-up
/// headers from one address took all 1,024 slots), while another address is served.
#[test]
fn each_stateless_client_has_its_own_limit() {
    let port = start(HttpConfig::default().max_in_flight_per_client(2));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold_on","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "hold_on"),
    ];
    let busy: Vec<TcpStream> = (0..2).map(|_| send(port, call, &headers)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let (status, text) = exchange(port, call, &headers);
    assert_eq!(status, 429, "{text}");
    assert!(
        text.to_ascii_lowercase().contains("retry-after: 1"),
        "{text}"
    );
    assert!(
        text.contains("\"id\":1"),
        "the error names the request: {text}"
    );
    let made_up = [
        headers[0],
        headers[1],
        headers[2],
        ("Authorization", "Bearer made-up"),
    ];
    let (status, text) = exchange(port, call, &made_up);
    assert_eq!(
        status, 429,
        "an unverified header opened a new bucket: {text}"
    );
    // Another address (127.0.0.2 is loopback too) is another client.
    let other = send_on(connect_from([127, 0, 0, 2], port), port, call, &headers);
    let (status, text) = read_exchange(other);
    assert_eq!(status, 200, "another client is served: {text}");
    drop(busy);
}

/// Connections beyond the limit are closed as soon as they are accepted; the ones already
/// open keep working, and room frees up when one closes.
#[test]
fn connections_beyond_the_limit_are_closed() {
    let port = start(HttpConfig::default().max_connections(2));
    let idle: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut third = TcpStream::connect(("127.0.0.1", port)).unwrap();
    third
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = third.write_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let mut buf = [0u8; 64];
    assert!(
        matches!(third.read(&mut buf), Ok(0) | Err(_)),
        "a third connection was served"
    );
    drop(idle);
    std::thread::sleep(Duration::from_millis(100));
    let (status, _) = exchange(port, INIT, &[]);
    assert_eq!(status, 200, "room again once connections close");
}

#[test]
fn stateless_clients_may_use_the_same_request_ids_at_once() {
    let port = start(HttpConfig::default());
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"finish_later","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "finish_later"),
    ];
    let first = std::thread::spawn(move || exchange(port, call, &headers));
    let second = exchange(port, call, &headers);
    let first = first.join().unwrap();
    for (status, text) in [first, second] {
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("\"done\""), "{text}");
    }
}

#[test]
fn a_session_stream_lost_mid_call_is_resumed_to_its_result() {
    let port = start(HttpConfig::default());
    let id = session_id(&exchange(port, INIT, &[]).1);
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"three_steps","_meta":{"progressToken":"r"}}}"#;
    let mut stream = send(port, call, &[("Mcp-Session-Id", &id)]);
    // Read just the priming event, then hang up.
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains("retry:") {
        let n = stream.read(&mut buf).unwrap();
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let priming = text
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap()
        .to_owned();
    drop(stream);
    let mut get = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(get, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\nLast-Event-ID: {priming}\r\n\r\n").unwrap();
    let replay = read_stream(get, Duration::from_secs(5));
    assert!(replay.contains("notifications/progress"), "{replay}");
    assert!(
        replay.contains("\"stepped\""),
        "the result arrives on the resumed stream: {replay}"
    );
}

#[test]
fn clients_before_2025_11_25_get_no_priming_event() {
    let port = start(HttpConfig::default());
    let init = INIT.replace("2025-11-25", "2025-06-18");
    let id = session_id(&exchange(port, &init, &[]).1);
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"three_steps","_meta":{"progressToken":"q"}}}"#;
    let text = read_stream(
        send(port, call, &[("Mcp-Session-Id", &id)]),
        Duration::from_secs(5),
    );
    let evs = events(&text);
    assert_eq!(
        evs.len(),
        4,
        "three progress events and the result, no empty priming event: {evs:?}"
    );
    assert!(
        evs.iter().all(|(_, data)| !data.trim().is_empty()),
        "{evs:?}"
    );
}

/// Echoes a request header, if the request came over HTTP.
#[tool]
async fn which_key(ctx: Context) -> String {
    match ctx.headers() {
        Some(h) => h
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned(),
        None => "not http".into(),
    }
}

#[test]
fn handlers_see_the_http_request_headers() {
    let port = start(HttpConfig::default());
    let id = session_id(&exchange(port, INIT, &[]).1);
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"which_key"}}"#;
    let (status, text) = exchange(
        port,
        call,
        &[("Mcp-Session-Id", &id), ("X-Api-Key", "k-123")],
    );
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"k-123\""), "{text}");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let text = rt.block_on(async {
        let client = mcp_runtime::testing::TestClient::connect().await;
        client
            .call_tool("which_key", serde_json::json!({}))
            .await
            .unwrap()
            .text()
    });
    assert_eq!(text, "not http");
}

/// Ends its response stream at once, then finishes (SSE polling, SEP-1699).
#[tool]
async fn poll_me(ctx: Context) -> String {
    let closed = ctx.close_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    format!("closed={closed}")
}

#[test]
fn a_handler_can_end_its_stream_and_the_client_resumes_to_the_result() {
    let port = start(HttpConfig::default());
    let id = session_id(&exchange(port, INIT, &[]).1);
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"poll_me"}}"#;
    // The server ends the stream after its priming event: no result on it.
    let text = read_stream(
        send(port, call, &[("Mcp-Session-Id", &id)]),
        Duration::from_secs(5),
    );
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.ends_with("0\r\n\r\n"), "the stream ended: {text}");
    let got = events(&text);
    assert_eq!(got.len(), 1, "only the priming event: {text}");
    let priming = got[0].0.clone().expect("the priming event has an id");
    assert!(!text.contains("closed="), "{text}");
    // Resuming from it delivers the result.
    let mut get = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(get, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\nLast-Event-ID: {priming}\r\n\r\n").unwrap();
    let replay = read_stream(get, Duration::from_secs(5));
    assert!(replay.contains("closed=true"), "{replay}");
    // Without a resumable stream (stateless) there is nothing to end: the answer is plain JSON.
    let stateless = r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"poll_me","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let (status, text) = exchange(
        port,
        stateless,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "poll_me"),
        ],
    );
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("closed=false"), "{text}");
}

/// Runs a query in a region, which clients mirror into the `Mcp-Param-Region` header.
#[tool]
async fn regional(
    #[schemars(extend("x-mcp-header" = "Region"))] region: String,
    query: String,
) -> String {
    format!("{region}: {query}")
}

#[test]
fn mirrored_arguments_must_match_their_mcp_param_headers() {
    let port = start(HttpConfig::default());
    let call = |region: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"regional","arguments":{{"region":"{region}","query":"q"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let base = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "regional"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut h = base.to_vec();
        h.extend_from_slice(extra);
        h
    };
    // Plain, Base64-encoded (`Hello, 世界`), and an unencoded value that only looks encoded.
    for (region, header) in [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("=?base64?abc", "=?base64?abc"),
    ] {
        let (status, text) = exchange(port, &call(region), &with(&[("Mcp-Param-Region", header)]));
        assert_eq!(status, 200, "{header}: {text}");
        assert!(text.contains(&format!("{region}: q")), "{text}");
    }
    // Missing, different, badly encoded: 400 with -32020.
    for headers in [
        with(&[]),
        with(&[("Mcp-Param-Region", "eu-west1")]),
        with(&[("Mcp-Param-Region", "=?base64?dXMtd2VzdDE?=")]),
        with(&[("Mcp-Param-Region", "=?base64?dXMt!!!d2VzdDE=?=")]),
        with(&[
            ("Mcp-Param-Region", "us-west1"),
            ("Mcp-Param-Region", "us-west1"),
        ]),
    ] {
        let (status, text) = exchange(port, &call("us-west1"), &headers);
        assert_eq!(status, 400, "{headers:?}: {text}");
        assert!(text.contains("-32020"), "{text}");
    }
}

/// A name to greet.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Who {
    name: String,
}

/// Asks the user's name.
#[tool]
async fn ask_who(ctx: Context) -> Result<String, McpError> {
    let answer = ctx.elicit::<Who>("Who are you?").await?;
    Ok(format!(
        "Hi {}",
        answer.accepted().map_or("?".into(), |w| w.name)
    ))
}

#[test]
fn with_json_only_responses_asks_travel_on_the_get_stream() {
    let port = start(HttpConfig::default().json_only(true));
    let init = INIT.replace(
        r#""capabilities":{}"#,
        r#""capabilities":{"elicitation":{}}"#,
    );
    let id = session_id(&exchange(port, &init, &[]).1);
    // Without a GET stream there is nowhere to ask: an error, at once.
    let call = r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask_who"}}"#;
    let (status, text) = exchange(port, call, &[("Mcp-Session-Id", &id)]);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("no stream to the client"), "{text}");
    // With one, the request goes there and the answer comes back by POST.
    let mut get = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(get, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\n\r\n").unwrap();
    get.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("\n\n") {
        let n = get.read(&mut buf).unwrap();
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let mut post = send(
        port,
        &call.replace("\"id\":6", "\"id\":7"),
        &[("Mcp-Session-Id", &id)],
    );
    while !seen.contains("elicitation/create") {
        let n = get.read(&mut buf).unwrap();
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let line = seen
        .lines()
        .find(|l| l.contains("elicitation/create"))
        .unwrap();
    let request: serde_json::Value =
        serde_json::from_str(line.trim_start_matches("data:").trim()).unwrap();
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    let (status, _) = exchange(port, &answer.to_string(), &[("Mcp-Session-Id", &id)]);
    assert_eq!(status, 202);
    post.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut text = String::new();
    while !text.contains("Hi Ada") {
        let n = post.read(&mut buf).unwrap();
        assert!(n > 0, "{text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{text}"
    );
}

#[test]
fn a_request_state_is_bound_to_the_callers_authorization() {
    let port = start(HttpConfig::default());
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let headers = |auth: &'static str| {
        vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "ask_who"),
            ("Authorization", auth),
        ]
    };
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ask_who",{meta}}}}}"#
    );
    let (status, text) = exchange(port, &first, &headers("Bearer alice"));
    assert_eq!(status, 200, "{text}");
    let body: serde_json::Value =
        serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["result"]["resultType"], "input_required", "{text}");
    let retry = serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {
            "name": "ask_who",
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
            },
            "inputResponses": {"elicit-0": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": body["result"]["requestState"]
        }
    })
    .to_string();
    // Another caller cannot use the state.
    let (_, text) = exchange(port, &retry, &headers("Bearer mallory"));
    assert!(
        text.contains("-32602") && text.contains("different request"),
        "{text}"
    );
    // The caller it was issued to can.
    let (_, text) = exchange(port, &retry, &headers("Bearer alice"));
    assert!(text.contains("Hi Ada"), "{text}");
}

const WHOAMI: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"greeting":"Hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const WHOAMI_HEADERS: [(&str, &str); 3] = [
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "whoami"),
];

#[test]
fn a_user_defined_injected_parameter_reads_the_request_headers() {
    let port = start(HttpConfig::default());
    let mut headers = WHOAMI_HEADERS.to_vec();
    headers.extend([("x-api-key", "key-123"), ("User-Agent", "tester/1")]);
    let (status, text) = exchange(port, WHOAMI, &headers);
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("Hi, key-123 (tester/1)"), "{text}");
}

#[test]
fn an_injected_parameter_that_fails_rejects_the_request_with_its_error() {
    let port = start(HttpConfig::default());
    let (status, text) = exchange(port, WHOAMI, &WHOAMI_HEADERS);
    assert_eq!(status, 200, "a JSON-RPC error, not an HTTP one: {text}");
    assert!(
        text.contains(r#""code":-32602"#) && text.contains("missing x-api-key header"),
        "{text}"
    );
    assert!(
        !text.contains(r#""isError""#),
        "a protocol error, not a tool result: {text}"
    );
}

/// A request refused before its body is read (no token: 401; a foreign Host: 403) is answered
/// with `Connection: close` when it has a body: the server does not read that body, so the
/// connection cannot reliably carry the client's next request (the official Python client's
/// retry with a token, sent on the same connection, met a closed connection under load).
#[test]
fn a_refusal_before_the_body_is_read_closes_the_connection() {
    let port = start(
        HttpConfig::new("127.0.0.1:0").auth(mcp_runtime::auth::Auth::jwt(
            "http://127.0.0.1:9",
            "http://127.0.0.1/mcp",
        )),
    );
    let head = |host: &str, length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    // The head alone: the body is still on its way when the refusal is decided.
    for (host, status) in [
        (format!("127.0.0.1:{port}"), 401),
        ("evil.example".to_owned(), 403),
    ] {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(head(&host, 64).as_bytes()).unwrap();
        let (got, text) = read_exchange(stream);
        assert_eq!(got, status, "{text}");
        let head = text.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
        assert!(head.contains("connection: close"), "{text}");
    }
    // Without a body the connection stays usable (nothing is left unread).
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(
            format!(
                "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
    let (got, text) = read_exchange(stream);
    assert_eq!(got, 401, "{text}");
    let head = text.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    assert!(!head.contains("connection: close"), "{text}");
}
