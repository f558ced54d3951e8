//! URI template matching time against URI length: `cargo bench -p mcp-integration --bench uri_template`.
//!
//! A measurement, not a test: it prints numbers and never asserts on them. For each template
//! and each length (50k, 100k, 200k, 400k characters) it matches a URI built to be the worst
//! case for a backtracking matcher (a long value that fails, or nearly fails, at its end) and
//! prints the median time of `BENCH_REPS` matches (default 21) and the time per byte. Linear
//! matching shows as a flat ns/byte column.

use std::time::{Duration, Instant};

use mcp_runtime::resource::UriTemplate;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(21);
    type Case = (&'static str, fn(usize) -> String, &'static str);
    let cases: [Case; 4] = [
        (
            "test://template/{id}/data",
            |n| format!("test://template/{}/dat", "a".repeat(n)),
            "no match at the end",
        ),
        (
            "test://template/{id}/data",
            |n| format!("test://template/{}/data", "a".repeat(n)),
            "match",
        ),
        (
            "files://{+path}/raw",
            |n| format!("files://{}", "a/".repeat(n / 2)),
            "no match",
        ),
        (
            "x://a{/id*}",
            |n| format!("x://a/{}", ",".repeat(n)),
            "match",
        ),
    ];
    println!(
        "{:<28} {:<20} {:>8} {:>12} {:>9}",
        "template", "uri", "chars", "median", "ns/byte"
    );
    for (template, uri, what) in cases {
        let t = UriTemplate::parse(template).expect("a valid template");
        for n in [50_000, 100_000, 200_000, 400_000] {
            let uri = uri(n);
            let times = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(t.matches(std::hint::black_box(&uri)));
                    start.elapsed()
                })
                .collect();
            let m = median(times);
            println!(
                "{template:<28} {what:<20} {n:>8} {:>10.1}µs {:>9.2}",
                m.as_secs_f64() * 1e6,
                m.as_nanos() as f64 / uri.len() as f64
            );
        }
    }
}
