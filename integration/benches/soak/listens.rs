//! 2026-07-28 `subscriptions/listen` streams from one client, past the server's limit.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::client::{Conn, listen_request};
use crate::probe::Probe;
use crate::server::{Server, Stats, mib};
use crate::{load_average, ms, pct, size};

/// What became of one listen request.
enum Outcome {
    /// Acknowledged: the stream is open (the connection is kept).
    Open(Conn),
    /// Anything else, described.
    Other(String),
}

async fn listen(port: u16, id: u64) -> Outcome {
    let Ok(mut conn) = Conn::open(port).await else {
        return Outcome::Other("connect failed".into());
    };
    let (body, headers) = listen_request(id);
    if conn.send("POST", "/mcp", &headers, &body).await.is_err() {
        return Outcome::Other("write failed".into());
    }
    let head = match tokio::time::timeout(Duration::from_secs(10), conn.read_head()).await {
        Ok(Ok(head)) => head,
        Ok(Err(e)) => return Outcome::Other(format!("no answer: {}", e.kind())),
        Err(_) => return Outcome::Other("no answer within 10 s".into()),
    };
    if head.header("content-type") != Some("text/event-stream") {
        let body = conn.read_body(&head).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&body);
        // The error's message, not its id (which differs per request).
        let message = text
            .split("\"message\":\"")
            .nth(1)
            .and_then(|m| m.split('"').next())
            .unwrap_or(&text)
            .to_owned();
        return Outcome::Other(format!("{} {message}", head.status));
    }
    match conn
        .read_until(b"acknowledged", Duration::from_secs(10))
        .await
    {
        Ok(_) => Outcome::Open(conn),
        Err(e) => Outcome::Other(format!("stream without acknowledgement: {}", e.kind())),
    }
}

/// `SOAK_LISTENS` + `SOAK_LISTENS_OVER` listen streams, each on its own connection (HTTP/1.1
/// carries one at a time), all from 127.0.0.1; then all closed, and the time until a new
/// listen is accepted.
pub async fn listens() {
    let count = size("SOAK_LISTENS", 1_024);
    let over = size("SOAK_LISTENS_OVER", 8);
    let server = Server::start();
    let base = server.stats();
    println!("{count} + {over} subscriptions/listen streams from 127.0.0.1, one connection each");
    println!("baseline: {}", base.show());
    for round in 1..=crate::abuse::rounds() {
        println!("-- round {round}");
        listens_round(&server, &base, count, over).await;
    }
}

async fn listens_round(server: &Server, base: &Stats, count: usize, over: usize) {
    let port = server.port;
    let probe = Probe::start(port, true).await;
    let start = Instant::now();
    let mut open = Vec::new();
    let mut others = BTreeMap::<String, usize>::new();
    let mut first_refused = None;
    // Sequential: which one is refused first says where the limit is.
    for i in 0..count + over {
        match listen(port, i as u64 + 1).await {
            Outcome::Open(conn) => open.push(conn),
            Outcome::Other(what) => {
                first_refused.get_or_insert(i + 1);
                *others.entry(what).or_default() += 1;
            }
        }
    }
    let took = start.elapsed();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = server.stats();
    println!(
        "in {:.1} s: {} streams acknowledged, first refused: {first_refused:?}, refusals {others:?}",
        took.as_secs_f64(),
        open.len()
    );
    println!(
        "with {} listens open: {}; {:.2} KiB per listen (with its connection)",
        open.len(),
        held.show(),
        held.rss_kib.saturating_sub(base.rss_kib) as f64 / open.len().max(1) as f64
    );
    let report = probe.stop().await;
    println!("{} (stateless tools/call add)", report.show());
    let acknowledged = open.len();
    drop(open);
    let closed = Instant::now();
    let mut again = None;
    while closed.elapsed() < Duration::from_secs(15) {
        if let Outcome::Open(_) = listen(port, 9_999_999).await {
            again = Some(closed.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The one just opened is closed again by now.
    let back = server.wait_fds(base.fds, Duration::from_secs(30));
    let end = server.stats();
    println!(
        "after closing them: a new listen acknowledged {}; descriptors back to the baseline's {} {}; {}",
        again.map_or("NOT within 15 s".to_owned(), |d| format!("after {}", ms(d))),
        base.fds,
        back.map_or("NOT within 30 s".to_owned(), |d| format!("in {}", ms(d))),
        end.show()
    );
    println!(
        "summary listens: {acknowledged} of {} acknowledged, first refused #{first_refused:?} {others:?}; {:.2} KiB per listen; control p99 {}, {} failed; peak {}; {}",
        count + over,
        held.rss_kib.saturating_sub(base.rss_kib) as f64 / acknowledged.max(1) as f64,
        ms(pct(&report.ok, 0.99)),
        report.failed,
        mib(end.hwm_kib),
        load_average()
    );
}
