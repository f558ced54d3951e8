//! The event store behind SSE resumption: events sent on a session's streams, kept (bounded) so
//! a client that lost its connection can ask for what it missed with `Last-Event-ID`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;

use bytes::Bytes;

/// Keeps the events of SSE streams for replay. The in-memory [`MemoryEventStore`] is the
/// default; a shared store (Redis, …) lets another instance resume a stream.
pub trait EventStore: Send + Sync + 'static {
    /// Starts a stream (a POST answered with SSE), before any event: a client resuming it
    /// then waits for its events instead of being treated as a standalone GET stream.
    fn open(&self, session: &str, stream: u64);
    /// Records an event (`seq` is its place in the session, `event` the SSE bytes).
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes);
    /// Marks a stream finished: a replay ends after its last event.
    fn finish(&self, session: &str, stream: u64);
    /// The stored events of `stream` after `seq` (with their `seq`), and whether the stream is
    /// finished; `None` for a stream the store does not know.
    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<(Vec<(u64, Bytes)>, bool)>;
    /// Forgets a session.
    fn remove_session(&self, session: &str);
}

#[derive(Default)]
struct StreamLog {
    events: VecDeque<(u64, Bytes)>,
    finished: bool,
}

/// Streams kept per session: a client resumes a recent stream, not its thousandth-last.
const STREAMS_PER_SESSION: usize = 32;

/// Events in this process: at most `per_stream` per stream and the last 32 streams of each
/// session (the oldest go first).
pub struct MemoryEventStore {
    per_stream: usize,
    streams: Mutex<HashMap<String, BTreeMap<u64, StreamLog>>>,
}

impl MemoryEventStore {
    /// A store keeping at most `per_stream` events of each stream.
    pub fn new(per_stream: usize) -> Self {
        MemoryEventStore {
            per_stream: per_stream.max(1),
            streams: Mutex::new(HashMap::new()),
        }
    }

    fn log<'a>(
        streams: &'a mut HashMap<String, BTreeMap<u64, StreamLog>>,
        session: &str,
        stream: u64,
    ) -> &'a mut StreamLog {
        let logs = streams.entry(session.to_owned()).or_default();
        if !logs.contains_key(&stream) && logs.len() >= STREAMS_PER_SESSION {
            logs.pop_first();
        }
        logs.entry(stream).or_default()
    }
}

impl EventStore for MemoryEventStore {
    fn open(&self, session: &str, stream: u64) {
        let mut streams = self.streams.lock().expect("event store lock");
        Self::log(&mut streams, session, stream);
    }

    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes) {
        let mut streams = self.streams.lock().expect("event store lock");
        let log = Self::log(&mut streams, session, stream);
        if log.events.len() == self.per_stream {
            log.events.pop_front();
        }
        log.events.push_back((seq, event));
    }

    fn finish(&self, session: &str, stream: u64) {
        let mut streams = self.streams.lock().expect("event store lock");
        Self::log(&mut streams, session, stream).finished = true;
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<(Vec<(u64, Bytes)>, bool)> {
        let streams = self.streams.lock().expect("event store lock");
        let log = streams.get(session)?.get(&stream)?;
        Some((
            log.events
                .iter()
                .filter(|(s, _)| *s > after)
                .cloned()
                .collect(),
            log.finished,
        ))
    }

    fn remove_session(&self, session: &str) {
        self.streams
            .lock()
            .expect("event store lock")
            .remove(session);
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
        let replay = |s: &str, stream, after| store.replay(s, stream, after).unwrap();
        assert_eq!(
            replay("s", 0, 0).0,
            vec![
                (2, Bytes::from_static(b"e2")),
                (3, Bytes::from_static(b"e3"))
            ]
        );
        assert_eq!(replay("s", 0, 2).0, vec![(3, Bytes::from_static(b"e3"))]);
        assert!(!replay("s", 0, 0).1);
        store.finish("s", 0);
        assert!(replay("s", 0, 3).1);
        store.open("s", 9);
        assert_eq!(
            store.replay("s", 9, 0),
            Some((vec![], false)),
            "an opened stream is known"
        );
        assert_eq!(store.replay("s", 8, 0), None);
        store.remove_session("s");
        assert!(store.replay("s", 1, 0).is_none());
        for stream in 0..40 {
            store.append("t", stream, stream, Bytes::from_static(b"x"));
        }
        assert!(store.replay("t", 0, 0).is_none(), "the oldest streams go");
        assert_eq!(store.replay("t", 39, 0).unwrap().0.len(), 1);
    }
}
