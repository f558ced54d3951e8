//! The client's stdio line reader (`client/lines.rs`), which reads whatever a server process
//! writes to its stdout. Input: the bound (first byte + 1), a count of cuts (second byte, up to
//! 16), that many 2-byte offsets, then the stream. Asserts, for any bytes cut anywhere: the
//! lines (and a refusal) do not depend on where the stream was cut; they are the stream's
//! `\n`-separated lines, each without its line ending (`\n`, or `\r\n`, or a last `\r` at the end
//! of the stream), the last one only if it has bytes; a line is refused exactly when its message
//! (the line without its ending) is over the bound, and nothing after it is read; no line over
//! the bound is yielded, and the reader never holds more than the bound and one byte; a line
//! reads as JSON exactly when its text (invalid UTF-8 replaced, whitespace trimmed) does, and a
//! blank one reads as nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::{ClientStdioLine, client_stdio_lines};

/// What the reader must make of `stream`: its lines, and whether one is refused.
fn model(stream: &[u8], max: usize) -> (Vec<Vec<u8>>, bool) {
    let mut pieces: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // What follows the last `\n`: a line only if it has bytes.
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    let mut lines = Vec::new();
    for piece in pieces {
        let message = piece.strip_suffix(b"\r").unwrap_or(piece);
        if message.len() > max {
            return (lines, true);
        }
        lines.push(message.to_vec());
    }
    (lines, false)
}

/// What one line says, read independently of the runtime.
fn reads(bytes: &[u8]) -> Option<Result<serde_json::Value, ()>> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    (!text.is_empty()).then(|| serde_json::from_str(text).map_err(drop))
}

fuzz_target!(|data: &[u8]| {
    let [max, cuts, rest @ ..] = data else {
        return;
    };
    let max = usize::from(*max) + 1;
    let ncuts = usize::from(*cuts % 17).min(rest.len() / 2);
    let (cut_bytes, stream) = rest.split_at(2 * ncuts);
    let mut cuts: Vec<usize> = cut_bytes
        .chunks(2)
        .map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])) % (stream.len() + 1))
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

    let whole = client_stdio_lines(&[stream], max);
    let (lines, refused) = model(stream, max);
    assert_eq!(
        whole.refused, refused,
        "refused: {}, but the stream has a message over {max} bytes: {refused}",
        whole.refused
    );
    let got: Vec<&[u8]> = whole.lines.iter().map(|l| &l.bytes[..]).collect();
    assert_eq!(got, lines, "the lines are not the stream's");
    for ClientStdioLine { bytes, read } in &whole.lines {
        assert!(bytes.len() <= max, "a line of {} bytes passed a bound of {max}", bytes.len());
        assert_eq!(*read, reads(bytes), "the line {bytes:?} read wrong");
    }
    assert!(
        whole.most_held <= max + 1,
        "the reader held {} bytes with a bound of {max}",
        whole.most_held
    );

    let split = client_stdio_lines(&chunks, max);
    assert_eq!(
        (&whole.lines, whole.refused),
        (&split.lines, split.refused),
        "the lines depend on where the stream was cut"
    );
    assert!(split.most_held <= max + 1, "the reader held {} bytes", split.most_held);
});
