//! Well-behaved load: many idle sessions, and a long run of calls with memory sampled.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::client::{ADD_RESULT, Conn, PING, add_call, stateless_call, stateless_headers};
use crate::common::{CpuSample, CpuUse, or_unknown};
use crate::server::{Server, Stats, mib};
use crate::{load_average, size};

/// Connections opening sessions at once.
pub const OPENERS: usize = 8;

/// `SOAK_SESSIONS` sessions (`initialize` + `notifications/initialized`, then idle), then
/// `SOAK_OVER` more past the server's cap; each original session is pinged to see whether it
/// survived; then all are DELETEd. `SOAK_ROUNDS` times, so the second round shows whether the
/// memory the first left behind is reused.
pub async fn idle_sessions() {
    let count = size("SOAK_SESSIONS", 10_000);
    let over = size("SOAK_OVER", 100);
    let server = Server::start();
    let base = baseline(&server).await;
    println!("baseline: {}", base.show());
    for round in 1..=crate::abuse::rounds() {
        println!("-- round {round}");
        idle_round(&server, &base, count, over).await;
    }
}

/// The server's figures after one session was opened and closed, so that one-time set-up is
/// not counted per session.
pub async fn baseline(server: &Server) -> Stats {
    let mut warm = Conn::open(server.port).await.expect("connect");
    warm.initialize().await.expect("initialize");
    warm.call("DELETE", "/mcp", &[], "").await.expect("delete");
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.stats()
}

async fn idle_round(server: &Server, base: &Stats, count: usize, over: usize) {
    let port = server.port;
    let start = Instant::now();
    let cpu0 = CpuSample::take(server.pid());
    let ids = open_sessions(port, count).await;
    let took = start.elapsed();
    let cpu = CpuSample::take(server.pid())
        .zip(cpu0)
        .map(|(e, s)| e.since(&s));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = server.stats();
    let opened = ids.iter().filter(|r| r.is_ok()).count();
    let refused: Vec<u16> = ids
        .iter()
        .filter_map(|r| r.as_ref().err().copied())
        .collect();
    println!(
        "opened {opened} of {count} sessions in {:.2} s ({:.0}/s, server CPU {} µs per session); refused: {}",
        took.as_secs_f64(),
        opened as f64 / took.as_secs_f64(),
        or_unknown(cpu.and_then(|c| c.us_per_call(opened)), 1),
        refused.len()
    );
    println!("with {opened} idle sessions: {}", after.show());
    println!(
        "memory per idle session: {:.2} KiB (RSS {} -> {})",
        after.rss_kib.saturating_sub(base.rss_kib) as f64 / opened.max(1) as f64,
        mib(base.rss_kib),
        mib(after.rss_kib)
    );
    // Past the cap.
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut retry_after = None;
    let mut extra = Vec::new();
    let mut conn = Conn::open(port).await.expect("connect");
    let past = Instant::now();
    let cpu0 = CpuSample::take(server.pid());
    for _ in 0..over {
        let head = conn.initialize().await.expect("initialize");
        *statuses.entry(head.status).or_default() += 1;
        if head.status != 200 {
            retry_after = retry_after.or(head.header("retry-after").map(str::to_owned));
        }
        if let Some(s) = conn.session.take() {
            extra.push(s);
        }
    }
    let cpu = CpuSample::take(server.pid())
        .zip(cpu0)
        .map(|(e, s)| e.since(&s));
    println!(
        "{over} more initialize at {opened} sessions in {:.2} s (server CPU {} µs each): statuses {statuses:?}, Retry-After {retry_after:?}; {}",
        past.elapsed().as_secs_f64(),
        or_unknown(cpu.and_then(|c| c.us_per_call(over)), 1),
        server.stats().show()
    );
    let ids: Vec<String> = ids.into_iter().flatten().collect();
    let (alive, gone) = ping_all(port, &ids).await;
    println!("original sessions still answering ping: {alive}; gone (404): {gone}");
    let all: Vec<String> = ids.into_iter().chain(extra).collect();
    let deleted = delete_all(port, &all).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let end = server.stats();
    println!("after DELETE of {deleted} sessions: {}", end.show());
    println!(
        "summary idle-sessions: {opened} sessions, {:.2} KiB/session, RSS base {} / with sessions {} / peak {} / after DELETE {}; {}",
        after.rss_kib.saturating_sub(base.rss_kib) as f64 / opened.max(1) as f64,
        mib(base.rss_kib),
        mib(after.rss_kib),
        mib(end.hwm_kib),
        mib(end.rss_kib),
        load_average()
    );
}

/// Opens `count` sessions over [`OPENERS`] connections; each entry is a session id or the
/// status that refused it.
pub async fn open_sessions(port: u16, count: usize) -> Vec<Result<String, u16>> {
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..OPENERS)
        .map(|_| {
            let next = next.clone();
            tokio::spawn(async move {
                let mut conn = Conn::open(port).await.expect("connect");
                let mut out = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < count {
                    let head = conn.initialize().await.expect("initialize");
                    out.push(conn.session.take().ok_or(head.status));
                }
                out
            })
        })
        .collect();
    let mut all = Vec::with_capacity(count);
    for t in tasks {
        all.extend(t.await.expect("opener"));
    }
    all
}

/// Pings each session; returns (answered, 404).
pub async fn ping_all(port: u16, ids: &[String]) -> (usize, usize) {
    let (mut alive, mut gone) = (0, 0);
    let chunks: Vec<Vec<String>> = ids
        .chunks(ids.len().div_ceil(OPENERS).max(1))
        .map(<[String]>::to_vec)
        .collect();
    let tasks: Vec<_> = chunks
        .into_iter()
        .map(|chunk| {
            tokio::spawn(async move {
                let mut conn = Conn::open(port).await.expect("connect");
                let (mut alive, mut gone) = (0, 0);
                for id in chunk {
                    conn.session = Some(id);
                    let (head, _) = conn.post(PING).await.expect("ping");
                    match head.status {
                        200 => alive += 1,
                        404 => gone += 1,
                        _ => {}
                    }
                }
                (alive, gone)
            })
        })
        .collect();
    for t in tasks {
        let (a, g) = t.await.expect("pinger");
        alive += a;
        gone += g;
    }
    (alive, gone)
}

async fn delete_all(port: u16, ids: &[String]) -> usize {
    let mut conn = Conn::open(port).await.expect("connect");
    let mut deleted = 0;
    for id in ids {
        conn.session = Some(id.clone());
        if let Ok((head, _)) = conn.call("DELETE", "/mcp", &[], "").await
            && head.status == 200
        {
            deleted += 1;
        }
    }
    deleted
}

/// One memory sample of the long run.
struct Sample {
    calls: u64,
    at: Duration,
    stats: Stats,
    cpu: Option<CpuSample>,
}

/// `SOAK_CALLS` calls of `add` over `SOAK_CALL_SESSIONS` connections (one request in flight on
/// each), in sessions or statelessly; memory sampled every `SOAK_SAMPLE_EVERY` calls.
pub async fn calls(stateless: bool) {
    let total = size("SOAK_CALLS", 1_000_000) as u64;
    let sessions = size("SOAK_CALL_SESSIONS", 100);
    let every = (size("SOAK_SAMPLE_EVERY", 100_000) as u64).max(1);
    let era = if stateless {
        "2026-07-28 stateless"
    } else {
        "2025-11-25 sessions"
    };
    let server = Server::start();
    let port = server.port;
    println!("{total} calls over {sessions} connections ({era}), sampled every {every}");
    let mut conns = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        let mut conn = Conn::open(port).await.expect("connect");
        if !stateless {
            conn.initialize().await.expect("initialize");
        }
        conns.push(conn);
    }
    let done = Arc::new(AtomicU64::new(0));
    let claimed = Arc::new(AtomicU64::new(0));
    let bad = Arc::new(AtomicU64::new(0));
    let first = Sample {
        calls: 0,
        at: Duration::ZERO,
        stats: server.stats(),
        cpu: CpuSample::take(server.pid()),
    };
    let start = Instant::now();
    let workers: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let (done, claimed, bad) = (done.clone(), claimed.clone(), bad.clone());
            tokio::spawn(async move {
                let headers = if stateless {
                    stateless_headers("add")
                } else {
                    Vec::new()
                };
                loop {
                    let id = claimed.fetch_add(1, Ordering::Relaxed);
                    if id >= total {
                        return;
                    }
                    let body = if stateless {
                        stateless_call(id, "add", r#"{"a":2,"b":3}"#)
                    } else {
                        add_call(id)
                    };
                    match conn.call("POST", "/mcp", &headers, &body).await {
                        Ok((head, body))
                            if head.status == 200
                                && body.windows(ADD_RESULT.len()).any(|w| w == ADD_RESULT) => {}
                        Ok(_) => {
                            bad.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            eprintln!("call failed: {e}");
                            bad.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let mut samples = vec![first];
    let mut next = every;
    while next <= total {
        if workers.iter().all(|w| w.is_finished()) {
            break;
        }
        if done.load(Ordering::Relaxed) >= next {
            samples.push(Sample {
                calls: done.load(Ordering::Relaxed),
                at: start.elapsed(),
                stats: server.stats(),
                cpu: CpuSample::take(server.pid()),
            });
            next += every;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for w in workers {
        let _ = w.await;
    }
    let elapsed = start.elapsed();
    let completed = done.load(Ordering::Relaxed);
    if samples.last().is_none_or(|s| s.calls < completed) {
        samples.push(Sample {
            calls: completed,
            at: elapsed,
            stats: server.stats(),
            cpu: CpuSample::take(server.pid()),
        });
    }
    println!(
        "{:>9} {:>8} {:>9} {:>12} {:>10} {:>10} {:>7} {:>4}",
        "calls", "secs", "calls/s", "cpu_us/call", "RSS", "peak", "threads", "fds"
    );
    for pair in samples.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let n = b.calls - a.calls;
        let dt = (b.at - a.at).as_secs_f64();
        let cpu: Option<CpuUse> = b.cpu.as_ref().zip(a.cpu.as_ref()).map(|(e, s)| e.since(s));
        println!(
            "{:>9} {:>8.2} {:>9.0} {:>12} {:>10} {:>10} {:>7} {:>4}",
            b.calls,
            b.at.as_secs_f64(),
            n as f64 / dt,
            or_unknown(cpu.and_then(|c| c.us_per_call(n as usize)), 2),
            mib(b.stats.rss_kib),
            mib(b.stats.hwm_kib),
            b.stats.threads,
            b.stats.fds
        );
    }
    let whole = samples
        .last()
        .and_then(|e| e.cpu.as_ref())
        .zip(samples[0].cpu.as_ref())
        .map(|(e, s)| e.since(s));
    if let Some(c) = whole {
        c.warn_if_incomplete("quickstart");
    }
    // Warm-up: the first sampled interval. Drift: from the end of warm-up to the last sample.
    let rss: Vec<u64> = samples[1..].iter().map(|s| s.stats.rss_kib).collect();
    let (warm, last) = (
        rss.first().copied().unwrap_or(0),
        rss.last().copied().unwrap_or(0),
    );
    let (lo, hi) = (
        rss.iter().min().copied().unwrap_or(0),
        rss.iter().max().copied().unwrap_or(0),
    );
    println!(
        "summary calls ({era}): {completed} calls in {:.1} s = {:.0} calls/s, server CPU {} µs/call, bad answers {}; RSS before {} / after warm-up ({} calls) {} / end {} / peak {}; drift after warm-up {:+} KiB ({:+.1} %), range {}..{} KiB; {}",
        elapsed.as_secs_f64(),
        completed as f64 / elapsed.as_secs_f64(),
        or_unknown(whole.and_then(|c| c.us_per_call(completed as usize)), 2),
        bad.load(Ordering::Relaxed),
        mib(samples[0].stats.rss_kib),
        samples.get(1).map_or(0, |s| s.calls),
        mib(warm),
        mib(last),
        mib(samples.last().map_or(0, |s| s.stats.hwm_kib)),
        last as i64 - warm as i64,
        (last as f64 - warm as f64) / (warm.max(1) as f64) * 100.0,
        lo,
        hi,
        load_average()
    );
}
