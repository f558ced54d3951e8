//! One session-era session over HTTP: its connection, when it was last used, and its SSE
//! streams (their ids, where a `Last-Event-ID` resumes, their priming event).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::server::connection::Connection;

/// One session: its connection, when it was last used, and its SSE streams.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) conn: Arc<Connection>,
    last_seen: Mutex<Instant>,
    /// Set on each use, cleared as the eviction clock passes (a second chance).
    used: AtomicBool,
    /// Random high bits of this copy's stream ids: a session restored on another instance
    /// (or again here) never reuses the ids of streams an earlier copy opened.
    stream_base: u64,
    next_stream: AtomicU64,
    /// Flips to `true` when the session ends, closing its streams.
    ended: tokio::sync::watch::Sender<bool>,
    /// For HTTP+SSE (2024-11-05) sessions: the one stream every response goes on.
    pub(crate) legacy: Option<mpsc::Sender<Bytes>>,
    /// SSE streams of the session open right now (a session with one is never evicted).
    open_streams: AtomicUsize,
    /// A digest of the caller that opened it: only that caller may use it.
    pub(super) owner: Option<[u8; 32]>,
    /// With a session store: when the store's expiry is next pushed back (ms after the
    /// sessions' epoch), and whether the store holds the record (a failed save is retried
    /// then).
    pub(super) refresh_at: AtomicU64,
    pub(super) stored: AtomicBool,
    /// Whether this copy came from the store (its streams may have been opened elsewhere).
    restored: bool,
}

/// Counts an open SSE stream of its session while it lives.
pub(crate) struct StreamHold(Arc<Session>);

impl Drop for StreamHold {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Session {
    /// A session of `conn`, listed nowhere yet; `refresh_at` is when the store's expiry of it
    /// is first pushed back (ms after the sessions' epoch).
    pub(super) fn new(
        id: String,
        conn: Arc<Connection>,
        legacy: Option<mpsc::Sender<Bytes>>,
        owner: Option<[u8; 32]>,
        restored: bool,
        refresh_at: u64,
    ) -> Session {
        let mut base = [0u8; 4];
        getrandom::fill(&mut base).expect("the OS random source works");
        Session {
            id,
            conn,
            last_seen: Mutex::new(Instant::now()),
            used: AtomicBool::new(false),
            stream_base: u64::from(u32::from_be_bytes(base)) << 32,
            next_stream: AtomicU64::new(0),
            ended: tokio::sync::watch::channel(false).0,
            legacy,
            open_streams: AtomicUsize::new(0),
            owner,
            refresh_at: AtomicU64::new(refresh_at),
            stored: AtomicBool::new(restored),
            restored,
        }
    }

    /// Whether it was used since the eviction clock last passed; clears the mark.
    pub(super) fn take_used(&self) -> bool {
        self.used.swap(false, Ordering::Relaxed)
    }

    /// Ends the session's streams: nothing more is recorded for it.
    pub(super) fn mark_ended(&self) {
        self.ended.send_replace(true);
    }

    /// Marks an SSE stream of the session open until the hold is dropped.
    pub(crate) fn hold_stream(self: &Arc<Self>) -> StreamHold {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
        StreamHold(self.clone())
    }

    /// Whether the session is doing something for its client: a request running, an SSE
    /// stream open, or (HTTP+SSE) its one stream still connected.
    pub(super) fn busy(&self) -> bool {
        self.conn.in_flight() > 0
            || self.conn.has_tasks()
            || self.open_streams.load(Ordering::Relaxed) > 0
            || self.legacy.as_ref().is_some_and(|tx| !tx.is_closed())
    }

    pub(super) fn idle_for(&self, now: Instant) -> Duration {
        now.duration_since(*self.last_seen.lock().expect("session lock"))
    }

    pub(crate) fn touch(&self) {
        self.used.store(true, Ordering::Relaxed);
        *self.last_seen.lock().expect("session lock") = Instant::now();
    }

    /// Whether its streams start with a priming event: only for 2025-11-25 and later (older
    /// SDK clients fail on an event with empty data).
    pub(crate) fn primes(&self) -> bool {
        self.conn
            .session()
            .is_some_and(|c| c.version >= crate::protocol::ProtocolVersion::V2025_11_25)
    }

    /// A new stream id: unique within the session, on every instance it is served by.
    pub(crate) fn new_stream(&self) -> u64 {
        self.stream_base | (self.next_stream.fetch_add(1, Ordering::Relaxed) & 0xffff_ffff)
    }

    /// Where a `Last-Event-ID` resumes: `(stream, after)` for an id of the form streams issue
    /// (`<stream>-<seq>`, both plain decimal) naming one of the session's streams; `None` for
    /// anything else, which resumes nothing (`0-garbage` used to replay stream 0 from its
    /// start, and `+0-1` was read as `0-1`). A session in a shared store may have streams
    /// opened by other instances: there the event store alone says which it knows.
    pub(crate) fn resume_point(&self, last_event_id: &str, shared: bool) -> Option<(u64, u64)> {
        let decimal = |s: &str| {
            (!s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u64>().ok())
                .flatten()
        };
        let (stream, seq) = last_event_id.split_once('-')?;
        let (stream, after) = (decimal(stream)?, decimal(seq)?);
        let ours = stream & !0xffff_ffff == self.stream_base
            && (stream & 0xffff_ffff) < self.next_stream.load(Ordering::Relaxed);
        (ours || shared || self.restored).then_some((stream, after))
    }

    /// The priming event of a stream whose position is `<stream>-<seq>` (for resumable
    /// streams, of clients at 2025-11-25 or later: older SDKs fail on an event with empty
    /// data).
    pub(crate) fn priming(&self, stream: u64, seq: u64, retry: Duration) -> Option<Bytes> {
        self.primes()
            .then(|| crate::transport::http::body::priming(&event_id(stream, seq), retry))
    }

    /// Completes when the session ends (DELETE, expiry, shutdown of its legacy stream).
    pub(crate) fn ended(&self) -> tokio::sync::watch::Receiver<bool> {
        self.ended.subscribe()
    }

    /// Whether the session has ended: nothing more is recorded for it.
    pub(crate) fn is_ended(&self) -> bool {
        *self.ended.borrow()
    }
}

/// An SSE event id, `<stream>-<seq>`: it names its stream (the resumption cursor) and the
/// event's place in it (the priming event is 0, the first message 1).
pub(crate) fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}-{seq}")
}
