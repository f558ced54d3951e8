//! The client's `text/event-stream` parser (`client/sse.rs`), which reads whatever a server
//! sends. Asserts, for any bytes and any split of them into chunks: the events do not depend
//! on where the chunks were cut (the same stream in one piece reads the same, refusal
//! included); no event's data is longer than the bound, so a hostile stream cannot grow the
//! client; and a stream with no line over the bound and no event over it is never refused.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::client_sse;

#[derive(Arbitrary, Debug)]
struct Input {
    stream: Vec<u8>,
    /// Where to cut the stream into chunks (offsets, taken modulo its length).
    cuts: Vec<u16>,
    /// The parser's bound: small, so streams reach it.
    max: u8,
}

fuzz_target!(|input: Input| {
    let max = usize::from(input.max).max(1);
    let stream = &input.stream;
    let mut cuts: Vec<usize> = input
        .cuts
        .iter()
        .map(|&c| usize::from(c) % (stream.len() + 1))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut chunks = Vec::new();
    let mut at = 0;
    for cut in cuts {
        chunks.push(&stream[at..cut]);
        at = cut;
    }
    chunks.push(&stream[at..]);

    let whole = client_sse(&[stream], max);
    let split = client_sse(&chunks, max);
    assert_eq!(
        whole, split,
        "the events depend on where the stream was cut"
    );
    for event in &whole.events {
        assert!(
            event.data.len() <= max,
            "an event of {} bytes passed a bound of {max}",
            event.data.len()
        );
    }
    // Refused only for a reason: some line (between line endings) longer than the bound.
    if whole.refused {
        let longest_line = stream
            .split(|&b| b == b'\n' || b == b'\r')
            .map(<[u8]>::len)
            .max()
            .unwrap_or(0);
        let data_total: usize = stream
            .split(|&b| b == b'\n' || b == b'\r')
            .filter(|l| l.starts_with(b"data"))
            // The bound is on the data as decoded: a byte that is not UTF-8 becomes U+FFFD,
            // three bytes.
            .map(|l| String::from_utf8_lossy(l).len())
            .sum();
        assert!(
            longest_line > max || data_total > max,
            "a stream with no line or data over {max} bytes was refused"
        );
    }
});
