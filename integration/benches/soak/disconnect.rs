//! Clients that leave in the middle: after writing a request, during a call, after a response
//! head, a priming event or a listen's acknowledgement.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use crate::abuse::{SSE_ACCEPT, recovery, rounds};
use crate::client::{
    Conn, add_call, connect, listen_request, request_text, stateless_call, stateless_headers,
};
use crate::common::{CpuSample, or_unknown};
use crate::probe::Probe;
use crate::server::{Server, Stats};
use crate::{load_average, ms, pct, size};

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
