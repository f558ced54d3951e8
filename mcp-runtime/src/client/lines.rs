//! How the stdio transport reads what its server writes: newline-delimited lines, each
//! bounded in bytes whatever chunks the pipe hands over, and the text one line holds. Kept apart
//! from the pipe so that a fuzz target can feed it any bytes cut anywhere (`src/fuzzing.rs`).

use std::borrow::Cow;

/// A line longer than the bound: the connection ends there (its rest is never read).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLong;

/// Splits a byte stream into lines whose message is at most `max` bytes. A line's message is
/// the line without its ending: `\n`, `\r\n`, or (for a last line without `\n`) a final `\r`,
/// so that `max_message_bytes` means the same for a server that ends its lines with `\r\n`
/// (as a text-mode stdout does on Windows), and for the last line of the stream.
///
/// At most `max + 1` bytes are ever kept (the `+ 1` for a `\r` that may end the line), so a
/// server that writes without a newline costs the client a bounded buffer and ends in
/// [`TooLong`] as soon as its line is known to be too long.
pub(crate) struct Lines {
    max: usize,
    line: Vec<u8>,
    /// The last call returned a whole line, still in `line` (the caller borrowed it).
    returned: bool,
}

impl Lines {
    /// A reader of lines of at most `max` bytes.
    pub(crate) fn new(max: usize) -> Lines {
        Lines {
            max,
            line: Vec::new(),
            returned: false,
        }
    }

    /// Takes bytes from the front of `input` up to the end of the next line, and returns
    /// that line's message (its ending left out) when it ends in `input`; `None` when `input` ran out
    /// first (what it held is kept for the next call).
    pub(crate) fn next(&mut self, input: &mut &[u8]) -> Result<Option<&[u8]>, TooLong> {
        if std::mem::take(&mut self.returned) {
            self.line.clear();
        }
        let newline = input.iter().position(|&b| b == b'\n');
        let part = &input[..newline.unwrap_or(input.len())];
        let held = self.line.len() + part.len();
        // The last byte so far may be the `\r` of the line's ending: the message is the rest.
        let cr = part.last().or(self.line.last()) == Some(&b'\r');
        if held - usize::from(cr) > self.max {
            return Err(TooLong);
        }
        self.line.extend_from_slice(part);
        match newline {
            Some(at) => {
                *input = &input[at + 1..];
                self.returned = true;
                Ok(Some(self.message()))
            }
            None => {
                *input = &[];
                Ok(None)
            }
        }
    }

    /// The stream ended: the message of its last line, if it had bytes after the last `\n`.
    pub(crate) fn finish(&mut self) -> Option<&[u8]> {
        if std::mem::take(&mut self.returned) {
            self.line.clear();
        }
        if self.line.is_empty() {
            return None;
        }
        self.returned = true;
        Some(self.message())
    }

    /// The line held, without the `\r` that ends it.
    fn message(&self) -> &[u8] {
        self.line.strip_suffix(b"\r").unwrap_or(&self.line)
    }

    /// The bytes kept of a line not yet ended.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn held(&self) -> usize {
        if self.returned { 0 } else { self.line.len() }
    }
}

/// What one line holds: `None` for a blank one (whitespace only), else its text, which
/// [`peek::read`](super::peek::read) reads. Bytes that are not UTF-8 read as U+FFFD, and
/// whitespace around the message is left out.
pub(crate) fn text(line: &[u8]) -> Option<Cow<'_, str>> {
    let text = match String::from_utf8_lossy(line) {
        Cow::Borrowed(text) => Cow::Borrowed(text.trim()),
        Cow::Owned(text) => Cow::Owned(text.trim().to_owned()),
    };
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Every line `bytes` holds when fed in one piece, then the end of the stream.
    fn read_all(max: usize, bytes: &[u8]) -> (Vec<Vec<u8>>, bool) {
        let mut lines = Lines::new(max);
        let mut out = Vec::new();
        let mut input = bytes;
        while !input.is_empty() {
            match lines.next(&mut input) {
                Ok(Some(line)) => out.push(line.to_vec()),
                Ok(None) => {}
                Err(TooLong) => return (out, true),
            }
        }
        if let Some(line) = lines.finish() {
            out.push(line.to_vec());
        }
        (out, false)
    }

    #[test]
    fn lines_end_at_newlines_and_the_last_needs_none() {
        let (lines, refused) = read_all(64, b"a\n\nb\r\nc");
        assert!(!refused);
        assert_eq!(lines, [&b"a"[..], b"", b"b", b"c"]);
        // One `\r` is the line's ending, and so is a last one at the end of the stream.
        assert_eq!(read_all(64, b"a\r\r\nb\r").0, [&b"a\r"[..], b"b"]);
        let (lines, _) = read_all(64, b"a\n");
        assert_eq!(lines, [b"a"], "no empty line after the last newline");
        assert_eq!(read_all(64, b"").0, Vec::<Vec<u8>>::new());
    }

    #[test]
    fn a_line_cut_anywhere_reads_the_same() {
        let stream = b"{\"id\":1}\r\n\n  \n{\"id\":2}\nlast";
        let whole = read_all(64, stream);
        for cut in 0..=stream.len() {
            let mut lines = Lines::new(64);
            let mut out = Vec::new();
            for mut chunk in [&stream[..cut], &stream[cut..]] {
                while !chunk.is_empty() {
                    if let Some(line) = lines.next(&mut chunk).unwrap() {
                        out.push(line.to_vec());
                    }
                }
            }
            out.extend(lines.finish().map(<[u8]>::to_vec));
            assert_eq!((out, false), whole, "cut at {cut}");
        }
    }

    /// The bound is on the message: the line without its ending. A message of exactly
    /// `max_message_bytes` is read (issue #27's `client_stdio_lines` target, F6: the `\n`, and
    /// a `\r` before it, counted against the bound, so such a message was refused).
    #[test]
    fn a_message_of_the_bound_is_read_whatever_its_line_ending() {
        assert_eq!(read_all(4, b"abcd\n").0, [b"abcd"]);
        assert_eq!(read_all(4, b"abcd\r\n").0, [b"abcd"]);
        assert_eq!(read_all(4, b"abcd").0, [b"abcd"]);
        assert_eq!(read_all(4, b"abcd\r").0, [b"abcd"]);
        assert_eq!(read_all(1, b"\r\n\n").0, [b"", b""]);
        assert_eq!(read_all(4, b"abcde\n"), (vec![], true));
        assert_eq!(
            read_all(4, b"abc\r\r\n").0,
            [b"abc\r"],
            "one `\\r` is the ending"
        );
        assert_eq!(read_all(4, b"abcd\r\r\n"), (vec![], true));
        assert_eq!(read_all(4, b"abcd\rx"), (vec![], true));
    }

    /// A line is refused as soon as it is known to be over, without waiting for its end, and
    /// the buffer never holds more than the bound and a `\r`.
    #[test]
    fn a_line_over_the_bound_is_refused_at_once() {
        let mut lines = Lines::new(4);
        assert_eq!(lines.next(&mut &b"abcd"[..]), Ok(None));
        assert_eq!(lines.held(), 4);
        assert_eq!(lines.next(&mut &b"e"[..]), Err(TooLong));
        let mut lines = Lines::new(4);
        assert_eq!(lines.next(&mut &b"abcd\r"[..]), Ok(None));
        assert_eq!(lines.held(), 5);
        assert_eq!(lines.next(&mut &b"\r"[..]), Err(TooLong));
    }

    /// What `line` says, as a value.
    fn value(line: &[u8]) -> Option<Result<Value, serde_json::Error>> {
        text(line).map(|t| serde_json::from_str(&t))
    }

    #[test]
    fn a_line_reads_as_json_or_not_or_is_blank() {
        assert!(text(b" \t\r").is_none());
        assert!(text(b"").is_none());
        assert_eq!(value(b"{\"id\":1}\r").unwrap().unwrap(), json!({"id": 1}));
        assert!(value(b"hello").unwrap().is_err());
        // Not UTF-8 inside a string: replaced, the message still reads.
        assert_eq!(
            value(b"{\"a\":\"\xff\"}").unwrap().unwrap(),
            json!({"a": "\u{fffd}"})
        );
        // Between tokens it is not JSON.
        assert!(value(b"{\"a\":\xff1}").unwrap().is_err());
    }
}
