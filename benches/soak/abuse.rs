//! Misbehaving clients: slow SSE readers, slowloris headers and bodies, and clients that leave
//! in the middle of a response. Each scenario runs a control client beside the abuse, then lets
//! the abusers go and watches the server's descriptors, threads and memory come back.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use crate::client::{
    Conn, add_call, connect, listen_request, request_text, stateless_call, stateless_headers,
};
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
const RCVBUF: u32 = 4096;
const SSE_ACCEPT: (&str, &str) = ("Accept", "text/event-stream");

/// Prints how the server came back after the abusers left: how long until its descriptors
/// were down to the baseline's, and its memory and threads then.
fn recovery(server: &Server, base: &Stats, what: &str) {
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

/// How one abusive connection ended.
struct Ending {
    /// When the server closed it (EOF or reset), if it did before the limit.
    closed: Option<Duration>,
    /// The status of what the server answered, if anything.
    status: Option<u16>,
}

/// `SOAK_SLOWLORIS` connections of each kind: silent after connecting; sending request headers
/// one byte a second; sending a declared 64 KiB body one byte a second. Each lasts until the
/// server closes it or `SOAK_SLOW_LIMIT_SECS` pass.
pub async fn slowloris() {
    let per_kind = size("SOAK_SLOWLORIS", 300);
    let limit = secs("SOAK_SLOW_LIMIT_SECS", 30.0);
    let server = Server::start();
    let base = server.stats();
    println!("{per_kind} connections per kind, 1 byte/s, for up to {limit:?}");
    println!("baseline: {}", base.show());
    for round in 1..=rounds() {
        println!("-- round {round}");
        slowloris_round(&server, &base, per_kind, limit).await;
    }
}

async fn slowloris_round(server: &Server, base: &Stats, per_kind: usize, limit: Duration) {
    let port = server.port;
    let probe = Probe::start(port, false).await;
    // `SOAK_SLOW_KINDS=silent` (a comma list) runs some kinds only.
    let chosen = std::env::var("SOAK_SLOW_KINDS").unwrap_or_default();
    let kinds: Vec<&'static str> = ["silent", "headers", "body"]
        .into_iter()
        .filter(|k| chosen.is_empty() || chosen.split(',').any(|c| c.trim() == *k))
        .collect();
    let mut tasks = Vec::new();
    // Connecting 64 at a time: a burst of SYNs past the accept backlog would leave some
    // handshakes half done for seconds, not open connections.
    let gate = Arc::new(Semaphore::new(64));
    for &kind in &kinds {
        for _ in 0..per_kind {
            let gate = gate.clone();
            tasks.push((kind, tokio::spawn(slow_client(port, kind, limit, gate))));
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!("all connected: {}", server.stats().show());
    let mut endings: BTreeMap<&str, Vec<Ending>> = BTreeMap::new();
    for (kind, t) in tasks {
        if let Ok(e) = t.await {
            endings.entry(kind).or_default().push(e);
        }
    }
    let report = probe.stop().await;
    let mut summary = Vec::new();
    for &kind in &kinds {
        let list = endings.remove(kind).unwrap_or_default();
        let mut closed: Vec<Duration> = list.iter().filter_map(|e| e.closed).collect();
        closed.sort();
        let mut statuses = BTreeMap::<String, usize>::new();
        for e in &list {
            let s = e.status.map_or("none".into(), |s| s.to_string());
            *statuses.entry(s).or_default() += 1;
        }
        let line = format!(
            "{kind}: {} of {} closed by the server (after min {}, p50 {}, max {}), {} still open at {limit:?}; answers {statuses:?}",
            closed.len(),
            list.len(),
            ms(closed.first().copied().unwrap_or_default()),
            ms(pct(&closed, 0.5)),
            ms(closed.last().copied().unwrap_or_default()),
            list.len() - closed.len()
        );
        println!("{line}");
        summary.push(line);
    }
    println!("{}", report.show());
    recovery(server, base, "slowloris clients");
    println!(
        "summary slowloris: {}; control p99 {}, {} failed; {}",
        summary.join("; "),
        ms(pct(&report.ok, 0.99)),
        report.failed,
        load_average()
    );
}

async fn slow_client(
    port: u16,
    kind: &'static str,
    limit: Duration,
    gate: Arc<Semaphore>,
) -> Ending {
    let permit = gate.acquire_owned().await.expect("gate");
    let start = Instant::now();
    let mut ending = Ending {
        closed: None,
        status: None,
    };
    let Ok(mut stream) = connect(port, None).await else {
        ending.closed = Some(Duration::ZERO);
        return ending;
    };
    drop(permit);
    let (first, drip): (String, &[u8]) = match kind {
        "silent" => (String::new(), b""),
        "headers" => (
            format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"),
            b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ),
        _ => (
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 65536\r\n\r\n"
            ),
            b"                                                                                ",
        ),
    };
    if stream.write_all(first.as_bytes()).await.is_err() {
        ending.closed = Some(start.elapsed());
        return ending;
    }
    let mut next = 0;
    let mut buf = [0u8; 1024];
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    while start.elapsed() < limit {
        tokio::select! {
            r = stream.read(&mut buf) => match r {
                Ok(0) | Err(_) => {
                    ending.closed = Some(start.elapsed());
                    return ending;
                }
                Ok(n) => {
                    if ending.status.is_none() {
                        ending.status = std::str::from_utf8(&buf[..n])
                            .ok()
                            .and_then(|t| t.split(' ').nth(1))
                            .and_then(|s| s.parse().ok());
                    }
                }
            },
            _ = tick.tick() => {
                if drip.is_empty() {
                    continue;
                }
                let byte = drip[next % drip.len()];
                next += 1;
                if stream.write_all(&[byte]).await.is_err() {
                    ending.closed = Some(start.elapsed());
                    return ending;
                }
            }
        }
    }
    ending
}

/// `SOAK_DISCONNECTS` clients of each kind, 50 at a time, that leave mid-response (the socket
/// closed with a reset). The session kinds share one session.
pub async fn disconnect() {
    let per_kind = size("SOAK_DISCONNECTS", 1_100);
    let server = Server::start();
    let port = server.port;
    let mut setup = Conn::open(port).await.expect("connect");
    setup.initialize().await.expect("initialize");
    let session = setup.session.clone().expect("session");
    drop(setup);
    let base = server.stats();
    println!("{per_kind} clients per kind, 50 at a time, each resetting its connection early");
    println!("baseline: {}", base.show());
    for round in 1..=rounds() {
        println!("-- round {round}");
        disconnect_round(&server, &base, per_kind, &session).await;
    }
}

async fn disconnect_round(server: &Server, base: &Stats, per_kind: usize, session: &str) {
    let port = server.port;
    let probe = Probe::start(port, false).await;
    let kinds = [
        "close-after-request",
        "sleep-session",
        "sleep-stateless",
        "half-read-tools-list",
        "get-stream",
        "listen",
    ];
    let mut lines = Vec::new();
    for kind in kinds {
        let gate = Arc::new(Semaphore::new(50));
        let cpu0 = CpuSample::take(server.pid());
        let start = Instant::now();
        let tasks: Vec<_> = (0..per_kind)
            .map(|i| {
                let (gate, session) = (gate.clone(), session.to_owned());
                tokio::spawn(async move {
                    let _permit = gate.acquire_owned().await.expect("gate");
                    leave_early(port, kind, &session, i as u64 + 1).await
                })
            })
            .collect();
        let mut outcomes = BTreeMap::<String, usize>::new();
        for t in tasks {
            let o = t.await.unwrap_or_else(|_| "panicked".into());
            *outcomes.entry(o).or_default() += 1;
        }
        let took = start.elapsed();
        let cpu = CpuSample::take(server.pid())
            .zip(cpu0)
            .map(|(e, s)| e.since(&s));
        let line = format!(
            "{kind}: {per_kind} in {:.2} s, server CPU {} µs each; outcomes {outcomes:?}; {}",
            took.as_secs_f64(),
            or_unknown(cpu.and_then(|c| c.us_per_call(per_kind)), 1),
            server.stats().show()
        );
        println!("{line}");
        lines.push(line);
    }
    let report = probe.stop().await;
    println!("{}", report.show());
    // The session-era sleeps keep running after their clients left (by design), up to 1 s.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    recovery(server, base, "disconnecting clients");
    // Are the slots free? A listen and a session call after it all.
    let listen_ok = leave_early(port, "listen", session, 999_999).await;
    let mut conn = Conn::open(port).await.expect("connect");
    conn.session = Some(session.to_owned());
    let call = conn.post(&add_call(1_000_000)).await.map(|(h, _)| h.status);
    println!("afterwards: a new listen: {listen_ok}; a call in the shared session: {call:?}");
    println!(
        "summary disconnect: {}; control p99 {}, {} failed; {}",
        kinds.join(", "),
        ms(pct(&report.ok, 0.99)),
        report.failed,
        load_average()
    );
}

/// A request to send: method, headers, body, and what to read before leaving (`None`: nothing;
/// empty: the response head only).
type Plan<'a> = (&'a str, Vec<(&'a str, String)>, String, Option<&'a [u8]>);

/// One client that leaves early; returns what it saw before leaving.
async fn leave_early(port: u16, kind: &str, session: &str, id: u64) -> String {
    let Ok(stream) = connect(port, None).await else {
        return "connect failed".into();
    };
    let _ = stream.set_zero_linger();
    let mut conn = Conn {
        stream: tokio::io::BufReader::new(stream),
        port,
        session: None,
    };
    let in_session = vec![("Mcp-Session-Id", session.to_owned())];
    let sleep = r#"{"ms":1000}"#;
    let (method, headers, body, wait_for): Plan<'_> = match kind {
        "close-after-request" => ("POST", in_session, add_call(id), None),
        "sleep-session" => (
            "POST",
            in_session,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"sleep","arguments":{sleep}}}}}"#
            ),
            None,
        ),
        "sleep-stateless" => (
            "POST",
            stateless_headers("sleep"),
            stateless_call(id, "sleep", sleep),
            None,
        ),
        "half-read-tools-list" => (
            "POST",
            in_session,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
            Some(b""),
        ),
        "get-stream" => {
            let mut h = in_session;
            h.push((SSE_ACCEPT.0, SSE_ACCEPT.1.into()));
            ("GET", h, String::new(), Some(b"retry:"))
        }
        _ => {
            let (body, headers) = listen_request(id);
            ("POST", headers, body, Some(b"acknowledged"))
        }
    };
    let text = request_text(method, "/mcp", port, &headers, &body);
    if conn
        .stream
        .get_mut()
        .write_all(text.as_bytes())
        .await
        .is_err()
    {
        return "write failed".into();
    }
    match wait_for {
        // Leave at once, or (a sleeping tool) 50 ms into the call.
        None => {
            if kind.starts_with("sleep") {
                match conn.read_some(4096, Duration::from_millis(50)).await {
                    Err(_) => "left mid-call".into(),
                    Ok(_) => "answered before 50 ms".into(),
                }
            } else {
                "left".into()
            }
        }
        Some(needle) => {
            let head = match tokio::time::timeout(Duration::from_secs(5), conn.read_head()).await {
                Ok(Ok(head)) => head,
                Ok(Err(e)) => return format!("no answer: {}", e.kind()),
                Err(_) => return "no answer within 5 s".into(),
            };
            if head.header("content-type") != Some("text/event-stream") {
                if needle.is_empty() {
                    // The head is read, the body not: leave in the middle of the response.
                    return format!("left mid-response ({})", head.status);
                }
                let body = conn.read_body(&head).await.unwrap_or_default();
                return if body.windows(4).any(|w| w == b"busy") {
                    "refused: busy".into()
                } else {
                    format!("answered {} without a stream", head.status)
                };
            }
            match conn.read_until(needle, Duration::from_secs(5)).await {
                Ok(_) => "left mid-stream".into(),
                Err(e) => format!(
                    "stream without {:?}: {}",
                    String::from_utf8_lossy(needle),
                    e.kind()
                ),
            }
        }
    }
}
