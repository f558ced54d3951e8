//! The event store behind SSE resumption: events sent on a session's streams, kept (bounded) so
//! a client that lost its connection can ask for what it missed with `Last-Event-ID`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;

/// Keeps the events of SSE streams for replay. The in-memory [`MemoryEventStore`] is the
/// default; a shared store (Redis, …) lets another instance resume a stream.
pub trait EventStore: Send + Sync + 'static {
    /// Records an event (`seq` is its place in the session, `event` the SSE bytes).
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes);
    /// Marks a stream finished: a replay ends after its last event.
    fn finish(&self, session: &str, stream: u64);
    /// The stored events of `stream` after `seq`, and whether the stream is finished.
    fn replay(&self, session: &str, stream: u64, after: u64) -> (Vec<Bytes>, bool);
    /// Forgets a session.
    fn remove_session(&self, session: &str);
}

#[derive(Default)]
struct StreamLog {
    events: VecDeque<(u64, Bytes)>,
    finished: bool,
}

/// Events in this process, at most `per_stream` per stream (the oldest go first).
pub struct MemoryEventStore {
    per_stream: usize,
    streams: Mutex<HashMap<(String, u64), StreamLog>>,
}

impl MemoryEventStore {
    /// A store keeping at most `per_stream` events of each stream.
    pub fn new(per_stream: usize) -> Self {
        MemoryEventStore {
            per_stream: per_stream.max(1),
            streams: Mutex::new(HashMap::new()),
        }
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes) {
        let mut streams = self.streams.lock().expect("event store lock");
        let log = streams.entry((session.to_owned(), stream)).or_default();
        if log.events.len() == self.per_stream {
            log.events.pop_front();
        }
        log.events.push_back((seq, event));
    }

    fn finish(&self, session: &str, stream: u64) {
        let mut streams = self.streams.lock().expect("event store lock");
        streams
            .entry((session.to_owned(), stream))
            .or_default()
            .finished = true;
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> (Vec<Bytes>, bool) {
        let streams = self.streams.lock().expect("event store lock");
        match streams.get(&(session.to_owned(), stream)) {
            Some(log) => (
                log.events
                    .iter()
                    .filter(|(s, _)| *s > after)
                    .map(|(_, e)| e.clone())
                    .collect(),
                log.finished,
            ),
            None => (Vec::new(), false),
        }
    }

    fn remove_session(&self, session: &str) {
        self.streams
            .lock()
            .expect("event store lock")
            .retain(|(s, _), _| s != session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_what_came_after_and_stays_bounded() {
        let store = MemoryEventStore::new(2);
        for seq in 1..=3 {
            store.append("s", 0, seq, Bytes::from(format!("e{seq}")));
        }
        store.append("s", 1, 4, Bytes::from_static(b"other stream"));
        assert_eq!(
            store.replay("s", 0, 0).0,
            vec![Bytes::from_static(b"e2"), Bytes::from_static(b"e3")]
        );
        assert_eq!(store.replay("s", 0, 2).0, vec![Bytes::from_static(b"e3")]);
        assert!(!store.replay("s", 0, 0).1);
        store.finish("s", 0);
        assert!(store.replay("s", 0, 3).1);
        store.remove_session("s");
        assert!(store.replay("s", 1, 0).0.is_empty());
    }
}
