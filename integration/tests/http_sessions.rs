//! Session-era sessions across instances, with the in-memory stores shared by two servers in
//! one process: session ids carry the instance's route token; a session opened on one
//! instance is restored on the other for its owner only; `DELETE` and expiry end it on both;
//! a stream is resumed with `Last-Event-ID` on the other instance; a failing store answers
//! 503, never 404.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::task::MemoryTaskStore;
use mcp_runtime::transport::http::{
    MemoryEventStore, MemorySessionStore, RouteToken, SessionFuture, SessionRecord, SessionStore,
    SessionStoreError, TouchOutcome,
};
use mcp_runtime::transport::{EventStore, HttpConfig, serve_http_on};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Reports progress 10 times, 30 ms apart, then answers "done".
#[tool]
async fn ticks(ctx: Context) -> String {
    for i in 0..10 {
        ctx.progress(f64::from(i), None, None);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    "done".into()
}

/// Works for `ms` milliseconds, as a task when asked.
#[tool(task = "optional")]
async fn work(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("worked {ms} ms")
}

/// Starts an instance on its own runtime thread; returns its port.
fn start(config: HttpConfig) -> u16 {
    start_with_tasks(config, None)
}

/// [`start`], the server keeping its tasks in `tasks` when given.
fn start_with_tasks(config: HttpConfig, tasks: Option<Arc<MemoryTaskStore>>) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let mut server = mcp_runtime::Server::builder().name("fleet").version("1");
            if let Some(tasks) = tasks {
                server = server.task_store(tasks);
            }
            let server = server.build().unwrap();
            let _ = serve_http_on(server, listener, config).await;
        });
    });
    rx.recv().unwrap()
}

/// Two instances `i1` and `i2` sharing one session store and one event store.
fn fleet(idle: Duration) -> (u16, u16, Arc<MemorySessionStore>) {
    let sessions = Arc::new(MemorySessionStore::new());
    let events: Arc<dyn EventStore> = Arc::new(MemoryEventStore::new(256));
    let config = |route: &str| {
        HttpConfig::default()
            .route_token(route.parse().unwrap())
            .session_store(sessions.clone())
            .event_store(events.clone())
            .session_idle_timeout(idle)
    };
    (start(config("i1")), start(config("i2")), sessions)
}

fn send(port: u16, method: &str, body: &str, headers: &[(&str, &str)]) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
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

/// A whole response (the server closes the connection after it).
fn call(port: u16, method: &str, body: &str, headers: &[(&str, &str)]) -> String {
    let mut stream = send(port, method, body, headers);
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

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

fn status(response: &str) -> u16 {
    response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"))
}

fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const ADD: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;
const TICKS: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ticks","arguments":{},"_meta":{"progressToken":"p"}}}"#;

/// Initializes on `port` as `auth`; returns the session id.
fn initialize(port: u16, auth: &str) -> String {
    let r = call(port, "POST", INIT, &[("Authorization", auth)]);
    assert_eq!(status(&r), 200, "{r}");
    header(&r, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {r}"))
        .to_owned()
}

fn add_on(port: u16, session: &str, auth: &str) -> String {
    call(
        port,
        "POST",
        ADD,
        &[("Mcp-Session-Id", session), ("Authorization", auth)],
    )
}

#[test]
fn session_ids_carry_the_route_token() {
    let (i1, i2, _) = fleet(Duration::from_secs(60));
    for (port, route) in [(i1, "i1-"), (i2, "i2-")] {
        let id = initialize(port, "Bearer a");
        let random = id.strip_prefix(route).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(random.len(), 32, "{id}");
        assert!(id.len() <= 64);
        assert!(
            id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'),
            "{id}"
        );
    }
    assert!(RouteToken::new("i-1").is_err());
}

#[test]
fn a_session_opened_on_one_instance_is_restored_on_the_other_for_its_owner_only() {
    let (i1, i2, store) = fleet(Duration::from_secs(60));
    let id = initialize(i1, "Bearer alice");
    assert_eq!(store.len(), 1, "saved at initialize");
    let r = add_on(i2, &id, "Bearer mallory");
    assert_eq!(status(&r), 404, "another caller: {r}");
    let r = call(i2, "POST", ADD, &[("Mcp-Session-Id", &id)]);
    assert_eq!(status(&r), 404, "no caller: {r}");
    for _ in 0..3 {
        let r = add_on(i2, &id, "Bearer alice");
        assert_eq!(status(&r), 200, "{r}");
        assert!(r.contains(r#""text":"5""#), "{r}");
    }
    // The owner's calls keep working on both.
    let r = add_on(i1, &id, "Bearer alice");
    assert_eq!(status(&r), 200, "{r}");
    let r = add_on(i2, &id, "Bearer mallory");
    assert_eq!(
        status(&r),
        404,
        "still bound to its owner once restored: {r}"
    );
}

/// The memory store, counting loads.
#[derive(Default)]
struct Counting {
    inner: MemorySessionStore,
    loads: std::sync::atomic::AtomicUsize,
}

impl SessionStore for Counting {
    fn save<'a>(&'a self, id: &'a str, r: &'a SessionRecord, t: Duration) -> SessionFuture<'a, ()> {
        self.inner.save(id, r, t)
    }
    fn load<'a>(&'a self, id: &'a str) -> SessionFuture<'a, Option<SessionRecord>> {
        self.loads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            // Slow, so the concurrent requests all arrive while it runs.
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.inner.load(id).await
        })
    }
    fn touch<'a>(&'a self, id: &'a str, t: Duration) -> SessionFuture<'a, TouchOutcome> {
        self.inner.touch(id, t)
    }
    fn remove<'a>(&'a self, id: &'a str, t: Duration) -> SessionFuture<'a, ()> {
        self.inner.remove(id, t)
    }
}

/// A 2025-11-25 task started in a session on i1 is read, and its result fetched, through i2,
/// which restores the session: a session names its tasks after its id, not after the
/// instance's copy of it.
#[test]
fn a_sessions_tasks_are_reached_through_the_instance_that_restored_it() {
    let sessions = Arc::new(MemorySessionStore::new());
    let tasks = Arc::new(MemoryTaskStore::new());
    let config = |route: &str| {
        HttpConfig::default()
            .route_token(route.parse().unwrap())
            .session_store(sessions.clone())
    };
    let i1 = start_with_tasks(config("i1"), Some(tasks.clone()));
    let i2 = start_with_tasks(config("i2"), Some(tasks.clone()));
    let init = INIT.replace(r#""capabilities":{}"#, r#""capabilities":{"tasks":{}}"#);
    let r = call(i1, "POST", &init, &[]);
    assert_eq!(status(&r), 200, "{r}");
    let session = header(&r, "mcp-session-id").unwrap().to_owned();
    let on = |port: u16, body: &str| call(port, "POST", body, &[("Mcp-Session-Id", &session)]);
    let r = on(
        i1,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","arguments":{"ms":300},"task":{"ttl":60000}}}"#,
    );
    let id = r
        .split(r#""taskId":""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no task id: {r}"))
        .to_owned();
    let get =
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{{"taskId":"{id}"}}}}"#);
    let r = on(i2, &get);
    assert_eq!(status(&r), 200, "{r}");
    assert!(r.contains(&id) && !r.contains(r#""error""#), "{r}");
    let result = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{{"taskId":"{id}"}}}}"#
    );
    let r = on(i2, &result);
    assert!(r.contains("worked 300 ms"), "{r}");
    // Another session (of the same caller) does not see it, on either instance.
    let other = call(i2, "POST", &init, &[]);
    let other = header(&other, "mcp-session-id").unwrap().to_owned();
    for port in [i1, i2] {
        let r = call(port, "POST", &get, &[("Mcp-Session-Id", &other)]);
        assert!(r.contains(r#""error""#), "{r}");
    }
}

#[test]
fn concurrent_first_requests_on_another_instance_restore_the_session_once() {
    let store = Arc::new(Counting::default());
    let config = |route: &str| {
        HttpConfig::default()
            .route_token(route.parse().unwrap())
            .session_store(store.clone())
    };
    let (i1, i2) = (start(config("i1")), start(config("i2")));
    let id = initialize(i1, "Bearer alice");
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let id = id.clone();
            std::thread::spawn(move || add_on(i2, &id, "Bearer alice"))
        })
        .collect();
    for c in calls {
        let r = c.join().unwrap();
        assert_eq!(status(&r), 200, "{r}");
    }
    assert_eq!(store.loads.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn delete_on_one_instance_ends_the_session_on_the_other() {
    let (i1, i2, store) = fleet(Duration::from_secs(2));
    let id = initialize(i1, "Bearer alice");
    assert_eq!(status(&add_on(i2, &id, "Bearer alice")), 200);
    let r = call(
        i2,
        "DELETE",
        "",
        &[("Mcp-Session-Id", &id), ("Authorization", "Bearer mallory")],
    );
    assert_eq!(status(&r), 404, "only its owner deletes it: {r}");
    let r = call(
        i2,
        "DELETE",
        "",
        &[("Mcp-Session-Id", &id), ("Authorization", "Bearer alice")],
    );
    assert_eq!(status(&r), 200, "{r}");
    assert!(store.is_empty());
    assert_eq!(status(&add_on(i2, &id, "Bearer alice")), 404);
    // i1 still holds its copy: it learns of the removal at its next refresh (idle / 4).
    std::thread::sleep(Duration::from_millis(700));
    let r = add_on(i1, &id, "Bearer alice");
    assert_eq!(status(&r), 404, "{r}");
}

#[test]
fn an_idle_session_expires_from_the_store() {
    let (i1, i2, store) = fleet(Duration::from_secs(1));
    let id = initialize(i1, "Bearer alice");
    let kept = initialize(i1, "Bearer alice");
    // One session in use keeps its record alive past the idle timeout, the other expires.
    let deadline = Instant::now() + Duration::from_millis(1800);
    while Instant::now() < deadline {
        assert_eq!(status(&add_on(i1, &kept, "Bearer alice")), 200);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(store.len(), 1);
    assert_eq!(status(&add_on(i2, &id, "Bearer alice")), 404);
    assert_eq!(status(&add_on(i2, &kept, "Bearer alice")), 200);
}

/// The `id:` lines of an SSE text, in order.
fn event_ids(text: &str) -> Vec<(u64, u64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(|id| {
            let (stream, seq) = id.trim().split_once('-').unwrap();
            (stream.parse().unwrap(), seq.parse().unwrap())
        })
        .collect()
}

#[test]
fn a_stream_is_resumed_on_the_other_instance_without_a_gap() {
    let (i1, i2, _) = fleet(Duration::from_secs(60));
    let id = initialize(i1, "Bearer alice");
    let headers = [
        ("Mcp-Session-Id", id.as_str()),
        ("Authorization", "Bearer alice"),
    ];
    let mut stream = send(i1, "POST", TICKS, &headers);
    let seen = read_until(&mut stream, r#""progress":1"#);
    drop(stream);
    let ids = event_ids(&seen);
    let &(stream_id, last) = ids.last().expect("events with ids");
    assert!(
        last >= 2,
        "the priming event and two progress events: {seen}"
    );
    // The tool goes on without the client; its events are recorded.
    std::thread::sleep(Duration::from_millis(500));
    let last_id = format!("{stream_id}-{last}");
    let mut resumed = send(
        i2,
        "GET",
        "",
        &[
            ("Mcp-Session-Id", id.as_str()),
            ("Authorization", "Bearer alice"),
            ("Last-Event-ID", last_id.as_str()),
        ],
    );
    let rest = read_until(&mut resumed, r#""text":"done""#);
    assert_eq!(status(&rest), 200, "{rest}");
    let replayed: Vec<u64> = event_ids(&rest)
        .into_iter()
        .inspect(|(s, _)| assert_eq!(*s, stream_id, "{rest}"))
        .map(|(_, seq)| seq)
        .collect();
    // Every event after the resume point, in order (no id is sent twice).
    let want: Vec<u64> = (last + 1..=last + replayed.len() as u64).collect();
    assert_eq!(replayed, want, "no gap: {rest}");
    assert!(rest.contains("retry: "), "{rest}");
    assert!(rest.matches(r#""progress":"#).count() + 2 >= 9, "{rest}");
}

/// A store that always fails.
struct Broken;

impl SessionStore for Broken {
    fn save<'a>(&'a self, _: &'a str, _: &'a SessionRecord, _: Duration) -> SessionFuture<'a, ()> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }
    fn load<'a>(&'a self, _: &'a str) -> SessionFuture<'a, Option<SessionRecord>> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }
    fn touch<'a>(&'a self, _: &'a str, _: Duration) -> SessionFuture<'a, TouchOutcome> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }
    fn remove<'a>(&'a self, _: &'a str, _: Duration) -> SessionFuture<'a, ()> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }
}

#[test]
fn a_failing_store_answers_503_never_404_and_local_sessions_keep_working() {
    let port = start(
        HttpConfig::default()
            .session_store(Arc::new(Broken))
            .session_idle_timeout(Duration::from_secs(1)),
    );
    // A session opened here works here, although it could not be saved.
    let id = initialize(port, "Bearer alice");
    for _ in 0..3 {
        assert_eq!(status(&add_on(port, &id, "Bearer alice")), 200);
        std::thread::sleep(Duration::from_millis(150));
    }
    let r = add_on(port, "i9-00000000000000000000000000000000", "Bearer alice");
    assert_eq!(status(&r), 503, "{r}");
    assert_eq!(header(&r, "retry-after"), Some("1"), "{r}");
    let body = &r[r.find("\r\n\r\n").unwrap() + 4..];
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["id"], 2, "{r}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session store is unavailable"),
        "{r}"
    );
}

/// A client that lost its GET stream reconnects with the `Last-Event-ID` it saw, here on the
/// other instance (its own died): nothing was recorded on a standalone stream, so the new
/// stream takes its place as the session's notification stream and starts with every list
/// the server has, changed or not (what went out on the lost stream may never have arrived).
#[test]
fn a_get_stream_reopened_elsewhere_carries_the_sessions_notifications() {
    let (i1, i2, _) = fleet(Duration::from_secs(60));
    let id = initialize(i1, "Bearer alice");
    let headers = [
        ("Mcp-Session-Id", id.as_str()),
        ("Authorization", "Bearer alice"),
    ];
    let mut get = send(i1, "GET", "", &headers);
    let primed = read_until(&mut get, "retry: ");
    drop(get);
    let &(stream, seq) = event_ids(&primed).last().expect("a priming event");
    let last = format!("{stream}-{seq}");
    let mut reopened = send(
        i2,
        "GET",
        "",
        &[
            ("Mcp-Session-Id", id.as_str()),
            ("Authorization", "Bearer alice"),
            ("Last-Event-ID", last.as_str()),
        ],
    );
    let text = read_until(&mut reopened, "notifications/tools/list_changed");
    assert_eq!(status(&text), 200, "{text}");
    let (fresh_stream, _) = event_ids(&text)[0];
    assert_ne!(
        fresh_stream, stream,
        "a new stream, not the lost one: {text}"
    );
    assert!(
        text.find("retry: ").unwrap() < text.find("list_changed").unwrap(),
        "the priming event comes first: {text}"
    );
}

/// An id not of the form this runtime mints cannot be in the store: it is unknown at once,
/// without a lookup (any header value would otherwise cost a store round trip).
#[test]
fn an_id_of_another_form_is_unknown_without_asking_the_store() {
    let store = Arc::new(Counting::default());
    let port = start(HttpConfig::default().session_store(store.clone()));
    let loads = || store.loads.load(std::sync::atomic::Ordering::SeqCst);
    for id in [
        "garbage",
        "i1-xyz",
        "i1-0123456789ABCDEF0123456789ABCDEF",
        "i1-0123456789abcdef0123456789abcdef0",
        "i_1-0123456789abcdef0123456789abcdef",
    ] {
        let r = add_on(port, id, "Bearer alice");
        assert_eq!(status(&r), 404, "{id}: {r}");
        let r = call(port, "DELETE", "", &[("Mcp-Session-Id", id)]);
        assert_eq!(status(&r), 404, "{id}: {r}");
    }
    assert_eq!(loads(), 0);
    // An id of the minted form is looked up (and unknown: never saved).
    let r = add_on(port, "i1-0123456789abcdef0123456789abcdef", "Bearer alice");
    assert_eq!(status(&r), 404, "{r}");
    assert_eq!(loads(), 1);
}

/// A session kept busy without requests (here an open GET stream) is kept in the store past
/// its idle timeout: the reaper pushes its expiry back, so a failover still finds it.
#[test]
fn a_busy_session_without_requests_stays_in_the_store() {
    let (i1, i2, store) = fleet(Duration::from_secs(2));
    let id = initialize(i1, "Bearer alice");
    let quiet = initialize(i1, "Bearer alice");
    let headers = [
        ("Mcp-Session-Id", id.as_str()),
        ("Authorization", "Bearer alice"),
    ];
    let mut get = send(i1, "GET", "", &headers);
    read_until(&mut get, "retry: ");
    // Twice the store's expiry (the idle timeout plus a refresh interval), no request at all.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(store.len(), 1, "the busy session only");
    assert_eq!(status(&add_on(i2, &id, "Bearer alice")), 200);
    assert_eq!(status(&add_on(i2, &quiet, "Bearer alice")), 404);
    drop(get);
}
