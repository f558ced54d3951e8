//! Session-era state over HTTP: one [`Session`] per `Mcp-Session-Id`, bounded in number and
//! idle time. Sessions live in this process; with a [`SessionStore`] they also live in the
//! store, and an instance that meets a session it does not hold restores it from there.

mod restore;
mod session;
mod store;
mod table;

pub(crate) use session::{Session, event_id};
#[allow(deprecated)]
pub use store::Touched;
pub use store::{
    MemorySessionStore, SessionFuture, SessionRecord, SessionStore, SessionStoreError, TouchOutcome,
};

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use self::restore::{RestoreGate, Restored, Restoring, record_of};
use self::table::Table;
use super::events::EventStore;
use super::route::RouteToken;
use crate::Server;
use crate::server::connection::{Connection, Wire};

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
        let refresh_at = self.now_ms() + u64::try_from(self.refresh().0.as_millis()).unwrap_or(0);
        Arc::new(Session::new(id, conn, legacy, owner, restored, refresh_at))
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
            Ok(TouchOutcome::Kept) => true,
            Ok(TouchOutcome::Missing) => {
                // Expired meanwhile, or the store lost it (a Redis restarted without
                // persistence): the session is alive here, so it is saved again.
                self.save(session).await;
                true
            }
            Ok(TouchOutcome::Removed) => {
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
        session.mark_ended();
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
        let mut ended = Vec::new();
        let mut map = self.table.lock().expect("sessions lock");
        map.by_id.retain(|id, s| {
            if s.busy() || s.idle_for(now) < self.idle {
                return true;
            }
            tracing::debug!(session = %id, "session expired");
            s.mark_ended();
            s.conn.cancel_all();
            ended.push(s.clone());
            gone.push((id.clone(), s.legacy.is_some()));
            false
        });
        drop(map);
        for (id, legacy) in &gone {
            if legacy | !self.shared() {
                self.forget_events(id);
            }
        }
        if !self.shared() {
            // Ended everywhere: its finished tasks go too.
            for s in &ended {
                s.conn.end_tasks();
            }
        }
        gone.into_iter().map(|(id, _)| id).collect()
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
}
