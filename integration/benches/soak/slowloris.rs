//! Slowloris: connections that send nothing, headers one byte a second, or a body one byte a
//! second, and how long the server takes to close each.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use crate::abuse::{recovery, rounds};
use crate::client::connect;
use crate::probe::Probe;
use crate::server::{Server, Stats};
use crate::{load_average, ms, pct, secs, size};

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
    let limit = secs("SOAK_SLOW_LIMIT_SECS", 45.0);
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
