//! `RedisEventStore` against a real redis-server, with two instances (route tokens i1 and
//! i2) sharing it and the session store: a client resumes its SSE stream with
//! `Last-Event-ID` on i2 after i1 is gone, with no gap; a stream whose producer died ends
//! after what was stored instead of waiting forever; a Redis restart loses what it held
//! without hanging anyone; one SSE event costs one `XADD`; a `Last-Event-ID` at the last
//! possible seq is an unknown stream, not an error; many resumers waiting at once open a
//! bounded number of connections.

#[path = "support/instance.rs"]
mod instance;
mod support;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::Bytes;
use instance::{Instance, Stores, delta, initialize, read_until, send, status};
use mcp_redis::{Redis, RedisEventStore};
use mcp_runtime::transport::http::EventStore;
use support::RedisServer;

fn shared(lease: Duration) -> Stores {
    Stores {
        sessions: true,
        events: true,
        idle: Duration::from_secs(60),
        lease,
    }
}

fn ticks(n: u32, ms: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"ticks","arguments":{{"n":{n},"ms":{ms}}},"_meta":{{"progressToken":"p"}}}}}}"#
    )
}

/// The `(stream, seq)` of every `id:` line of an SSE text, in order.
fn event_ids(text: &str) -> Vec<(u64, u64)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(|id| {
            let (stream, seq) = id.trim().split_once('-').unwrap();
            (stream.parse().unwrap(), seq.parse().unwrap())
        })
        .collect()
}

/// Reads until the server closes the stream (or 30 s pass).
fn read_to_end(stream: &mut TcpStream) -> String {
    use std::io::Read as _;
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return text,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
        // The chunked body's last chunk: the server ended the stream.
        if text.ends_with("0\r\n\r\n") {
            return text;
        }
    }
}

/// Starts `ticks` on `port`, reads up to its second progress event and hangs up; returns the
/// stream id and the seq of the last event seen.
fn start_and_hang_up(port: u16, session: &str, call: &str) -> (u64, u64) {
    let headers = [
        ("Mcp-Session-Id", session),
        ("Authorization", "Bearer alice"),
    ];
    let mut stream = send(port, "POST", call, &headers);
    let seen = read_until(&mut stream, r#""progress":1"#);
    *event_ids(&seen).last().expect("events with ids")
}

fn resume(port: u16, session: &str, stream: u64, seq: u64) -> TcpStream {
    let last = format!("{stream}-{seq}");
    send(
        port,
        "GET",
        "",
        &[
            ("Mcp-Session-Id", session),
            ("Authorization", "Bearer alice"),
            ("Last-Event-ID", last.as_str()),
        ],
    )
}

/// The seqs replayed, checked to be of `stream` and to follow `after` with no gap.
fn replayed(text: &str, stream: u64, after: u64) -> Vec<u64> {
    let ids = event_ids(text);
    assert!(ids.iter().all(|(s, _)| *s == stream), "{text}");
    let seqs: Vec<u64> = ids.iter().map(|i| i.1).collect();
    let want: Vec<u64> = (after + 1..after + 1 + seqs.len() as u64).collect();
    assert_eq!(seqs, want, "a gap: {text}");
    seqs
}

#[test]
fn a_stream_resumes_on_another_instance_after_the_first_is_gone() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut i1 = Instance::start(&redis.url(), "i1", shared(Duration::from_secs(15)));
    let i2 = Instance::start(&redis.url(), "i2", shared(Duration::from_secs(15)));
    let id = initialize(i1.port, "Bearer alice");
    let (stream, seen) = start_and_hang_up(i1.port, &id, &ticks(10, 20));
    // The tool finishes on i1 without its client; then i1 goes away.
    std::thread::sleep(Duration::from_millis(500));
    i1.kill();
    let mut resumed = resume(i2.port, &id, stream, seen);
    let text = read_to_end(&mut resumed);
    assert_eq!(status(&text), 200, "{text}");
    assert!(text.contains(r#""text":"done""#), "the result: {text}");
    let seqs = replayed(&text, stream, seen);
    // 10 progress events and the result, all but those seen before hanging up.
    assert_eq!(seqs.last(), Some(&11), "{text}");
}

#[test]
fn a_stream_whose_producer_died_ends_after_what_was_stored() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let lease = Duration::from_millis(1500);
    let mut i1 = Instance::start(&redis.url(), "i1", shared(lease));
    let i2 = Instance::start(&redis.url(), "i2", shared(lease));
    let id = initialize(i1.port, "Bearer alice");
    // 100 events 50 ms apart: i1 dies in the middle of it.
    let (stream, seen) = start_and_hang_up(i1.port, &id, &ticks(100, 50));
    std::thread::sleep(Duration::from_millis(300));
    i1.kill();
    let started = Instant::now();
    let mut resumed = resume(i2.port, &id, stream, seen);
    let text = read_to_end(&mut resumed);
    let took = started.elapsed();
    assert_eq!(status(&text), 200, "{text}");
    assert!(!text.contains(r#""text":"done""#), "{text}");
    let seqs = replayed(&text, stream, seen);
    assert!(!seqs.is_empty(), "what i1 stored after the hang-up: {text}");
    assert!(took < Duration::from_secs(6), "ended after {took:?}");
    assert!(text.ends_with("0\r\n\r\n"), "the stream ended: {text}");
}

#[test]
fn a_redis_restart_loses_the_events_without_hanging_a_resume() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let i1 = Instance::start(&redis.url(), "i1", shared(Duration::from_secs(15)));
    let id = initialize(i1.port, "Bearer alice");
    let (stream, seen) = start_and_hang_up(i1.port, &id, &ticks(5, 20));
    std::thread::sleep(Duration::from_millis(300));
    redis.kill();
    // While Redis is down: a clear 503.
    let mut down = resume(i1.port, &id, stream, seen);
    let text = read_to_end(&mut down);
    assert_eq!(status(&text), 503, "{text}");
    assert!(text.contains("event store is unavailable"), "{text}");
    redis.restart();
    // Back, but empty: the stream is unknown, so the GET is a plain stream (no replay).
    std::thread::sleep(Duration::from_millis(500));
    let mut back = resume(i1.port, &id, stream, seen);
    let text = read_until(&mut back, "retry:");
    assert_eq!(status(&text), 200, "{text}");
    assert!(!text.contains("progress"), "{text}");
    // And new streams are recorded again.
    let (_, seen_again) = start_and_hang_up(i1.port, &id, &ticks(3, 10));
    assert!(seen_again >= 2);
}

#[test]
fn one_sse_event_costs_one_xadd() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let i1 = Instance::start(&redis.url(), "i1", shared(Duration::from_secs(15)));
    let id = initialize(i1.port, "Bearer alice");
    let before = redis.command_calls();
    let headers = [
        ("Mcp-Session-Id", id.as_str()),
        ("Authorization", "Bearer alice"),
    ];
    let mut stream = send(i1.port, "POST", &ticks(10, 30), &headers);
    let text = read_until(&mut stream, r#""text":"done""#);
    std::thread::sleep(Duration::from_millis(200));
    let cost = delta(&redis, &before);
    let events = event_ids(&text).len() as u64 - 1; // not the priming event
    assert_eq!(events, 11, "10 progress events and the result: {text}");
    // The opening and the end are an entry each; every event one more.
    assert_eq!(cost.get("xadd"), Some(&(events + 2)), "{cost:?}");
    assert_eq!(cost.get("expire"), Some(&3), "{cost:?}");
    assert_eq!(cost.get("sadd"), Some(&1), "{cost:?}");
    let others: u64 = cost
        .iter()
        .filter(|(k, _)| !["xadd", "expire", "sadd", "set"].contains(&k.as_str()))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(others, 0, "{cost:?}");
}

#[tokio::test]
async fn nothing_follows_the_last_possible_seq() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = RedisEventStore::new(&Redis::connect(&redis.url(), "edge").await.unwrap());
    store.open("s", 1).await.unwrap();
    store.append("s", 1, 1, Bytes::from("one")).await.unwrap();
    store
        .append("s", 1, u64::MAX, Bytes::from("last"))
        .await
        .unwrap();
    // `Last-Event-ID: 1-18446744073709551615` (any client may send it): no event can follow,
    // so the stream is unknown (the GET gets a fresh stream), not a Redis error (a 503 that a
    // retry would meet again forever), and nobody waits for what cannot come.
    let replay = store.replay("s", 1, u64::MAX).await;
    assert!(matches!(replay, Ok(None)), "{replay:?}");
    let waited = tokio::time::timeout(Duration::from_secs(1), store.wait("s", 1, u64::MAX)).await;
    assert!(waited.is_ok(), "waited for an event after the last seq");
    // The seq before it still replays what follows (no overflow counting past it).
    let replay = store.replay("s", 1, u64::MAX - 1).await.unwrap().unwrap();
    let seqs: Vec<u64> = replay.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [u64::MAX]);
    assert_eq!(replay.events[0].bytes, "last");
}

/// Resumers waiting at once block on connections of their own, but only so many: past 64 they
/// poll (each wait returns within a quarter second) rather than open a connection each, and
/// an event still reaches them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_waiting_resumers_open_a_bounded_number_of_connections() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = std::sync::Arc::new(RedisEventStore::new(
        &Redis::connect(&redis.url(), "waiters").await.unwrap(),
    ));
    let before = redis.connected_clients();
    let resumers: Vec<_> = (0..200u64)
        .map(|stream| {
            let store = store.clone();
            tokio::spawn(async move {
                store.open("s", stream).await.unwrap();
                // Waits until an event comes, as a resumed SSE stream does.
                let started = Instant::now();
                loop {
                    let replay = store.replay("s", stream, 0).await.unwrap().unwrap();
                    if !replay.events.is_empty() {
                        return started.elapsed();
                    }
                    store.wait("s", stream, 0).await;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let during = redis.connected_clients();
    assert!(
        during <= before + 64 + 2,
        "{during} connections with 200 resumers waiting (before: {before})"
    );
    for stream in 0..200u64 {
        store
            .append("s", stream, 1, Bytes::from("event"))
            .await
            .unwrap();
    }
    for resumer in resumers {
        let waited = tokio::time::timeout(Duration::from_secs(10), resumer)
            .await
            .expect("every resumer hears its event")
            .unwrap();
        assert!(waited < Duration::from_secs(10));
    }
}
