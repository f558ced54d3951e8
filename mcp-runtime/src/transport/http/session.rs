//! Session-era state over HTTP: one [`Connection`] per `Mcp-Session-Id`, bounded in number and
//! idle time. Sessions live in this process; with a [`SessionStore`] they also live in the
//! store, and an instance that meets a session it does not hold restores it from there.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use super::events::EventStore;
use super::route::RouteToken;
use super::session_store::{SessionRecord, SessionStore, SessionStoreError, Touched};
use crate::Server;
use crate::server::connection::{Connection, Wire};

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
    owner: Option<[u8; 32]>,
    /// With a session store: when the store's expiry is next pushed back (ms after the
    /// sessions' epoch), and whether the store holds the record (a failed save is retried
    /// then).
    refresh_at: AtomicU64,
    stored: AtomicBool,
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
            .then(|| super::body::priming(&event_id(stream, seq), retry))
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

/// Why a session could not be created.
pub(crate) struct Full(pub(crate) usize);

/// How a session lookup went wrong: the store failed, or the instance is full.
pub(crate) enum Lookup {
    Unavailable(SessionStoreError),
    Full(usize),
}

/// The most often the store's expiry of one session is pushed back.
const REFRESH_EVERY: Duration = Duration::from_secs(60);

/// The sessions of one HTTP server. Every way a session ends (DELETE, expiry, its HTTP+SSE
/// stream closing or falling behind) goes through [`Sessions::remove`] or [`Sessions::reap`],
/// which also forget its events.
pub(crate) struct Sessions {
    table: Mutex<Table>,
    max: usize,
    idle: Duration,
    events: Arc<dyn EventStore>,
    route: RouteToken,
    store: Option<Arc<dyn SessionStore>>,
    /// Restores under way, by id: concurrent requests of one unknown session restore it once.
    restoring: Restoring,
    epoch: Instant,
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
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn new(max: usize, idle: Duration, events: Arc<dyn EventStore>) -> Arc<Sessions> {
        Self::with_store(max, idle, events, None, None)
    }

    /// The sessions of an endpoint configured with `config`.
    pub(crate) fn for_config(config: &super::HttpConfig) -> Arc<Sessions> {
        Self::with_store(
            config.max_sessions,
            config.session_idle_timeout,
            config.events.clone(),
            config.route.clone(),
            config.sessions.clone(),
        )
    }

    fn with_store(
        max: usize,
        idle: Duration,
        events: Arc<dyn EventStore>,
        route: Option<RouteToken>,
        store: Option<Arc<dyn SessionStore>>,
    ) -> Arc<Sessions> {
        Arc::new(Sessions {
            table: Mutex::new(Table::default()),
            max,
            idle,
            events,
            route: route.unwrap_or_else(|| RouteToken::process_default().clone()),
            store,
            restoring: Mutex::default(),
            epoch: Instant::now(),
        })
    }

    /// Whether sessions are kept in a shared store (then they outlive this instance's copy).
    pub(crate) fn shared(&self) -> bool {
        self.store.is_some()
    }

    /// How often a session's expiry in the store is pushed back, and that expiry: the idle
    /// timeout from the last push, plus one interval (a session used just after a push must
    /// not expire before its idle timeout).
    fn refresh(&self) -> (Duration, Duration) {
        let every = (self.idle / 4).clamp(Duration::from_millis(100), REFRESH_EVERY);
        (every, self.idle + every)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn new_session(
        &self,
        id: String,
        conn: Arc<Connection>,
        legacy: Option<mpsc::Sender<Bytes>>,
        owner: Option<[u8; 32]>,
        restored: bool,
    ) -> Arc<Session> {
        // The same tasks on every instance that holds the session.
        conn.own_tasks_as_session(&id);
        let mut base = [0u8; 4];
        getrandom::fill(&mut base).expect("the OS random source works");
        let refresh_at = self.now_ms() + u64::try_from(self.refresh().0.as_millis()).unwrap_or(0);
        Arc::new(Session {
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
        })
    }

    /// Lists a session, ending the least recently used idle one at the limit.
    fn list(&self, session: &Arc<Session>) -> Result<(), Full> {
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
            // With a store, the session lives on there: only this copy goes.
            self.end(&old, !self.shared());
        }
        Ok(())
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
        let conn = Connection::new(server.clone(), Wire::HTTP);
        let session = self.new_session(self.route.session_id(), conn, legacy, owner, false);
        self.list(&session)?;
        Ok(session)
    }

    /// Saves a session whose handshake succeeded (or whose client changed what the record
    /// holds) to the store, if there is one. A failure is logged: the session still works on
    /// this instance, and the save is retried when its expiry is next pushed back.
    pub(crate) async fn save(&self, session: &Session) {
        let Some(store) = &self.store else { return };
        if session.legacy.is_some() {
            return; // an HTTP+SSE session lives and dies with its stream, here
        }
        let Some(record) = record_of(session) else {
            return;
        };
        match store.save(&session.id, &record, self.refresh().1).await {
            Ok(()) => session.stored.store(true, Ordering::Relaxed),
            Err(e) => {
                session.stored.store(false, Ordering::Relaxed);
                tracing::warn!(session = %session.id, error = %e, "could not save the session: it is not restorable elsewhere until the store is back");
            }
        }
    }

    /// Ends a session whose handshake failed (it was never handed to the client).
    pub(crate) fn discard(&self, id: &str) {
        self.remove(id);
    }

    /// The session `id`, if `owner` (the caller's digest) is the one that opened it: to any
    /// other caller it does not exist (CVE-2026-33946, CVE-2026-52869). With a store, a
    /// session this instance does not hold is restored from it (given `restore`, the server
    /// it runs on), and the store's
    /// expiry of one it holds is pushed back at most once a refresh interval.
    pub(crate) async fn get(
        &self,
        id: &str,
        owner: Option<&[u8; 32]>,
        restore: Option<&Server>,
    ) -> Result<Option<Arc<Session>>, Lookup> {
        let held = self
            .table
            .lock()
            .expect("sessions lock")
            .by_id
            .get(id)
            .cloned();
        let session = match (held, restore) {
            (Some(session), _) => session,
            // Only an id of the form this runtime mints can be in the store: anything else
            // costs no store lookup.
            (None, Some(server)) if self.store.is_some() && super::route::is_session_id(id) => {
                return self.restore(server, id, owner).await;
            }
            (None, _) => return Ok(None),
        };
        if session.owner.as_ref() != owner {
            return Ok(None);
        }
        session.touch();
        if !self.keep(&session).await {
            return Ok(None);
        }
        Ok(Some(session))
    }

    /// Pushes back the store's expiry of a session in use, when due; `false` when the store
    /// says it was removed (a `DELETE` through another instance), which ends this copy.
    async fn keep(&self, session: &Arc<Session>) -> bool {
        let Some(store) = &self.store else {
            return true;
        };
        if session.legacy.is_some() {
            return true;
        }
        let (every, ttl) = self.refresh();
        let now = self.now_ms();
        let due = session.refresh_at.load(Ordering::Relaxed);
        let next = now + u64::try_from(every.as_millis()).unwrap_or(u64::MAX);
        // One request of those arriving together does it.
        if now < due
            || session
                .refresh_at
                .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return true;
        }
        if !session.stored.load(Ordering::Relaxed) {
            self.save(session).await;
            return true;
        }
        match store.touch(&session.id, ttl).await {
            Ok(Touched::Kept) => true,
            Ok(Touched::Missing) => {
                // Expired meanwhile, or the store lost it (a Redis restarted without
                // persistence): the session is alive here, so it is saved again.
                self.save(session).await;
                true
            }
            Ok(Touched::Removed) => {
                tracing::debug!(session = %session.id, "session removed through another instance");
                self.remove_local(&session.id);
                false
            }
            Err(e) => {
                tracing::warn!(session = %session.id, error = %e, "could not push back the session's expiry in the store");
                true
            }
        }
    }

    /// Restores session `id` from the store: one restore per id at a time, the others wait
    /// for it and find it listed.
    async fn restore(
        &self,
        server: &Server,
        id: &str,
        owner: Option<&[u8; 32]>,
    ) -> Result<Option<Arc<Session>>, Lookup> {
        let store = self.store.as_ref().expect("only called with a store");
        let gate = RestoreGate::enter(&self.restoring, id);
        let restored = {
            let _one = gate.lock().await;
            let held = self
                .table
                .lock()
                .expect("sessions lock")
                .by_id
                .get(id)
                .cloned();
            match held {
                Some(session) => Ok(Some(session)),
                None => self.load(server, store.as_ref(), id).await,
            }
        };
        drop(gate);
        let Some(session) = restored? else {
            return Ok(None);
        };
        if session.owner.as_ref() != owner {
            return Ok(None);
        }
        session.touch();
        Ok(Some(session))
    }

    /// Loads and lists session `id`.
    async fn load(
        &self,
        server: &Server,
        store: &dyn SessionStore,
        id: &str,
    ) -> Result<Option<Arc<Session>>, Lookup> {
        let Some(record) = store.load(id).await.map_err(Lookup::Unavailable)? else {
            return Ok(None);
        };
        let Some(restored) = Restored::of(&record) else {
            tracing::warn!(session = %id, version = %record.protocol_version, "a stored session this version cannot restore");
            return Ok(None);
        };
        let conn = Connection::restore(
            server.clone(),
            Wire::HTTP,
            restored.client,
            restored.level,
            restored.subscriptions,
        );
        let session = self.new_session(id.to_owned(), conn, None, restored.owner, true);
        self.list(&session).map_err(|Full(max)| Lookup::Full(max))?;
        tracing::debug!(session = %id, "session restored from the store");
        Ok(Some(session))
    }

    /// Ends session `id` here (and its events), where it is the only copy: an HTTP+SSE
    /// session whose stream closed, a handshake that failed.
    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let session = self.table.lock().expect("sessions lock").by_id.remove(id)?;
        self.end(&session, true);
        Some(session)
    }

    /// Drops this instance's copy of a session that lives on in the store.
    fn remove_local(&self, id: &str) {
        if let Some(session) = self.table.lock().expect("sessions lock").by_id.remove(id) {
            self.end(&session, !self.shared());
        }
    }

    /// `DELETE`: ends session `id` of `owner` everywhere: here, in the store (which
    /// remembers the removal, so instances still holding it end theirs at their next
    /// refresh) and its events. `false` when there is no such session for this caller.
    pub(crate) async fn delete(&self, id: &str, owner: Option<&[u8; 32]>) -> Result<bool, Lookup> {
        let held = self
            .table
            .lock()
            .expect("sessions lock")
            .by_id
            .get(id)
            .cloned();
        let known = match (&held, &self.store) {
            (Some(session), _) => session.owner.as_ref() == owner,
            (None, Some(store)) if super::route::is_session_id(id) => store
                .load(id)
                .await
                .map_err(Lookup::Unavailable)?
                .and_then(|r| Restored::of(&r))
                .is_some_and(|r| r.owner.as_ref() == owner),
            (None, _) => false,
        };
        if !known {
            return Ok(false);
        }
        if let Some(store) = &self.store
            && held.as_ref().is_none_or(|s| s.legacy.is_none())
        {
            store
                .remove(id, self.refresh().1)
                .await
                .map_err(Lookup::Unavailable)?;
        }
        let removed = self.table.lock().expect("sessions lock").by_id.remove(id);
        if let Some(session) = removed {
            self.end(&session, false);
        }
        // Awaited, not spawned: once the client has its 200 the events are gone.
        self.events_forgotten(id.to_owned()).await;
        Ok(true)
    }

    /// What ending a session (already out of the map) takes; `everywhere` when no other
    /// copy lives on (then its events go too).
    fn end(&self, session: &Session, everywhere: bool) {
        session.ended.send_replace(true);
        session.conn.cancel_all();
        if everywhere {
            self.forget_events(&session.id);
        }
    }

    /// Removes session `id`'s events from the event store.
    fn events_forgotten(&self, id: String) -> impl Future<Output = ()> + Send + 'static {
        let events = self.events.clone();
        async move {
            if let Err(e) = events.remove_session(&id).await {
                tracing::warn!(session = %id, error = %e, "could not forget the session's events");
            }
        }
    }

    /// [`Self::events_forgotten`] in the background, for callers that cannot wait.
    fn forget_events(&self, id: &str) {
        let forget = self.events_forgotten(id.to_owned());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(forget);
            }
            Err(_) => tracing::debug!("no runtime: the session's events are left to expire"),
        }
    }

    /// Pushes back the store's expiry of the sessions this instance holds that are in use
    /// without requests touching them (a long call, an open GET stream, running tasks), so
    /// the store does not forget a session while it works; each at most once a refresh
    /// interval, as for requests. The reaper calls it.
    pub(crate) async fn keep_busy(&self) {
        if self.store.is_none() {
            return;
        }
        let busy: Vec<Arc<Session>> = self
            .table
            .lock()
            .expect("sessions lock")
            .by_id
            .values()
            .filter(|s| s.legacy.is_none() && s.busy())
            .cloned()
            .collect();
        for session in busy {
            self.keep(&session).await;
        }
    }

    /// Ends sessions idle for longer than the limit; returns their ids. A session with work
    /// running, or an HTTP+SSE session whose stream is still open, is not idle. With a store,
    /// only this copy ends: the store's own expiry ends the session.
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
            gone.push((id.clone(), s.legacy.is_some()));
            false
        });
        drop(map);
        for (id, legacy) in &gone {
            if legacy | !self.shared() {
                self.forget_events(id);
            }
        }
        gone.into_iter().map(|(id, _)| id).collect()
    }
}

/// Restores under way, by session id.
type Restoring = Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>;

/// One request's place in the restore of a session: requests for the same id take turns, and
/// the last to leave removes the entry, however it leaves (a request whose client went away
/// is dropped mid-restore). Every clone of an entry is taken and dropped under the map's lock,
/// so the count it reads is exact.
struct RestoreGate<'a> {
    restoring: &'a Restoring,
    id: &'a str,
    gate: Option<Arc<tokio::sync::Mutex<()>>>,
}

impl<'a> RestoreGate<'a> {
    fn enter(restoring: &'a Restoring, id: &'a str) -> RestoreGate<'a> {
        let gate = restoring
            .lock()
            .expect("restoring lock")
            .entry(id.to_owned())
            .or_default()
            .clone();
        RestoreGate {
            restoring,
            id,
            gate: Some(gate),
        }
    }

    async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.gate.as_ref().expect("held until dropped").lock().await
    }
}

impl Drop for RestoreGate<'_> {
    fn drop(&mut self) {
        let mut restoring = self.restoring.lock().expect("restoring lock");
        drop(self.gate.take());
        if restoring
            .get(self.id)
            .is_some_and(|gate| Arc::strong_count(gate) == 1)
        {
            restoring.remove(self.id);
        }
    }
}

/// The record of a session whose handshake succeeded.
fn record_of(session: &Session) -> Option<SessionRecord> {
    let client = session.conn.session()?;
    let mut subscriptions: Vec<String> = session
        .conn
        .subscriptions()
        .map(|s| {
            s.lock()
                .expect("subscriptions lock")
                .iter()
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    subscriptions.sort();
    Some(SessionRecord {
        v: 1,
        protocol_version: client.version.as_str().to_owned(),
        client_info: client.info.clone(),
        capabilities: client.capabilities.clone(),
        log_level: session.conn.log_level().as_str().to_owned(),
        subscriptions,
        owner: session.owner.map(|o| crate::id::hex(&o)),
    })
}

/// What a record restores.
struct Restored {
    client: crate::request::ClientInfo,
    level: crate::outbound::LogLevel,
    subscriptions: Vec<String>,
    owner: Option<[u8; 32]>,
}

impl Restored {
    /// `None` for a record this version cannot serve (an unknown protocol version, a
    /// malformed owner): the session is then unknown, and its client initializes again.
    fn of(record: &SessionRecord) -> Option<Restored> {
        let version = crate::protocol::ProtocolVersion::parse(&record.protocol_version)
            .filter(|v| v.era() == crate::protocol::Era::Session)?;
        let level = crate::outbound::LogLevel::parse(&record.log_level).ok()?;
        let owner = match &record.owner {
            None => None,
            Some(hex) => Some(parse_digest(hex)?),
        };
        Some(Restored {
            client: crate::request::ClientInfo {
                version,
                info: record.client_info.clone(),
                capabilities: record.capabilities.clone(),
            },
            level,
            subscriptions: record.subscriptions.clone(),
            owner,
        })
    }
}

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
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
        let id = event_id(stream, 7);
        assert_eq!(session.resume_point(&id, false), Some((stream, 7)));
        let never = event_id(stream + 1, 0);
        assert_eq!(session.resume_point(&never, false), None, "not opened yet");
        assert_eq!(
            session.resume_point(&never, true),
            Some((stream + 1, 0)),
            "with a shared store, another instance may have opened it"
        );
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
            assert_eq!(session.resume_point(garbage, false), None, "{garbage:?}");
        }
    }

    #[test]
    fn stream_ids_differ_between_copies_of_a_session() {
        let server = crate::Server::builder().build().unwrap();
        let sessions = Sessions::new(
            4,
            Duration::from_secs(60),
            Arc::new(MemoryEventStore::new(8)),
        );
        let a = sessions
            .create(&server, None, None)
            .unwrap_or_else(|_| unreachable!());
        let b = sessions
            .create(&server, None, None)
            .unwrap_or_else(|_| unreachable!());
        let (a0, a1, b0) = (a.new_stream(), a.new_stream(), b.new_stream());
        assert_eq!(a1, a0 + 1, "a copy's streams count up");
        assert_ne!(
            a0 & !0xffff_ffff,
            b0 & !0xffff_ffff,
            "random high bits per copy"
        );
    }

    #[test]
    fn digests_round_trip_through_hex() {
        let digest = [0xa5u8; 32];
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(parse_digest(&hex), Some(digest));
        assert_eq!(parse_digest(&hex[1..]), None);
        assert_eq!(parse_digest(&"zz".repeat(32)), None);
    }
}
