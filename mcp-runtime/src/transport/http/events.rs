//! The event store behind SSE resumption: events sent on a session's streams, kept (bounded) so
//! a client that lost its connection can ask for what it missed with `Last-Event-ID`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::Notify;

/// One recorded SSE event: its place in its stream and its bytes as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's sequence number in its stream: 1, 2, 3, … (the priming event, 0, is
    /// not recorded).
    pub seq: u64,
    /// The SSE event as sent (id, data lines, blank line).
    pub bytes: Bytes,
}

/// What [`EventStore::replay`] returns: the events an event store holds of one SSE stream after a
/// given event, and whether the stream has ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventReplay {
    /// The events after the given one, oldest first, with no gap.
    pub events: Vec<StoredEvent>,
    /// Whether the stream is finished: no event follows the last of `events` (its result
    /// was recorded, or the instance producing it is gone).
    pub finished: bool,
}

/// The 0.1 name of [`EventReplay`].
#[doc(hidden)]
#[deprecated(note = "renamed to `EventReplay`")]
pub type Replay = EventReplay;

/// Why an event store failed (a lost connection, a refused write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventStoreError(pub String);

impl std::fmt::Display for EventStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "event store unavailable: {}", self.0)
    }
}

impl std::error::Error for EventStoreError {}

/// The future an [`EventStore`] method returns.
pub type EventFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, EventStoreError>> + Send + 'a>>;

/// The future of [`EventStore::wait`].
pub type WaitFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Keeps the events of SSE streams for replay. The in-memory [`MemoryEventStore`] is the
/// default; a shared store (Redis, …) lets another instance resume a stream.
///
/// Each event is [appended](Self::append) before it is sent to the client, and the stream
/// waits for the store to take it: a client that saw an event can resume after it
/// anywhere. An append that fails is logged and the event is still sent (the stream is
/// then not resumable past it: a replay never has a gap).
///
/// A resuming client is fed by [`replay`](Self::replay), then [`wait`](Self::wait) until
/// something new is there, then `replay` again, until the stream is finished or forgotten.
/// A stream whose producing instance went away before finishing must not be waited on
/// forever: a shared store reports it finished (after what it kept) once it can tell the
/// producer is gone.
pub trait EventStore: Send + Sync + 'static {
    /// Starts a stream (a POST answered with SSE), before any event: a client resuming it
    /// then waits for its events instead of being treated as a standalone GET stream.
    fn open<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()>;
    /// Records an event (`seq` is its place in the stream, `event` the SSE bytes), and wakes
    /// whoever [waits](Self::wait) on the stream.
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        event: Bytes,
    ) -> EventFuture<'a, ()>;
    /// Marks a stream finished (a replay ends after its last event), and wakes its waiters.
    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()>;
    /// The stored events of `stream` after `seq`, and whether the stream is finished; `None`
    /// for a stream the store does not know (never opened, aged out, or its session removed)
    /// or cannot replay without a gap.
    fn replay<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> EventFuture<'a, Option<EventReplay>>;
    /// Completes once `stream` has something a replay after `after` would show: a newer event,
    /// its end, or its removal from the store. It completes at once if that is already so, and
    /// may complete spuriously (the caller replays again and, finding nothing, waits again).
    fn wait<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a>;
    /// Forgets a session (and wakes the waiters of its streams). The transport calls this on
    /// every way a session ends, and records nothing more for it afterwards (a stream still
    /// running then is no longer recorded); a store shared between instances should still
    /// not let a late `append` re-create a removed session.
    fn remove_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()>;
}

fn ready<'a, T: Send + 'a>(value: T) -> EventFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

#[derive(Default)]
struct StreamLog {
    events: VecDeque<(u64, Bytes)>,
    finished: bool,
    /// The newest `seq` evicted from this stream: a replay from before it would have a gap,
    /// so it is refused (`None`) rather than served partly.
    evicted_through: Option<u64>,
    /// Created when someone first waits on the stream (most streams are never resumed).
    changed: Option<Arc<Notify>>,
}

impl StreamLog {
    fn wake(&self) {
        if let Some(changed) = &self.changed {
            changed.notify_waiters();
        }
    }

    /// Drops the oldest event; returns its size.
    fn evict_oldest(&mut self) -> usize {
        match self.events.pop_front() {
            Some((seq, bytes)) => {
                self.evicted_through = Some(seq);
                bytes.len()
            }
            None => 0,
        }
    }

    fn bytes(&self) -> usize {
        self.events.iter().map(|(_, b)| b.len()).sum()
    }
}

#[derive(Default)]
struct SessionLog {
    streams: BTreeMap<u64, StreamLog>,
    /// The bytes of every event kept for the session.
    bytes: usize,
    /// The highest stream id forgotten as the oldest of more than 32: a stream at or below it
    /// that is heard of again has lost what it had.
    forgotten_through: Option<u64>,
}

impl SessionLog {
    /// Evicts the session's oldest events (oldest stream first) until it holds at most
    /// `limit` bytes; returns how many bytes went.
    fn shrink_to(&mut self, limit: usize) -> usize {
        let mut freed = 0;
        for log in self.streams.values_mut() {
            while self.bytes - freed > limit && !log.events.is_empty() {
                freed += log.evict_oldest();
            }
            log.wake();
            if self.bytes - freed <= limit {
                break;
            }
        }
        self.bytes -= freed;
        freed
    }
}

#[derive(Default)]
struct Logs {
    sessions: HashMap<String, SessionLog>,
    /// The bytes of every event kept, all sessions together.
    bytes: usize,
}

/// Streams kept per session: a client resumes a recent stream, not its thousandth-last.
const STREAMS_PER_SESSION: usize = 32;

/// Events in this process, bounded in count and in bytes: at most `per_stream` events per
/// stream, the last 32 streams of each session, [`with_session_bytes`](Self::with_session_bytes)
/// per session (default 1 MiB) and [`with_total_bytes`](Self::with_total_bytes) in all
/// (default 64 MiB). The oldest go first; when the total is reached, the session keeping the
/// most gives up its oldest events. A client resuming from before an evicted event gets
/// nothing (`None`: the stream is forgotten), never a replay with a gap.
///
/// Only [`open`](EventStore::open) creates a session's entry: events appended or finished
/// for a session that was removed (a stream still running after `DELETE`) are dropped.
pub struct MemoryEventStore {
    per_stream: usize,
    session_bytes: usize,
    total_bytes: usize,
    logs: Mutex<Logs>,
}

impl MemoryEventStore {
    /// A store keeping at most `per_stream` events of each stream.
    pub fn new(per_stream: usize) -> Self {
        MemoryEventStore {
            per_stream: per_stream.max(1),
            session_bytes: 1024 * 1024,
            total_bytes: 64 * 1024 * 1024,
            logs: Mutex::new(Logs::default()),
        }
    }

    /// At most `bytes` of events kept per session (default 1 MiB).
    pub fn with_session_bytes(mut self, bytes: usize) -> Self {
        self.session_bytes = bytes;
        self
    }

    /// At most `bytes` of events kept in all (default 64 MiB).
    pub fn with_total_bytes(mut self, bytes: usize) -> Self {
        self.total_bytes = bytes;
        self
    }

    /// The stream's log, created (evicting the session's oldest stream past 32) if the
    /// session is known; `None` for a session never opened or already removed.
    /// `lost_through`: what a stream re-created here by an append, a finish or an open has
    /// lost, if the session forgot it earlier (ignored for a stream it never forgot): a
    /// forgotten stream heard of again must not replay its new events as if they were all
    /// there were.
    fn log<'a>(
        logs: &'a mut Logs,
        session: &str,
        stream: u64,
        lost_through: Option<u64>,
    ) -> Option<&'a mut StreamLog> {
        let session = logs.sessions.get_mut(session)?;
        let forgotten = !session.streams.contains_key(&stream)
            && session.forgotten_through.is_some_and(|f| stream <= f);
        if !session.streams.contains_key(&stream)
            && session.streams.len() >= STREAMS_PER_SESSION
            && let Some((id, oldest)) = session.streams.pop_first()
        {
            session.forgotten_through = session.forgotten_through.max(Some(id));
            let freed = oldest.bytes();
            session.bytes -= freed;
            logs.bytes -= freed;
            oldest.wake();
        }
        Some(session.streams.entry(stream).or_insert_with(|| StreamLog {
            evicted_through: lost_through.filter(|_| forgotten),
            ..StreamLog::default()
        }))
    }

    /// Evicts until the total is within bounds: from the session keeping the most.
    fn shrink_total(&self, logs: &mut Logs) {
        while logs.bytes > self.total_bytes {
            let Some(largest) = logs.sessions.values_mut().max_by_key(|s| s.bytes) else {
                return;
            };
            let target = largest.bytes.saturating_sub(logs.bytes - self.total_bytes);
            let freed = largest.shrink_to(target);
            logs.bytes -= freed;
            if freed == 0 {
                return;
            }
        }
    }
}

impl MemoryEventStore {
    fn open_now(&self, session: &str, stream: u64) {
        let mut logs = self.logs.lock().expect("event store lock");
        logs.sessions.entry(session.to_owned()).or_default();
        // A new stream has lost nothing. One this session forgot, opened again (stream ids are
        // not reused, so only a caller of the store's own can do it), has lost all it sent,
        // and no one knows up to which event: it replays nothing from before (F8).
        Self::log(&mut logs, session, stream, Some(u64::MAX));
    }

    fn append_now(&self, session: &str, stream: u64, seq: u64, event: Bytes) {
        let mut logs = self.logs.lock().expect("event store lock");
        let size = event.len();
        // Events before this one that the stream had are gone with it, if it was forgotten.
        let Some(log) = Self::log(&mut logs, session, stream, Some(seq.saturating_sub(1))) else {
            return; // removed (or never opened): nothing to keep it for
        };
        let mut freed = 0;
        if log.events.len() == self.per_stream {
            freed += log.evict_oldest();
        }
        log.events.push_back((seq, event));
        log.wake();
        logs.bytes = logs.bytes + size - freed;
        let entry = logs
            .sessions
            .get_mut(session)
            .expect("the session was there");
        entry.bytes = entry.bytes + size - freed;
        if entry.bytes > self.session_bytes {
            let freed = entry.shrink_to(self.session_bytes);
            logs.bytes -= freed;
        }
        if logs.bytes > self.total_bytes {
            self.shrink_total(&mut logs);
        }
    }

    fn finish_now(&self, session: &str, stream: u64) {
        let mut logs = self.logs.lock().expect("event store lock");
        // A forgotten stream that finishes: whatever it sent is gone, so nothing replays.
        if let Some(log) = Self::log(&mut logs, session, stream, Some(u64::MAX)) {
            log.finished = true;
            log.wake();
        }
    }

    fn replay_now(&self, session: &str, stream: u64, after: u64) -> Option<EventReplay> {
        let logs = self.logs.lock().expect("event store lock");
        let log = logs.sessions.get(session)?.streams.get(&stream)?;
        if log.evicted_through.is_some_and(|gone| after < gone) {
            return None;
        }
        Some(EventReplay {
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

    fn wait_now<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a> {
        let mut logs = self.logs.lock().expect("event store lock");
        let Some(log) = logs
            .sessions
            .get_mut(session)
            .and_then(|l| l.streams.get_mut(&stream))
        else {
            return Box::pin(std::future::ready(()));
        };
        if log.finished
            || log.events.back().is_some_and(|(seq, _)| *seq > after)
            || log.evicted_through.is_some_and(|gone| after < gone)
        {
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

    fn remove_session_now(&self, session: &str) {
        let removed = {
            let mut logs = self.logs.lock().expect("event store lock");
            let removed = logs.sessions.remove(session);
            if let Some(r) = &removed {
                logs.bytes -= r.bytes;
            }
            removed
        };
        for log in removed.iter().flat_map(|s| s.streams.values()) {
            log.wake();
        }
    }
}

// The work is done when the method is called: the future only hands the outcome over.
impl EventStore for MemoryEventStore {
    fn open<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        self.open_now(session, stream);
        ready(())
    }

    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        event: Bytes,
    ) -> EventFuture<'a, ()> {
        self.append_now(session, stream, seq, event);
        ready(())
    }

    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        self.finish_now(session, stream);
        ready(())
    }

    fn replay<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> EventFuture<'a, Option<EventReplay>> {
        ready(self.replay_now(session, stream, after))
    }

    fn wait<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a> {
        self.wait_now(session, stream, after)
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()> {
        self.remove_session_now(session);
        ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_what_came_after_and_stays_bounded() {
        let store = MemoryEventStore::new(2);
        store.open_now("s", 0);
        for seq in 1..=3 {
            store.append_now("s", 0, seq, Bytes::from(format!("e{seq}")));
        }
        store.append_now("s", 1, 4, Bytes::from_static(b"other stream"));
        let replay = |s: &str, stream, after| store.replay_now(s, stream, after).unwrap();
        let event = |seq, bytes: &'static [u8]| StoredEvent {
            seq,
            bytes: Bytes::from_static(bytes),
        };
        assert_eq!(
            replay("s", 0, 1).events,
            vec![event(2, b"e2"), event(3, b"e3")]
        );
        assert_eq!(replay("s", 0, 2).events, vec![event(3, b"e3")]);
        assert!(!replay("s", 0, 1).finished);
        assert_eq!(
            store.replay_now("s", 0, 0),
            None,
            "event 1 was evicted: a replay from before it would have a gap"
        );
        store.finish_now("s", 0);
        assert!(replay("s", 0, 3).finished);
        store.open_now("s", 9);
        assert_eq!(
            store.replay_now("s", 9, 0),
            Some(EventReplay::default()),
            "an opened stream is known"
        );
        assert_eq!(store.replay_now("s", 8, 0), None);
        store.remove_session_now("s");
        assert!(store.replay_now("s", 1, 0).is_none());
        for stream in 0..40 {
            store.open_now("t", stream);
            store.append_now("t", stream, stream + 1, Bytes::from_static(b"x"));
        }
        assert!(
            store.replay_now("t", 0, 0).is_none(),
            "the oldest streams go"
        );
        assert_eq!(store.replay_now("t", 39, 0).unwrap().events.len(), 1);
    }

    /// A stream still running after its session was removed (DELETE) used to re-create the
    /// session's entry, which nothing would remove again.
    /// Found by the `sse_event_id` fuzz target (F5 in FUZZING.md): a stream forgotten as the oldest of more
    /// than 32 in its session, then appended to again, replayed its new events alone, so a
    /// client resuming from an earlier event got a replay with a gap. It is refused now, as
    /// any stream that lost events is, and a finish of a forgotten stream replays nothing.
    #[test]
    fn a_forgotten_stream_heard_of_again_replays_no_gap() {
        let store = MemoryEventStore::new(8);
        store.open_now("s", 0);
        for seq in 1..=3 {
            store.append_now("s", 0, seq, Bytes::from_static(b"early"));
        }
        for stream in 1..=STREAMS_PER_SESSION as u64 {
            store.open_now("s", stream);
        }
        assert!(
            store.replay_now("s", 0, 0).is_none(),
            "stream 0 was forgotten"
        );
        store.append_now("s", 0, 4, Bytes::from_static(b"late"));
        assert!(store.replay_now("s", 0, 1).is_none(), "a replay with a gap");
        let after_three = store
            .replay_now("s", 0, 3)
            .expect("nothing missing after 3");
        assert_eq!(
            after_three.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [4]
        );
        for stream in 100..=100 + STREAMS_PER_SESSION as u64 {
            store.open_now("s", stream);
        }
        store.finish_now("s", 1);
        assert!(
            store.replay_now("s", 1, 0).is_none(),
            "a forgotten stream's end"
        );
    }

    /// F8 (fuzz target `sse_event_id`): a stream the session forgot, opened again, was
    /// re-created empty and replayed nothing where it had sent events: a replay with a gap.
    #[test]
    fn a_forgotten_stream_opened_again_replays_no_gap() {
        let store = MemoryEventStore::new(8);
        store.open_now("s", 0);
        store.append_now("s", 0, 1, Bytes::from_static(b"sent"));
        for stream in 1..=STREAMS_PER_SESSION as u64 {
            store.open_now("s", stream);
        }
        store.open_now("s", 0);
        assert!(
            store.replay_now("s", 0, 0).is_none(),
            "a replay of a forgotten stream opened again, without the event it sent"
        );
    }

    #[test]
    fn nothing_is_kept_for_a_removed_session() {
        let store = MemoryEventStore::new(8);
        store.open_now("s", 0);
        store.append_now("s", 0, 1, Bytes::from_static(b"e1"));
        store.remove_session_now("s");
        store.append_now("s", 0, 2, Bytes::from_static(b"e2"));
        store.finish_now("s", 0);
        assert_eq!(store.replay_now("s", 0, 0), None);
        let logs = store.logs.lock().unwrap();
        assert!(logs.sessions.is_empty());
        assert_eq!(logs.bytes, 0);
    }

    /// Events are bounded in bytes, per session and in all, not just in number (a 1 MB
    /// progress token × 256 events × 32 streams was 8 GB for one session).
    #[test]
    fn bytes_are_bounded_per_session_and_in_all() {
        let store = MemoryEventStore::new(256)
            .with_session_bytes(10_000)
            .with_total_bytes(25_000);
        let kib = || Bytes::from(vec![b'x'; 1000]);
        let mut seq = 0;
        for session in ["a", "b", "c"] {
            for stream in 0..4 {
                store.open_now(session, stream);
                for _ in 0..10 {
                    seq += 1;
                    store.append_now(session, stream, seq, kib());
                }
            }
        }
        // What each session really holds (the sizes of its events), against the bounds and
        // the store's own accounting.
        let logs = store.logs.lock().unwrap();
        let mut total = 0;
        for (name, session) in &logs.sessions {
            let held: usize = session.streams.values().map(StreamLog::bytes).sum();
            assert_eq!(held, session.bytes, "{name}");
            assert!(held <= 10_000, "{name}: {held}");
            total += held;
        }
        assert!(total <= 25_000, "{total}");
        assert!(total >= 20_000, "evicts only what it must: {total}");
        assert_eq!(logs.bytes, total);
        drop(logs);
        // The newest events survive: the last of the last stream of the last session.
        let last = store.replay_now("c", 3, seq - 1).unwrap();
        assert_eq!(last.events.len(), 1);
        // A client resuming the first stream of `a` from its start gets nothing, not a gap.
        assert_eq!(store.replay_now("a", 0, 0), None);
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
            ready(store.wait_now("s", 0, 0)),
            "an unknown stream has nothing to wait for"
        );
        store.open_now("s", 0);
        assert!(
            !ready(store.wait_now("s", 0, 0)),
            "an open, empty stream waits"
        );
        store.append_now("s", 0, 1, Bytes::from_static(b"e1"));
        assert!(
            ready(store.wait_now("s", 0, 0)),
            "an event after `after` is there"
        );
        assert!(
            !ready(store.wait_now("s", 0, 1)),
            "nothing after the last event yet"
        );

        // A waiter parked before the event is woken by it.
        let waiter = tokio::spawn({
            let store = store.clone();
            async move { store.wait_now("s", 0, 1).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        store.append_now("s", 0, 2, Bytes::from_static(b"e2"));
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("woken by append")
            .unwrap();

        let finished = tokio::spawn({
            let store = store.clone();
            async move { store.wait_now("s", 0, 2).await }
        });
        tokio::task::yield_now().await;
        store.finish_now("s", 0);
        tokio::time::timeout(std::time::Duration::from_secs(5), finished)
            .await
            .expect("woken by finish")
            .unwrap();

        store.open_now("s", 1);
        let removed = tokio::spawn({
            let store = store.clone();
            async move { store.wait_now("s", 1, 0).await }
        });
        tokio::task::yield_now().await;
        store.remove_session_now("s");
        tokio::time::timeout(std::time::Duration::from_secs(5), removed)
            .await
            .expect("woken by removal")
            .unwrap();
    }
}
