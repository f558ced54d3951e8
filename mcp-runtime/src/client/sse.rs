//! An incremental `text/event-stream` parser (the WHATWG rules a client needs: `data`,
//! `event`, `id`, `retry`, comments, any line ending), bounded: a line, and the data of one
//! event, hold at most the message limit.

use super::error::ClientError;

/// One dispatched event.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SseEvent {
    pub(crate) event: Option<String>,
    pub(crate) data: String,
    pub(crate) id: Option<String>,
}

/// What one [`SseParser::feed`] gave: the events completed, then the error that ended the
/// stream, if one did.
#[derive(Debug)]
pub(crate) struct Fed {
    pub(crate) events: Vec<SseEvent>,
    pub(crate) error: Option<ClientError>,
}

impl Fed {
    fn failed(events: Vec<SseEvent>, error: ClientError) -> Fed {
        Fed {
            events,
            error: Some(error),
        }
    }

    /// The events, or the error when there is one (for callers that drop the events then).
    #[cfg(test)]
    fn result(self) -> Result<Vec<SseEvent>, ClientError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.events),
        }
    }
}

/// Feeds bytes in, takes events out. `retry` keeps the last reconnection delay the server
/// asked for (milliseconds).
pub(crate) struct SseParser {
    /// The longest line, and the most data in one event (more is an error: the stream is
    /// broken or hostile).
    max: usize,
    buf: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    id: Option<String>,
    pub(crate) retry: Option<u64>,
    pub(crate) last_id: Option<String>,
    /// A `\r` ended the last line: a `\n` right after it belongs to the same line ending.
    after_cr: bool,
    /// The event being read has more data than `max`.
    oversized: bool,
}

impl SseParser {
    /// A parser of lines and events of at most `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        SseParser {
            max,
            buf: Vec::new(),
            event: None,
            data: None,
            id: None,
            retry: None,
            last_id: None,
            after_cr: false,
            oversized: false,
        }
    }

    /// Adds bytes; returns the events they complete and, for an oversized line or event, the
    /// error that ends the stream, after the events completed before it: what a stream
    /// delivers does not depend on how its bytes were cut into chunks.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Fed {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.buf);
                    if let Some(ev) = self.line(&String::from_utf8_lossy(&line)) {
                        out.push(ev);
                    }
                    if self.oversized {
                        return Fed::failed(
                            out,
                            ClientError::too_large("an SSE event (bytes)", self.max),
                        );
                    }
                }
                _ => {
                    if self.buf.len() >= self.max {
                        return Fed::failed(
                            out,
                            ClientError::too_large("an SSE line (bytes)", self.max),
                        );
                    }
                    self.buf.push(b);
                }
            }
        }
        Fed {
            events: out,
            error: None,
        }
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let data = self.data.take()?;
            let ev = SseEvent {
                event: self.event.take(),
                data,
                id: self.id.clone(),
            };
            return Some(ev);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_owned()),
                }
                if self.data.as_ref().is_some_and(|d| d.len() > self.max) {
                    self.oversized = true;
                }
            }

            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => {
                self.id = Some(value.to_owned());
                self.last_id = Some(value.to_owned());
            }
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_across_chunks_and_line_endings() {
        let mut p = SseParser::new(1024);
        let mut all = p.feed(b"retry: 500\nid: 7\nevent: mess").result().unwrap();
        all.extend(
            p.feed(b"age\r\ndata: {\"a\":\r\n\r\n: keep-alive\n\ndata: x\rdata: y\r\r")
                .result()
                .unwrap(),
        );
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].event.as_deref(), Some("message"));
        assert_eq!(all[0].data, "{\"a\":");
        assert_eq!(all[0].id.as_deref(), Some("7"));
        assert_eq!(all[1].data, "x\ny");
        assert_eq!(
            p.feed(b"data:\ndata: y\n\n").result().unwrap()[0].data,
            "\ny"
        );
        assert_eq!(p.retry, Some(500));
        assert_eq!(p.last_id.as_deref(), Some("7"));
    }

    #[test]
    fn an_endless_event_is_an_error_not_a_leak() {
        let mut p = SseParser::new(16 * 1024 * 1024);
        let line = format!("data: {}\n", "x".repeat(1024 * 1024));
        let mut failed = false;
        for _ in 0..20 {
            if p.feed(line.as_bytes()).error.is_some() {
                failed = true;
                break;
            }
        }
        assert!(failed, "20 MiB of data in one event must be refused");
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        let mut p = SseParser::new(1024);
        assert!(p.feed(b"id: 1\n\n").result().unwrap().is_empty());
        assert_eq!(p.last_id.as_deref(), Some("1"));
        // A priming event: an id and empty data.
        let ev = p.feed(b"id: 2\ndata:\n\n").result().unwrap();
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "");
    }

    #[test]
    fn a_line_that_never_ends_is_bounded() {
        let mut p = SseParser::new(100);
        assert!(p.feed(&[b'x'; 60]).result().unwrap().is_empty());
        let e = p
            .feed(&[b'x'; 60])
            .result()
            .expect_err("a 120-byte line past a 100-byte limit");
        assert!(matches!(e, ClientError::TooLarge { limit: 100, .. }), "{e}");
    }

    /// Events completed before a line or an event over the bound are delivered, however
    /// the stream was cut into chunks (fuzz finding F9: in one chunk they were dropped with
    /// the error, in two they were delivered).
    #[test]
    fn events_before_an_oversized_line_are_delivered_in_any_chunking() {
        let stream = b"data: ok\n\ndata: 0123456789abcdef0123456789\n";
        let whole = SseParser::new(16).feed(stream);
        assert_eq!(whole.events.len(), 1, "{whole:?}");
        assert_eq!(whole.events[0].data, "ok");
        assert!(whole.error.is_some());
        let mut p = SseParser::new(16);
        let first = p.feed(&stream[..11]);
        let second = p.feed(&stream[11..]);
        assert_eq!((first.events.len(), second.events.len()), (1, 0));
        assert!(first.error.is_none() && second.error.is_some());
    }
}
