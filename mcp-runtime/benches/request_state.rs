//! What sealing and opening a `requestState` costs (research/scale-out.md §6, S4: seal+open
//! ≤ 10 µs p50): `cargo bench -p mcp-runtime --features fuzzing --bench request_state`.
//!
//! A measurement, not a test: it prints numbers and asserts nothing. Every round of a
//! multi-round 2026-07-28 call does one open (the state the client sent back) and, while
//! questions remain, one seal; both go through the code `request_state/seal.rs` runs for a request
//! (the `fuzzing` feature exposes it, as to the fuzz targets). For states carrying one, two and
//! three answers (the three rounds of the fleet's `survey`), it times `BENCH_REPS` (default 31)
//! batches of `BENCH_BATCH` (default 2,000) operations and prints the median and the slowest
//! batch's time per operation:
//!
//! - `bind`: the request's binding digest alone (params without `_meta`, canonical JSON,
//!   SHA-256 with the caller);
//! - `seal`: bind, then a state for the next round (JSON, base64url, HMAC-SHA-256);
//! - `open`: bind, then the state checked and read back (key id, MAC in constant time, JSON,
//!   binding compared);
//! - `round`: open, one more answer, seal: what one round adds to a call (an upper bound: the
//!   binding is computed twice here).

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcp_runtime::fuzzing::{StateParts, StateSealer};
use serde_json::{Map, Value, json};

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

/// What a `survey`-like tool's state holds after `answered` rounds: the answers (each with the
/// digest of the question it answers), the question still open, a remembered value.
fn parts(answered: usize) -> StateParts {
    let object = |v: Value| -> Map<String, Value> { v.as_object().cloned().unwrap_or_default() };
    let mut answers = Map::new();
    for n in 0..answered {
        answers.insert(
            format!("elicit-{n}"),
            json!({
                "q": "Xq3v0m1fH2k8bQ9rT4sW6yZ1aC5dE7gJ0lN2pR4tV6x",
                "v": {"action": "accept", "content": {"answer": format!("answer {n}"), "score": n}}
            }),
        );
    }
    let pending = object(json!({
        format!("elicit-{answered}"): "Zt8u1w3y5A7c9E1g3I5k7M9o1Q3s5U7w9Y1a3C5e7G9"
    }));
    (answers, pending, object(json!({"survey": "fleet"})))
}

/// The median and the slowest of `reps` batches, per operation.
fn time(reps: usize, batch: usize, mut op: impl FnMut()) -> (Duration, Duration) {
    let mut per_op: Vec<Duration> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                op();
            }
            start.elapsed() / batch as u32
        })
        .collect();
    per_op.sort();
    (per_op[per_op.len() / 2], per_op[per_op.len() - 1])
}

fn main() {
    let reps = setting("BENCH_REPS", 31);
    let batch = setting("BENCH_BATCH", 2_000);
    let sealer = StateSealer::new(&[7u8; 32], 600);
    let method = "tools/call";
    let params = json!({
        "name": "survey",
        "arguments": {"topic": "fleet"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    })
    .to_string();
    let principal: &[u8] = b"Bearer a-token-of-typical-length-0123456789abcdef";
    println!(
        "requestState, median (slowest) of {reps} batches of {batch}, µs per operation \
         (state size in bytes)"
    );
    println!(
        "{:<10} {:>8} {:>18} {:>18} {:>18} {:>18}",
        "answers", "bytes", "bind", "seal", "open", "round"
    );
    for answered in 1..=3 {
        let token = sealer
            .seal(method, Some(&params), Some(principal), parts(answered))
            .expect("the params are JSON");
        assert!(
            sealer
                .open(&token, method, Some(&params), Some(principal))
                .is_ok(),
            "a state opens for the request it was sealed for"
        );
        let bind = time(reps, batch, || {
            black_box(StateSealer::digest(
                method,
                Some(black_box(&params)),
                Some(principal),
            ));
        });
        let seal = time(reps, batch, || {
            black_box(sealer.seal(method, Some(&params), Some(principal), parts(answered)));
        });
        let open = time(reps, batch, || {
            let _ =
                black_box(sealer.open(black_box(&token), method, Some(&params), Some(principal)));
        });
        let round = time(reps, batch, || {
            let (answers, pending, memo) = sealer
                .open(black_box(&token), method, Some(&params), Some(principal))
                .expect("opens");
            let mut answers = answers;
            answers.insert(format!("elicit-{answered}"), json!({"q": "d", "v": "yes"}));
            black_box(sealer.seal(
                method,
                Some(&params),
                Some(principal),
                (answers, pending, memo),
            ));
        });
        let us = |(median, slowest): (Duration, Duration)| {
            format!(
                "{:.2} ({:.2})",
                median.as_secs_f64() * 1e6,
                slowest.as_secs_f64() * 1e6
            )
        };
        println!(
            "{answered:<10} {:>8} {:>18} {:>18} {:>18} {:>18}",
            token.len(),
            us(bind),
            us(seal),
            us(open),
            us(round)
        );
    }
}
