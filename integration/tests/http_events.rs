//! What the HTTP transport records for SSE resumption, seen through a recording event store:
//! nothing is kept for a session once it has ended, on every way a session ends (issue #11
//! §1.5: a stream still running after DELETE re-created the session's entry; the events of an
//! HTTP+SSE session used on `/mcp` were never removed).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::{
    EventFuture, EventReplay, EventStore, MemoryEventStore, WaitFuture,
};
use mcp_runtime::transport::{HttpConfig, serve_http_on};

/// Reports progress every 20 ms for 2 s (so its response is an SSE stream that outlives a
/// DELETE), unless cancelled.
#[tool]
async fn ticks(ctx: Context) -> String {
    for i in 0..100 {
        ctx.progress(f64::from(i), None, None);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
            _ = ctx.cancelled() => return "cancelled".into(),
        }
    }
    "done".into()
}

/// Every call the transport makes, in order, in front of the memory store.
#[derive(Default)]
struct Recording {
    inner: Option<MemoryEventStore>,
    calls: Mutex<Vec<(&'static str, String)>>,
}

impl Recording {
    fn new() -> Arc<Recording> {
        Arc::new(Recording {
            inner: Some(MemoryEventStore::new(256)),
            calls: Mutex::default(),
        })
    }

    fn note(&self, op: &'static str, session: &str) {
        self.calls.lock().unwrap().push((op, session.to_owned()));
    }

    fn store(&self) -> &MemoryEventStore {
        self.inner.as_ref().unwrap()
    }

    /// The calls for `session`.
    fn calls_for(&self, session: &str) -> Vec<&'static str> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|(_, s)| s == session)
            .map(|(op, _)| *op)
            .collect()
    }
}

impl EventStore for Recording {
    fn open<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        self.note("open", session);
        self.store().open(session, stream)
    }
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        event: Bytes,
    ) -> EventFuture<'a, ()> {
        self.note("append", session);
        self.store().append(session, stream, seq, event)
    }
    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        self.note("finish", session);
        self.store().finish(session, stream)
    }
    fn replay<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> EventFuture<'a, Option<EventReplay>> {
        self.store().replay(session, stream, after)
    }
    fn wait<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a> {
        self.store().wait(session, stream, after)
    }
    fn remove_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()> {
        self.note("remove_session", session);
        self.store().remove_session(session)
    }
}

fn start(store: Arc<Recording>) -> u16 {
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
                .name("events")
                .version("1")
                .build()
                .unwrap();
            let config = HttpConfig::default().event_store(store);
            let _ = serve_http_on(server, listener, config).await;
        });
    });
    rx.recv().unwrap()
}

fn request(port: u16, method: &str, path: &str, body: &str, headers: &[(&str, &str)]) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
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

/// Reads until `needle` has arrived; returns everything read.
fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains(needle) {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed before {needle:?}: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text
}

fn header<'a>(response: &'a str, name: &str) -> &'a str {
    response
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
        .unwrap_or_else(|| panic!("no {name} in {response}"))
}

const TICKS: &str = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ticks","arguments":{},"_meta":{"progressToken":"p"}}}"#;

/// Waits (up to 5 s) until `done` says so.
fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts `remove_session` came, and nothing after it.
fn assert_nothing_after_removal(store: &Recording, session: &str) {
    // The stream's task notices the end within a tick; give it time to misbehave.
    std::thread::sleep(Duration::from_millis(300));
    let calls = store.calls_for(session);
    let removed = calls
        .iter()
        .position(|op| *op == "remove_session")
        .unwrap_or_else(|| panic!("the session's events were never removed: {calls:?}"));
    assert_eq!(
        &calls[removed + 1..],
        &[] as &[&str],
        "recorded for a removed session: {calls:?}"
    );
    assert!(calls[..removed].contains(&"append"), "{calls:?}");
}

#[test]
fn a_stream_running_past_delete_records_nothing_more() {
    let store = Recording::new();
    let port = start(store.clone());
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut r = request(port, "POST", "/mcp", init, &[]);
    let text = read_until(&mut r, "protocolVersion");
    let session = header(&text, "mcp-session-id").to_owned();
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let mut ticks = request(port, "POST", "/mcp", TICKS, &h);
    read_until(&mut ticks, "notifications/progress");
    let mut delete = request(port, "DELETE", "/mcp", "", &h);
    read_until(&mut delete, "200 OK");
    assert_nothing_after_removal(&store, &session);
}

#[test]
fn an_http_sse_session_used_on_mcp_forgets_its_events_when_its_stream_closes() {
    let store = Recording::new();
    let port = start(store.clone());
    let mut sse = request(port, "GET", "/sse", "", &[("Accept", "text/event-stream")]);
    let text = read_until(&mut sse, "sessionId=");
    let session: String = text
        .split("sessionId=")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(|c| c.is_ascii_graphic())
        .collect();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let path = format!("/messages?sessionId={session}");
    read_until(&mut request(port, "POST", &path, init, &[]), "202");
    read_until(&mut sse, "protocolVersion");
    // The same session, on the Streamable HTTP endpoint: its response is recorded.
    let h = [("Mcp-Session-Id", session.as_str())];
    let mut ticks = request(port, "POST", "/mcp", TICKS, &h);
    read_until(&mut ticks, "notifications/progress");
    eventually("an event was recorded", || {
        store.calls_for(&session).contains(&"append")
    });
    drop(sse);
    eventually("the session ended with its stream", || {
        store.calls_for(&session).contains(&"remove_session")
    });
    assert_nothing_after_removal(&store, &session);
}
