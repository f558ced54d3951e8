//! Idle sessions held for an hour on keep-alives: whether the server's memory, threads or
//! descriptors grow while nothing happens but each session's `ping` now and then.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};

use crate::client::{Conn, PING};
use crate::common::{CpuSample, or_unknown};
use crate::load::{OPENERS, baseline, open_sessions, ping_all};
use crate::server::{Server, Stats, mib};
use crate::{load_average, secs, size};

/// A keep-alive not answered within this counts as failed.
const LIMIT: Duration = Duration::from_secs(5);

/// What the pingers did, counted as they go.
#[derive(Default)]
struct Tally {
    sent: AtomicU64,
    failed: AtomicU64,
    /// Connections opened again after the server closed one (a ping is then sent once more).
    reconnects: AtomicU64,
}

/// One sample of the hold: seconds since it began, and the server's figures.
struct Sample {
    at: f64,
    stats: Stats,
}

/// `SOAK_SESSIONS` session-era sessions opened as `idle-sessions` opens them, then held for
/// `SOAK_IDLE_HOLD_SECS`, each sending a `ping` every `SOAK_IDLE_PING_SECS` (the sessions'
/// pings spread evenly over that interval); the server sampled every `SOAK_IDLE_SAMPLE_SECS`;
/// at the end every session is pinged once more.
pub async fn idle_hour() {
    let count = size("SOAK_SESSIONS", 10_000);
    let hold = secs("SOAK_IDLE_HOLD_SECS", 3_600.0);
    let every = secs("SOAK_IDLE_PING_SECS", 300.0).max(Duration::from_millis(1));
    let sample = secs("SOAK_IDLE_SAMPLE_SECS", 60.0).max(Duration::from_millis(100));
    let server = Server::start();
    let port = server.port;
    let base = baseline(&server).await;
    println!("baseline: {}", base.show());
    let ids: Vec<String> = open_sessions(port, count)
        .await
        .into_iter()
        .flatten()
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let opened = server.stats();
    println!(
        "opened {} of {count} sessions: {}; {:.2} KiB per session",
        ids.len(),
        opened.show(),
        opened.rss_kib.saturating_sub(base.rss_kib) as f64 / ids.len().max(1) as f64
    );
    println!(
        "holding them {:.0} s, each pinging every {:.0} s ({:.1} pings/s in all), sampled every {:.0} s",
        hold.as_secs_f64(),
        every.as_secs_f64(),
        ids.len() as f64 / every.as_secs_f64(),
        sample.as_secs_f64()
    );
    let start = Instant::now();
    let cpu0 = CpuSample::take(server.pid());
    let tally = Arc::new(Tally::default());
    let pingers = keep_alive_all(port, &ids, start, hold, every, &tally);
    println!(
        "{:>7} {:>10} {:>10} {:>10} {:>10} {:>7} {:>5} {:>8} {:>6} {:>5}",
        "secs", "RSS", "RSS_kib", "vs_open", "peak", "threads", "fds", "pings", "failed", "load1"
    );
    let mut samples = vec![Sample {
        at: 0.0,
        stats: opened,
    }];
    print_sample(&samples[0], &opened, &tally);
    for k in 1u32.. {
        let at = (sample * k).min(hold);
        sleep_until(start + at).await;
        let s = Sample {
            at: start.elapsed().as_secs_f64(),
            stats: server.stats(),
        };
        print_sample(&s, &opened, &tally);
        samples.push(s);
        if at >= hold {
            break;
        }
    }
    for p in pingers {
        p.await.expect("pinger");
    }
    let cpu = CpuSample::take(server.pid())
        .zip(cpu0)
        .map(|(e, s)| e.since(&s));
    let (sent, failed, reconnects) = (
        tally.sent.load(Ordering::Relaxed),
        tally.failed.load(Ordering::Relaxed),
        tally.reconnects.load(Ordering::Relaxed),
    );
    let (alive, gone) = ping_all(port, &ids).await;
    let end = samples.last().map_or(opened, |s| s.stats);
    let rss = samples.iter().map(|s| s.stats.rss_kib);
    let (lo, hi) = (rss.clone().min().unwrap_or(0), rss.max().unwrap_or(0));
    let all: Vec<(f64, f64)> = samples
        .iter()
        .map(|s| (s.at / 3_600.0, s.stats.rss_kib as f64))
        .collect();
    // Without the samples of the first ping round (each session's first request after opening).
    let warm: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.at >= every.as_secs_f64())
        .map(|s| (s.at / 3_600.0, s.stats.rss_kib as f64))
        .collect();
    println!(
        "summary idle-hour: {} sessions held {:.0} s, a ping each every {:.0} s; RSS base {} / after opening {} / end {} / min {} / max {} (peak {}); end - after opening {:+} KiB ({:+.3} KiB per session); slope {} KiB/h over {} samples ({} KiB/h from the second ping round on); pings {sent}, failed {failed}, reconnects {reconnects}; server CPU over the hold {} s ({} µs per ping); final ping: {alive} answered, {gone} gone (404): every session answers: {}; threads {} -> {}, fds {} -> {}; {}",
        ids.len(),
        hold.as_secs_f64(),
        every.as_secs_f64(),
        mib(base.rss_kib),
        mib(opened.rss_kib),
        mib(end.rss_kib),
        mib(lo),
        mib(hi),
        mib(end.hwm_kib),
        end.rss_kib as i64 - opened.rss_kib as i64,
        (end.rss_kib as f64 - opened.rss_kib as f64) / ids.len().max(1) as f64,
        or_unknown(slope(&all), 1),
        all.len(),
        or_unknown(slope(&warm), 1),
        or_unknown(cpu.map(|c| c.ns as f64 / 1e9), 2),
        or_unknown(cpu.and_then(|c| c.us_per_call(sent as usize)), 1),
        if alive == count { "yes" } else { "NO" },
        opened.threads,
        end.threads,
        opened.fds,
        end.fds,
        load_average()
    );
}

fn print_sample(s: &Sample, opened: &Stats, tally: &Tally) {
    let load1 = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default();
    println!(
        "{:>7.0} {:>10} {:>10} {:>+10} {:>10} {:>7} {:>5} {:>8} {:>6} {:>5}",
        s.at,
        mib(s.stats.rss_kib),
        s.stats.rss_kib,
        s.stats.rss_kib as i64 - opened.rss_kib as i64,
        mib(s.stats.hwm_kib),
        s.stats.threads,
        s.stats.fds,
        tally.sent.load(Ordering::Relaxed),
        tally.failed.load(Ordering::Relaxed),
        load1
    );
}

/// Pings every session every `every` until `hold` has passed since `start`, over [`OPENERS`]
/// keep-alive connections: session `i` at `start + k·every + i·every/n`, so the pings arrive
/// evenly rather than all at once.
fn keep_alive_all(
    port: u16,
    ids: &[String],
    start: Instant,
    hold: Duration,
    every: Duration,
    tally: &Arc<Tally>,
) -> Vec<JoinHandle<()>> {
    let step = every / ids.len().max(1) as u32;
    (0..OPENERS)
        .map(|first| {
            // Sessions first, first + OPENERS, …: in the order of their offsets.
            let mine: Vec<(Duration, String)> = ids
                .iter()
                .enumerate()
                .skip(first)
                .step_by(OPENERS)
                .map(|(i, id)| (step * i as u32, id.clone()))
                .collect();
            let tally = tally.clone();
            tokio::spawn(async move {
                let mut conn = None;
                for round in 0u32.. {
                    let at = every * round;
                    if at >= hold {
                        return;
                    }
                    for (offset, id) in &mine {
                        if at + *offset >= hold {
                            return;
                        }
                        sleep_until(start + at + *offset).await;
                        keep_alive(port, &mut conn, id, &tally).await;
                    }
                }
            })
        })
        .collect()
}

/// One `ping` in session `id` on the pinger's connection; a failure unless answered 200 within
/// [`LIMIT`]. A connection the server closed (its idle-connection timeout, say) is opened again
/// and the ping sent once more, counted as a reconnect.
async fn keep_alive(port: u16, conn: &mut Option<Conn>, id: &str, tally: &Tally) {
    tally.sent.fetch_add(1, Ordering::Relaxed);
    let mut why = String::new();
    for attempt in 0..2 {
        if attempt > 0 {
            tally.reconnects.fetch_add(1, Ordering::Relaxed);
        }
        if conn.is_none() {
            match Conn::open(port).await {
                Ok(c) => *conn = Some(c),
                Err(e) => {
                    why = format!("connect: {e}");
                    break;
                }
            }
        }
        let c = conn.as_mut().expect("opened above");
        c.session = Some(id.to_owned());
        match timeout(LIMIT, c.post(PING)).await {
            Ok(Ok((head, _))) if head.status == 200 => return,
            Ok(Ok((head, _))) => {
                why = format!("HTTP {}", head.status);
                break;
            }
            Ok(Err(e)) => {
                why = format!("{e}");
                *conn = None;
            }
            Err(_) => {
                why = "no answer within 5 s".into();
                *conn = None;
                break;
            }
        }
    }
    // The first few failures are shown; the rest only counted.
    if tally.failed.fetch_add(1, Ordering::Relaxed) < 10 {
        eprintln!("keep-alive ping in session {id} failed: {why}");
    }
}

/// The least-squares slope of `y` over `x` (`None` for fewer than two distinct `x`).
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (points.len() >= 2 && sxx > 0.0).then(|| sxy / sxx)
}
