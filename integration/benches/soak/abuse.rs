//! Misbehaving clients, and what they share: slow SSE readers here, slowloris in `slowloris`,
//! clients that leave mid-response in `disconnect`. Each scenario runs a control client beside
//! the abuse, then lets the abusers go and watches the server's descriptors, threads and memory
//! come back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::Semaphore;

use crate::client::{Conn, connect};
use crate::common::{CpuSample, or_unknown};
use crate::probe::Probe;
use crate::server::{Server, Stats, mib};
use crate::{load_average, ms, pct, secs, size};

/// How many times each abuse runs against the same server (`SOAK_ROUNDS`, default 2): memory
/// kept after the first round and not grown by the second is the allocator's, not a leak.
pub fn rounds() -> usize {
    size("SOAK_ROUNDS", 2).max(1)
}

/// A small receive buffer: the server's writes back up after a few KiB.
pub const RCVBUF: u32 = 4096;
pub const SSE_ACCEPT: (&str, &str) = ("Accept", "text/event-stream");

/// Prints how the server came back after the abusers left: how long until its descriptors
/// were down to the baseline's, and its memory and threads then.
pub fn recovery(server: &Server, base: &Stats, what: &str) {
    let back = server.wait_fds(base.fds, Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(500));
    let now = server.stats();
    if !server.alive() {
        println!("THE SERVER IS GONE (exited or crashed)");
    }
    println!(
        "after the {what} left: descriptors back to the baseline's {} {}; {} (baseline: {}); RSS {:+} KiB over the baseline",
        base.fds,
        back.map_or("NOT within 30 s".to_owned(), |d| format!("in {}", ms(d))),
        now.show(),
        base.show(),
        now.rss_kib as i64 - base.rss_kib as i64,
    );
}

/// `SOAK_SSE_CLIENTS` sessions each holding a GET stream read one byte a second.
pub async fn slow_sse() {
    slow_get_streams().await;
}

/// HTTP+SSE (2024-11-05) clients that never read their stream: `SOAK_LEGACY_CLIENTS` posting
/// `tools/list`, then `SOAK_LEGACY_SLEEP_CLIENTS` posting `tools/call sleep`.
pub async fn slow_legacy() {
    // `tools/list` is answered at once (2.8 KiB): the POST waits while the stream is full.
    let clients = size("SOAK_LEGACY_CLIENTS", 100);
    legacy_never_read("tools/list", clients, size("SOAK_LEGACY_POSTS", 1_000)).await;
    println!();
    // `sleep` runs as a task (150 B answers): the POST is answered 202 at once and the task
    // waits for room on the stream.
    let clients = size("SOAK_LEGACY_SLEEP_CLIENTS", 10);
    legacy_never_read("sleep", clients, size("SOAK_LEGACY_SLEEP_POSTS", 40_000)).await;
}

async fn slow_get_streams() {
    let clients = size("SOAK_SSE_CLIENTS", 1_000);
    let hold = secs("SOAK_HOLD_SECS", 20.0);
    let server = Server::start();
    let base = server.stats();
    println!(
        "{clients} sessions, each with a GET /mcp stream read 1 byte/s (SO_RCVBUF {RCVBUF}) for {hold:?}"
    );
    println!("baseline: {}", base.show());
    for round in 1..=rounds() {
        println!("-- round {round}");
        slow_get_round(&server, &base, clients, hold).await;
    }
}

async fn slow_get_round(server: &Server, base: &Stats, clients: usize, hold: Duration) {
    let port = server.port;
    let probe = Probe::start(port, false).await;
    let stop = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Semaphore::new(32));
    let start = Instant::now();
    let mut tasks = Vec::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<Option<String>>(clients.max(1));
    for _ in 0..clients {
        let (stop, dropped, gate, ready) = (
            stop.clone(),
            dropped.clone(),
            gate.clone(),
            ready_tx.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let permit = gate.acquire_owned().await.expect("gate");
            let mut setup = Conn::open(port).await.expect("connect");
            setup.initialize().await.expect("initialize");
            let session = setup.session.clone();
            drop(setup);
            let mut conn = Conn {
                stream: tokio::io::BufReader::new(
                    connect(port, Some(RCVBUF)).await.expect("connect"),
                ),
                port,
                session: session.clone(),
            };
            conn.send("GET", "/mcp", &[(SSE_ACCEPT.0, SSE_ACCEPT.1.into())], "")
                .await
                .expect("GET");
            let head = conn.read_head().await.expect("head");
            let primed = head.status == 200
                && conn
                    .read_until(b"retry:", Duration::from_secs(10))
                    .await
                    .is_ok();
            drop(permit);
            let _ = ready
                .send(primed.then_some(session.unwrap_or_default()))
                .await;
            drop(ready);
            if !primed {
                return;
            }
            let mut byte = [0u8; 1];
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_secs(1)).await;
                match tokio::time::timeout(Duration::from_millis(1), conn.stream.read(&mut byte))
                    .await
                {
                    Ok(Ok(0)) | Ok(Err(_)) => {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    _ => {}
                }
            }
        }));
    }
    drop(ready_tx);
    let mut sessions = Vec::new();
    let mut failed = 0;
    // Each reader keeps its sender while it reads: count the answers instead of waiting for
    // the channel to close.
    for _ in 0..clients {
        let Some(r) = ready_rx.recv().await else {
            break;
        };
        match r {
            Some(s) => sessions.push(s),
            None => failed += 1,
        }
    }
    let opened = start.elapsed();
    let open = server.stats();
    println!(
        "{} streams open in {:.1} s ({failed} failed): {}; {:.2} KiB per session with a stream",
        sessions.len(),
        opened.as_secs_f64(),
        open.show(),
        open.rss_kib.saturating_sub(base.rss_kib) as f64 / sessions.len().max(1) as f64
    );
    tokio::time::sleep(hold).await;
    let held = server.stats();
    let report = probe.stop().await;
    println!(
        "after {hold:?}: {} streams dropped by the server; {}",
        dropped.load(Ordering::Relaxed),
        held.show()
    );
    println!("{}", report.show());
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    let mut conn = Conn::open(port).await.expect("connect");
    for s in &sessions {
        conn.session = Some(s.clone());
        let _ = conn.call("DELETE", "/mcp", &[], "").await;
    }
    drop(conn);
    recovery(
        server,
        base,
        "slow readers (streams closed, sessions DELETEd)",
    );
    println!(
        "summary slow-sse: {} GET streams, {:.2} KiB each (with its session), {} dropped by the server in {hold:?}; control p50 {} p99 {} max {}, {} failed; peak {}; {}",
        sessions.len(),
        open.rss_kib.saturating_sub(base.rss_kib) as f64 / sessions.len().max(1) as f64,
        dropped.load(Ordering::Relaxed),
        ms(pct(&report.ok, 0.5)),
        ms(pct(&report.ok, 0.99)),
        ms(report.ok.last().copied().unwrap_or_default()),
        report.failed,
        mib(server.stats().hwm_kib),
        load_average()
    );
}

/// HTTP+SSE clients that open `GET /sse`, read the `endpoint` event, then never read again,
/// while posting `what` (`tools/list` or `tools/call sleep {ms:1}`) to `/messages`: the answers
/// can only pile up in the server (or hold up the POSTs).
async fn legacy_never_read(what: &'static str, clients: usize, posts: usize) {
    let server = Server::start();
    let base = server.stats();
    println!(
        "{clients} HTTP+SSE clients that never read their stream, {posts} POST /messages {what} each (2 s limit per POST)"
    );
    println!("baseline: {}", base.show());
    for round in 1..=rounds() {
        println!("-- round {round}");
        legacy_round(&server, &base, what, clients, posts).await;
    }
}

async fn legacy_round(
    server: &Server,
    base: &Stats,
    what: &'static str,
    clients: usize,
    posts: usize,
) {
    let port = server.port;
    let probe = Probe::start(port, false).await;
    let cpu0 = CpuSample::take(server.pid());
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            tokio::spawn(async move {
                let mut sse = Conn {
                    stream: tokio::io::BufReader::new(
                        connect(port, Some(RCVBUF)).await.expect("connect"),
                    ),
                    port,
                    session: None,
                };
                sse.send("GET", "/sse", &[(SSE_ACCEPT.0, SSE_ACCEPT.1.into())], "")
                    .await
                    .expect("GET /sse");
                let _ = sse.read_head().await.expect("head");
                let seen = sse
                    .read_until(b"\n\n", Duration::from_secs(10))
                    .await
                    .expect("endpoint event");
                let text = String::from_utf8_lossy(&seen);
                let path = text
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .expect("endpoint")
                    .trim()
                    .to_owned();
                let mut post = Conn::open(port).await.expect("connect");
                // The handshake's answer goes on the stream too (unread, like the rest).
                for body in [
                    crate::client::INITIALIZE,
                    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                ] {
                    post.call("POST", &path, &[], body).await.expect("handshake");
                }
                let (mut accepted, mut stuck) = (0usize, false);
                for id in 0..posts {
                    let body = if what == "sleep" {
                        format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"sleep","arguments":{{"ms":1}}}}}}"#
                        )
                    } else {
                        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)
                    };
                    match tokio::time::timeout(
                        Duration::from_secs(2),
                        post.call("POST", &path, &[], &body),
                    )
                    .await
                    {
                        Ok(Ok((head, _))) if head.status == 202 => accepted += 1,
                        Ok(_) => break,
                        Err(_) => {
                            stuck = true;
                            break;
                        }
                    }
                }
                (sse, accepted, stuck)
            })
        })
        .collect();
    let mut held = Vec::new();
    let (mut accepted, mut stuck) = (0, 0);
    for t in tasks {
        let (sse, a, s) = t.await.expect("legacy client");
        held.push(sse);
        accepted += a;
        stuck += usize::from(s);
    }
    let took = start.elapsed();
    let cpu = CpuSample::take(server.pid())
        .zip(cpu0)
        .map(|(e, s)| e.since(&s));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let piled = server.stats();
    let report = probe.stop().await;
    println!(
        "in {:.1} s: {accepted} POSTs answered 202, {stuck} clients whose POST got no answer within 2 s; server CPU {} µs per accepted POST",
        took.as_secs_f64(),
        or_unknown(cpu.and_then(|c| c.us_per_call(accepted)), 1)
    );
    println!(
        "with the answers piled up: {}; RSS {:+} KiB = {:.1} KiB per never-reading client; kernel TCP buffers (whole machine) {}",
        piled.show(),
        piled.rss_kib as i64 - base.rss_kib as i64,
        piled.rss_kib.saturating_sub(base.rss_kib) as f64 / clients.max(1) as f64,
        tcp_mem()
    );
    println!("{}", report.show());
    drop(held);
    recovery(server, base, "HTTP+SSE clients (streams closed)");
    println!(
        "summary slow-legacy {what}: {clients} never-reading HTTP+SSE clients, {accepted} POSTs accepted, {stuck} POSTs hung; RSS {:+} KiB while held; control p99 {}, {} failed; {}",
        piled.rss_kib as i64 - base.rss_kib as i64,
        ms(pct(&report.ok, 0.99)),
        report.failed,
        load_average()
    );
}

/// The kernel's memory for TCP buffers, machine-wide (`/proc/net/sockstat`, in pages): where
/// answers to a client that does not read wait once they left the server's process.
fn tcp_mem() -> String {
    let stat = std::fs::read_to_string("/proc/net/sockstat").unwrap_or_default();
    stat.lines()
        .find_map(|l| l.strip_prefix("TCP: "))
        .and_then(|l| l.split_whitespace().skip_while(|w| *w != "mem").nth(1))
        .and_then(|pages| pages.parse::<u64>().ok())
        .map_or("?".into(), |pages| mib(pages * 4))
}
