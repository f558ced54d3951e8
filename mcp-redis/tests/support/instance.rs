//! Instances of an MCP server sharing Redis stores, each on a runtime of its own (so a test
//! can kill one as a crash would), and a raw HTTP/1.1 client for them.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use mcp_runtime::transport::{HttpConfig, serve_http_on};

use crate::support::RedisServer;

/// Adds two numbers.
#[mcp_runtime::tool]
pub async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Reports progress `n` times, `ms` apart, then answers "done".
#[mcp_runtime::tool]
pub async fn ticks(ctx: mcp_runtime::Context, n: u32, ms: u64) -> String {
    for i in 0..n {
        ctx.progress(f64::from(i), None, None);
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    "done".into()
}

/// One instance on a runtime of its own: dropping it (or [`kill`](Instance::kill)) ends the
/// runtime, as a crash ends a process (nothing is flushed, no stream is finished).
pub struct Instance {
    pub port: u16,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How an instance's stores are made (inside its runtime).
#[derive(Clone, Copy)]
pub struct Stores {
    pub sessions: bool,
    pub events: bool,
    pub idle: Duration,
    pub lease: Duration,
}

impl Instance {
    pub fn start(url: &str, route: &str, stores: Stores) -> Instance {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (url, route) = (url.to_owned(), route.to_owned());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let redis = mcp_redis::Redis::connect(&url, "test").await.unwrap();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let mut config = HttpConfig::default()
                    .route_token(route.parse().unwrap())
                    .session_idle_timeout(stores.idle);
                if stores.sessions {
                    config =
                        config.session_store(Arc::new(mcp_redis::RedisSessionStore::new(&redis)));
                }
                if stores.events {
                    let events = mcp_redis::RedisEventStore::new(&redis).with_lease(stores.lease);
                    config = config.event_store(Arc::new(events));
                }
                let server = mcp_runtime::Server::builder()
                    .name("fleet")
                    .version("1")
                    .build()
                    .unwrap();
                tx.send(listener.local_addr().unwrap().port()).unwrap();
                let serving = serve_http_on(server, listener, config);
                let stop = tokio::task::spawn_blocking(move || {
                    let _ = stopped.recv();
                });
                tokio::select! {
                    _ = serving => {}
                    _ = stop => {}
                }
            });
            rt.shutdown_background();
        });
        Instance {
            port: rx.recv().unwrap(),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn kill(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn send(port: u16, method: &str, body: &str, headers: &[(&str, &str)]) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
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
pub fn call(port: u16, method: &str, body: &str, headers: &[(&str, &str)]) -> String {
    let mut stream = send(port, method, body, headers);
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

pub fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains(needle) {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed before {needle:?}: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text
}

pub fn status(response: &str) -> u16 {
    response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {response:?}"))
}

pub fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
pub const ADD: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;

/// Initializes on `port` as `auth`; returns the session id.
pub fn initialize(port: u16, auth: &str) -> String {
    let r = call(port, "POST", INIT, &[("Authorization", auth)]);
    assert_eq!(status(&r), 200, "{r}");
    header(&r, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {r}"))
        .to_owned()
}

pub fn add_on(port: u16, session: &str, auth: &str) -> String {
    call(
        port,
        "POST",
        ADD,
        &[("Mcp-Session-Id", session), ("Authorization", auth)],
    )
}

/// The change in Redis command counts since `before`, by command (without the `INFO` that
/// reads them).
pub fn delta(redis: &RedisServer, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    redis
        .command_calls()
        .into_iter()
        .filter_map(|(k, v)| {
            let d = v - before.get(&k).copied().unwrap_or(0);
            (d > 0 && k != "info").then_some((k, d))
        })
        .collect()
}
