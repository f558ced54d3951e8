//! Session-era state over HTTP: one [`Connection`] per `Mcp-Session-Id`, bounded in number and
//! idle time. Sessions live in this process; a shared store (Redis, …) for scale-out would
//! replace [`Sessions`] behind the same calls.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use super::events::EventStore;
use crate::Server;
use crate::server::connection::{Connection, Wire};

/// One session: its connection, when it was last used, and its SSE streams.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) conn: Arc<Connection>,
    last_seen: Mutex<Instant>,
    /// Set on each use, cleared as the eviction clock passes (a second chance).
    used: AtomicBool,
    next_stream: AtomicU64,
    /// Event sequence numbers, unique across the session's streams.
    next_event: AtomicU64,
    /// Flips to `true` when the session ends, closing its streams.
    ended: tokio::sync::watch::Sender<bool>,
    /// For HTTP+SSE (2024-11-05) sessions: the one stream every response goes on.
    pub(crate) legacy: Option<mpsc::Sender<Bytes>>,
    /// SSE streams of the session open right now (a session with one is never evicted).
    open_streams: AtomicUsize,
    /// A digest of the caller that opened it: only that caller may use it.
    owner: Option<[u8; 32]>,
}

/// Counts an open SSE stream of its session while it lives.
pub(crate) struct StreamHold(Arc<Session>);

impl Drop for StreamHold {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Session {
    /// Marks an SSE stream of the session open until the hold is dropped.
    pub(crate) fn hold_stream(self: &Arc<Self>) -> StreamHold {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
        StreamHold(self.clone())
    }

    /// Whether the session is doing something for its client: a request running, an SSE
    /// stream open, or (HTTP+SSE) its one stream still connected.
    fn busy(&self) -> bool {
        self.conn.in_flight() > 0
            || self.conn.has_tasks()
            || self.open_streams.load(Ordering::Relaxed) > 0
            || self.legacy.as_ref().is_some_and(|tx| !tx.is_closed())
    }

    fn idle_for(&self, now: Instant) -> Duration {
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
            .is_some_and(|c| c.version >= crate::ProtocolVersion::V2025_11_25)
    }

    /// A new stream id, unique within the session.
    pub(crate) fn new_stream(&self) -> u64 {
        self.next_stream.fetch_add(1, Ordering::Relaxed)
    }

    /// Where a `Last-Event-ID` resumes: `(stream, after)` for an id of the form this session
    /// issues (`<stream>-<seq>`, both plain decimal) naming one of its streams; `None` for
    /// anything else, which resumes nothing (`0-garbage` used to replay stream 0 from its
    /// start, and `+0-1` was read as `0-1`).
    pub(crate) fn resume_point(&self, last_event_id: &str) -> Option<(u64, u64)> {
        let decimal = |s: &str| {
            (!s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u64>().ok())
                .flatten()
        };
        let (stream, seq) = last_event_id.split_once('-')?;
        let (stream, after) = (decimal(stream)?, decimal(seq)?);
        (stream < self.next_stream.load(Ordering::Relaxed)).then_some((stream, after))
    }

    /// An SSE event id `<stream>-<seq>`: it names its stream (the resumption cursor) and is
    /// unique across all of the session's streams. Returns the id and its `seq`.
    pub(crate) fn event_id(&self, stream: u64) -> (String, u64) {
        let seq = self.next_event.fetch_add(1, Ordering::Relaxed);
        (format!("{stream}-{seq}"), seq)
    }

    /// The priming event of `stream` (for resumable streams, of clients at 2025-11-25 or later:
    /// older SDKs fail on an event with empty data).
    pub(crate) fn priming(&self, stream: u64, retry: Duration) -> Option<Bytes> {
        self.primes()
            .then(|| super::body::priming(&self.event_id(stream).0, retry))
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

/// Why a session could not be created.
pub(crate) struct Full(pub(crate) usize);

/// The sessions of one HTTP server. Every way a session ends (DELETE, expiry, its HTTP+SSE
/// stream closing or falling behind) goes through [`Sessions::remove`] or [`Sessions::reap`],
/// which also forget its events.
pub(crate) struct Sessions {
    table: Mutex<Table>,
    max: usize,
    idle: Duration,
    events: Arc<dyn EventStore>,
}

/// The sessions by id, and the order the eviction clock visits them in.
#[derive(Default)]
struct Table {
    by_id: HashMap<String, Arc<Session>>,
    /// Ids in the order they were created (or last given a second chance); ids of sessions
    /// already gone are skipped when met, and swept out when they outnumber the live ones.
    clock: VecDeque<String>,
}

impl Table {
    /// The session to end to make room, by the CLOCK approximation of least-recently-used:
    /// from the oldest, a session used since the clock last passed gets a second chance (moves
    /// to the back, its mark cleared), a busy one is skipped, and the first that is neither is
    /// the one. At most two turns of the clock (amortized O(1) per eviction, where scanning
    /// every session cost ~0.7 ms per handshake at 10,000 under this lock: benches/soak).
    fn victim(&mut self) -> Option<Arc<Session>> {
        let mut visits = 2 * self.clock.len();
        while visits > 0 {
            visits -= 1;
            let id = self.clock.pop_front()?;
            let Some(session) = self.by_id.get(&id) else {
                continue; // gone already
            };
            if session.busy() || session.used.swap(false, Ordering::Relaxed) {
                self.clock.push_back(id);
                continue;
            }
            return self.by_id.remove(&id);
        }
        None
    }

    fn insert(&mut self, session: Arc<Session>) {
        // Ids of ended sessions stay in the clock until met: sweep them before they pile up.
        if self.clock.len() > 2 * self.by_id.len() + 64 {
            let live = &self.by_id;
            self.clock.retain(|id| live.contains_key(id));
        }
        self.clock.push_back(session.id.clone());
        self.by_id.insert(session.id.clone(), session);
    }
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration, events: Arc<dyn EventStore>) -> Arc<Sessions> {
        Arc::new(Sessions {
            table: Mutex::new(Table::default()),
            max,
            idle,
            events,
        })
    }

    /// Creates a session and lists it, in one step under the lock (so concurrent handshakes
    /// cannot overshoot the limit). At the limit, a session that is not busy (nothing running,
    /// no stream open) and has gone unused the longest, as a CLOCK sweep tells, is ended to
    /// make room: a flood of handshakes
    /// that are never used again cannot lock everyone out until they expire. `Full` only when
    /// every session is busy. A handshake that fails [`discard`](Self::discard)s its session.
    pub(crate) fn create(
        &self,
        server: &Server,
        legacy: Option<mpsc::Sender<Bytes>>,
        owner: Option<[u8; 32]>,
    ) -> Result<Arc<Session>, Full> {
        let session = Arc::new(Session {
            id: crate::id::random_id(),
            conn: Connection::new(server.clone(), Wire::HTTP),
            last_seen: Mutex::new(Instant::now()),
            used: AtomicBool::new(false),
            next_stream: AtomicU64::new(0),
            next_event: AtomicU64::new(0),
            ended: tokio::sync::watch::channel(false).0,
            legacy,
            open_streams: AtomicUsize::new(0),
            owner,
        });
        let evicted = {
            let mut map = self.table.lock().expect("sessions lock");
            let evicted = if map.by_id.len() >= self.max {
                Some(map.victim().ok_or(Full(self.max))?)
            } else {
                None
            };
            map.insert(session.clone());
            evicted
        };
        if let Some(old) = evicted {
            tracing::debug!(session = %old.id, "session limit reached: ending an idle session");
            self.end(&old);
        }
        Ok(session)
    }

    /// Ends a session whose handshake failed (it was never handed to the client).
    pub(crate) fn discard(&self, id: &str) {
        self.remove(id);
    }

    /// The session `id`, if `owner` (the caller's digest) is the one that opened it: to any
    /// other caller it does not exist (CVE-2026-33946, CVE-2026-52869).
    pub(crate) fn get(&self, id: &str, owner: Option<&[u8; 32]>) -> Option<Arc<Session>> {
        let session = self
            .table
            .lock()
            .expect("sessions lock")
            .by_id
            .get(id)
            .cloned()?;
        if session.owner.as_ref() != owner {
            return None;
        }
        session.touch();
        Some(session)
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let session = self.table.lock().expect("sessions lock").by_id.remove(id)?;
        self.end(&session);
        Some(session)
    }

    /// What ending a session (already out of the map) takes.
    fn end(&self, session: &Session) {
        session.ended.send_replace(true);
        session.conn.cancel_all();
        self.events.remove_session(&session.id);
    }

    /// Ends sessions idle for longer than the limit; returns their ids. A session with work
    /// running, or an HTTP+SSE session whose stream is still open, is not idle.
    pub(crate) fn reap(&self) -> Vec<String> {
        let now = Instant::now();
        let mut gone = Vec::new();
        let mut map = self.table.lock().expect("sessions lock");
        map.by_id.retain(|id, s| {
            if s.busy() || s.idle_for(now) < self.idle {
                return true;
            }
            tracing::debug!(session = %id, "session expired");
            s.ended.send_replace(true);
            s.conn.cancel_all();
            gone.push(id.clone());
            false
        });
        drop(map);
        for id in &gone {
            self.events.remove_session(id);
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::MemoryEventStore;

    #[test]
    fn only_ids_of_the_issued_form_resume() {
        let server = crate::Server::builder().build().unwrap();
        let sessions = Sessions::new(
            4,
            Duration::from_secs(60),
            Arc::new(MemoryEventStore::new(8)),
        );
        let session = sessions
            .create(&server, None, None)
            .unwrap_or_else(|_| unreachable!());
        let stream = session.new_stream();
        let (id, seq) = session.event_id(stream);
        assert_eq!(session.resume_point(&id), Some((stream, seq)));
        for garbage in [
            "0-garbage",
            "+0-1",
            "0-+1",
            "0-",
            "-1",
            "0",
            "1-0",
            "0-1-2",
            " 0-1",
        ] {
            assert_eq!(session.resume_point(garbage), None, "{garbage:?}");
        }
    }
}
