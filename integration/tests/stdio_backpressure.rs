//! A stdio client that stops reading (issue #11 §1.7): notifications used to be written to
//! stdout by the tokio worker that sent them, under the output lock, so a client that stopped
//! reading blocked the workers and the whole runtime with them. Now workers only queue; what
//! cannot be written is dropped (notifications) or waits (results), and the reader stops
//! reading input until the client catches up.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use serde_json::{Value, json};

/// Logs 20,000 messages of 1 KiB as fast as it can, from a task.
#[tool]
async fn chatty(ctx: Context) -> &'static str {
    let line = "x".repeat(1024);
    for i in 0..20_000 {
        ctx.info(&line);
        if i % 64 == 0 {
            tokio::task::yield_now().await;
        }
    }
    "done"
}

/// A client end of the stdio transport, served over a socket pair on a runtime of its own.
struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    runtime: tokio::runtime::Handle,
}

impl Client {
    /// Serves the test's tools with `workers` runtime threads, and does the handshake.
    fn start(workers: usize) -> Client {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let input = theirs.try_clone().unwrap();
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()
                .unwrap();
            handle_tx.send(rt.handle().clone()).unwrap();
            let server = mcp_runtime::Server::builder().build().unwrap();
            let _ = rt.block_on(mcp_runtime::transport::serve_lines(server, input, theirs));
        });
        ours.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut client = Client {
            reader: BufReader::new(ours.try_clone().unwrap()),
            writer: ours,
            runtime: handle_rx.recv().unwrap(),
        };
        client.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        );
        assert!(client.read()["result"].is_object());
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, m: Value) {
        writeln!(self.writer, "{m}").unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

#[test]
fn a_client_that_stops_reading_does_not_block_the_runtime() {
    // One worker: if it blocks in a write, nothing else on the runtime runs.
    let mut client = Client::start(1);
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "chatty", "arguments": {}}}));
    // 20 MiB of logs against a socket buffer of a few hundred KiB that nobody reads.
    std::thread::sleep(Duration::from_millis(500));
    let ticked = Arc::new(AtomicBool::new(false));
    let flag = ticked.clone();
    client.runtime.spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        flag.store(true, Ordering::SeqCst);
    });
    let start = Instant::now();
    while !ticked.load(Ordering::SeqCst) {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the runtime is stuck writing to a client that does not read"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The client reads again: the result comes, after the notifications that were kept (the
    // rest were dropped), and the server answers the next request.
    let mut notes = 0;
    let result = loop {
        let m = client.read();
        if m.get("id") == Some(&json!(1)) {
            break m;
        }
        assert_eq!(m["method"], "notifications/message", "{m}");
        notes += 1;
    };
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
    assert!(notes < 20_000, "nothing was dropped: {notes}");
    client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(client.read()["id"], 2);
}

/// Logs its number from another thread, as fast as it can, while the tool returns.
#[tool]
async fn racing(ctx: Context, n: u32) -> String {
    let other = ctx.clone();
    std::thread::spawn(move || {
        for _ in 0..200 {
            other.info(n);
        }
    });
    tokio::task::yield_now().await;
    format!("raced {n}")
}

/// A notification sent from a user's thread while its request finishes goes before the
/// result or not at all: the check and the send are one step under the gate `finish` takes.
/// (A stress test: before, the check and the send were apart, so a log could follow the
/// result in the window between them.)
#[test]
fn notifications_from_another_thread_never_follow_their_result() {
    let mut client = Client::start(2);
    let mut finished: Vec<u32> = Vec::new();
    for n in 1..=100u32 {
        client.send(json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "racing", "arguments": {"n": n}}}));
        loop {
            let m = client.read();
            if m.get("id") == Some(&json!(n)) {
                assert_eq!(m["result"]["content"][0]["text"], format!("raced {n}"));
                finished.push(n);
                break;
            }
            let from = m["params"]["data"].as_u64().unwrap() as u32;
            assert!(
                !finished.contains(&from),
                "a log of call {from} came after its result"
            );
        }
    }
    // Stragglers of the last calls would show up here.
    client.send(json!({"jsonrpc": "2.0", "id": 1000, "method": "ping"}));
    loop {
        let m = client.read();
        if m.get("id") == Some(&json!(1000)) {
            break;
        }
        let from = m["params"]["data"].as_u64().unwrap() as u32;
        assert!(
            !finished.contains(&from),
            "a log of call {from} came after its result"
        );
    }
}
