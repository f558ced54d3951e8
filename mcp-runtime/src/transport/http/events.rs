//! The event store behind SSE resumption: events sent on a session's streams, kept (bounded) so
//! a client that lost its connection can ask for what it missed with `Last-Event-ID`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::Notify;

/// One recorded SSE event: its place among the session's events and its bytes as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's sequence number, unique and increasing within its session.
    pub seq: u64,
    /// The SSE event as sent (id, data lines, blank line).
    pub bytes: Bytes,
}

/// What a store holds of one stream after a given event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    /// The events after the given one, oldest first.
    pub events: Vec<StoredEvent>,
    /// Whether the stream is finished: no event follows the last of `events`.
    pub finished: bool,
}

/// The future of [`EventStore::wait`].
pub type WaitFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Keeps the events of SSE streams for replay. The in-memory [`MemoryEventStore`] is the
/// default; a shared store (Redis, …) lets another instance resume a stream.
///
/// A resuming client is fed by [`replay`](Self::replay), then [`wait`](Self::wait) until
/// something new is there, then `replay` again, until the stream is finished or forgotten.
pub trait EventStore: Send + Sync + 'static {
    /// Starts a stream (a POST answered with SSE), before any event: a client resuming it
    /// then waits for its events instead of being treated as a standalone GET stream.
    fn open(&self, session: &str, stream: u64);
    /// Records an event (`seq` is its place in the session, `event` the SSE bytes), and wakes
    /// whoever [waits](Self::wait) on the stream.
    fn append(&self, session: &str, stream: u64, seq: u64, event: Bytes);
    /// Marks a stream finished (a replay ends after its last event), and wakes its waiters.
    fn finish(&self, session: &str, stream: u64);
    /// The stored events of `stream` after `seq`, and whether the stream is finished; `None`
    /// for a stream the store does not know (never opened, aged out, or its session removed).
    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<Replay>;
    /// Completes once `stream` has something a replay after `after` would show: a newer event,
    /// its end, or its removal from the store. It completes at once if that is already so, and
    /// may complete spuriously (the caller replays again and, finding nothing, waits again).
    fn wait<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a>;
    /// Forgets a session (and wakes the waiters of its streams).
    fn remove_session(&self, session: &str);
}

#[derive(Default)]
struct StreamLog {
    events: VecDeque<(u64, Bytes)>,
    finished: bool,
    /// Created when someone first waits on the stream (most streams are never resumed).
    changed: Option<Arc<Notify>>,
}

impl StreamLog {
    fn wake(&self) {
        if let Some(changed) = &self.changed {
            changed.notify_waiters();
        }
    }
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
        if !logs.contains_key(&stream)
            && logs.len() >= STREAMS_PER_SESSION
            && let Some((_, oldest)) = logs.pop_first()
        {
            oldest.wake();
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
        log.wake();
    }

    fn finish(&self, session: &str, stream: u64) {
        let mut streams = self.streams.lock().expect("event store lock");
        let log = Self::log(&mut streams, session, stream);
        log.finished = true;
        log.wake();
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Option<Replay> {
        let streams = self.streams.lock().expect("event store lock");
        let log = streams.get(session)?.get(&stream)?;
        Some(Replay {
            events: log
                .events
                .iter()
                .filter(|(s, _)| *s > after)
                .map(|(seq, bytes)| StoredEvent {
                    seq: *seq,
                    bytes: bytes.clone(),
                })
                .collect(),
            finished: log.finished,
        })
    }

    fn wait<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a> {
        let mut streams = self.streams.lock().expect("event store lock");
        let Some(log) = streams.get_mut(session).and_then(|l| l.get_mut(&stream)) else {
            return Box::pin(std::future::ready(()));
        };
        if log.finished || log.events.back().is_some_and(|(seq, _)| *seq > after) {
            return Box::pin(std::future::ready(()));
        }
        // Made under the lock, so no append between the check and the wait is missed (a
        // `Notified` receives `notify_waiters` from its creation on, polled or not).
        let notified = log
            .changed
            .get_or_insert_with(Default::default)
            .clone()
            .notified_owned();
        Box::pin(notified)
    }

    fn remove_session(&self, session: &str) {
        let removed = self
            .streams
            .lock()
            .expect("event store lock")
            .remove(session);
        for log in removed.iter().flat_map(BTreeMap::values) {
            log.wake();
        }
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
        let event = |seq, bytes: &'static [u8]| StoredEvent {
            seq,
            bytes: Bytes::from_static(bytes),
        };
        assert_eq!(
            replay("s", 0, 0).events,
            vec![event(2, b"e2"), event(3, b"e3")]
        );
        assert_eq!(replay("s", 0, 2).events, vec![event(3, b"e3")]);
        assert!(!replay("s", 0, 0).finished);
        store.finish("s", 0);
        assert!(replay("s", 0, 3).finished);
        store.open("s", 9);
        assert_eq!(
            store.replay("s", 9, 0),
            Some(Replay::default()),
            "an opened stream is known"
        );
        assert_eq!(store.replay("s", 8, 0), None);
        store.remove_session("s");
        assert!(store.replay("s", 1, 0).is_none());
        for stream in 0..40 {
            store.append("t", stream, stream, Bytes::from_static(b"x"));
        }
        assert!(store.replay("t", 0, 0).is_none(), "the oldest streams go");
        assert_eq!(store.replay("t", 39, 0).unwrap().events.len(), 1);
    }

    /// Polls a wait once: whether it is already complete.
    fn ready(wait: WaitFuture<'_>) -> bool {
        let mut wait = wait;
        let waker = std::task::Waker::noop();
        wait.as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
            .is_ready()
    }

    #[tokio::test]
    async fn waits_end_on_new_events_on_the_end_and_on_removal() {
        let store = Arc::new(MemoryEventStore::new(8));
        assert!(
            ready(store.wait("s", 0, 0)),
            "an unknown stream has nothing to wait for"
        );
        store.open("s", 0);
        assert!(!ready(store.wait("s", 0, 0)), "an open, empty stream waits");
        store.append("s", 0, 1, Bytes::from_static(b"e1"));
        assert!(
            ready(store.wait("s", 0, 0)),
            "an event after `after` is there"
        );
        assert!(
            !ready(store.wait("s", 0, 1)),
            "nothing after the last event yet"
        );

        // A waiter parked before the event is woken by it.
        let waiter = tokio::spawn({
            let store = store.clone();
            async move { store.wait("s", 0, 1).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        store.append("s", 0, 2, Bytes::from_static(b"e2"));
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("woken by append")
            .unwrap();

        let finished = tokio::spawn({
            let store = store.clone();
            async move { store.wait("s", 0, 2).await }
        });
        tokio::task::yield_now().await;
        store.finish("s", 0);
        tokio::time::timeout(std::time::Duration::from_secs(5), finished)
            .await
            .expect("woken by finish")
            .unwrap();

        store.open("s", 1);
        let removed = tokio::spawn({
            let store = store.clone();
            async move { store.wait("s", 1, 0).await }
        });
        tokio::task::yield_now().await;
        store.remove_session("s");
        tokio::time::timeout(std::time::Duration::from_secs(5), removed)
            .await
            .expect("woken by removal")
            .unwrap();
    }
}
