//! Where session-era sessions are kept so that any instance of a fleet can serve them: the
//! [`SessionStore`] trait, the [`SessionRecord`] it keeps and the in-memory
//! [`MemorySessionStore`].

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The future a [`SessionStore`] method returns.
pub type SessionFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, SessionStoreError>> + Send + 'a>>;

/// Why a session store failed (a lost connection, a refused write, a record it cannot read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionStoreError(pub String);

impl std::fmt::Display for SessionStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "session store unavailable: {}", self.0)
    }
}

impl std::error::Error for SessionStoreError {}

/// What a session's `initialize` established, and what the client changed since: enough for
/// another instance to serve the session's next request. It holds no credential: the caller
/// it is bound to is a SHA-256 digest (of the principal's issuer and subject with the `auth`
/// feature, else of the caller identity, by default the `Authorization` header).
///
/// Stores keep it as an opaque value (serde: JSON with [`SessionRecord::to_json`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The format's version (1).
    pub(crate) v: u32,
    pub(crate) protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_info: Option<Value>,
    pub(crate) capabilities: Value,
    pub(crate) log_level: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) subscriptions: Vec<String>,
    /// The owner digest as hex, if the session is bound to a caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
}

impl SessionRecord {
    /// The record as JSON (what [`from_json`](Self::from_json) reads back).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record serializes")
    }

    /// A record from its JSON; an error for anything else (or a format this version does not
    /// know).
    pub fn from_json(text: &str) -> Result<SessionRecord, SessionStoreError> {
        let record: SessionRecord = serde_json::from_str(text)
            .map_err(|e| SessionStoreError(format!("unreadable session record: {e}")))?;
        if record.v != 1 {
            return Err(SessionStoreError(format!(
                "session record format {} is not known to this version",
                record.v
            )));
        }
        Ok(record)
    }

    /// The protocol version the session speaks (`2025-11-25`, …).
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }
}

/// What [`SessionStore::touch`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TouchOutcome {
    /// The record is there; its expiry was pushed back.
    Kept,
    /// The session was [removed](SessionStore::remove) (a `DELETE` on some instance).
    Removed,
    /// The store has no record and no removal (it expired, or the store lost its data, as a
    /// Redis without persistence does when it restarts): the instance saves it again.
    Missing,
}

/// The 0.1 name of [`TouchOutcome`].
#[doc(hidden)]
#[deprecated(note = "renamed to `TouchOutcome`")]
pub type Touched = TouchOutcome;

/// Keeps session-era sessions for a fleet, so an instance that does not know a session
/// restores it from here instead of answering 404. Set with
/// [`HttpConfig::session_store`](crate::transport::http::HttpConfig::session_store); without one
/// (the default), sessions live in their instance only.
///
/// What is stored is small and written rarely: [`save`](Self::save) once per session
/// created and when the client changes its log level or resource subscriptions,
/// [`touch`](Self::touch) at most once a minute per session in use (a sliding expiry of the
/// session idle timeout), [`load`](Self::load) when an instance meets a session it does not
/// hold, [`remove`](Self::remove) on `DELETE`.
///
/// What does not move between instances: requests in flight and the server's own requests
/// to the client (elicitation, sampling, roots) wait on the instance that started them, and
/// fail if it goes away (the client retries); an open SSE stream does too (the client
/// resumes it elsewhere with `Last-Event-ID` when the [`EventStore`](crate::transport::http::EventStore) is
/// shared). Keep routing a session to one instance (a route token in its id,
/// [`HttpConfig::route_token`](crate::transport::http::HttpConfig::route_token)); the store is
/// what survives a failover.
pub trait SessionStore: Send + Sync + 'static {
    /// Creates or replaces the record of session `id`, to expire `ttl` from now unless saved
    /// or touched again. A removed id stays removed: while its removal is remembered, `save`
    /// does nothing (an instance still holding a copy of a session deleted through another
    /// must not bring it back; ids are never reused).
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> SessionFuture<'a, ()>;
    /// The record of session `id`; `None` when it is not there (never saved, expired or
    /// removed).
    fn load<'a>(&'a self, id: &'a str) -> SessionFuture<'a, Option<SessionRecord>>;
    /// Pushes the record's expiry back to `ttl` from now, and says whether it was there.
    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> SessionFuture<'a, TouchOutcome>;
    /// Removes the record of session `id`, and remembers the removal for `ttl` (so
    /// [`touch`](Self::touch) from an instance still holding the session says
    /// [`TouchOutcome::Removed`]).
    fn remove<'a>(&'a self, id: &'a str, ttl: Duration) -> SessionFuture<'a, ()>;
}

/// A [`SessionStore`] in this process: for tests, and for several servers in one process.
/// Expired entries are dropped as they are met and on every save.
#[derive(Default)]
pub struct MemorySessionStore {
    entries: Mutex<HashMap<String, (Option<SessionRecord>, Instant)>>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        MemorySessionStore::default()
    }

    /// How many records (not removals) it holds that have not expired.
    pub fn len(&self) -> usize {
        let now = Instant::now();
        let entries = self.entries.lock().expect("session store lock");
        entries
            .values()
            .filter(|(r, until)| r.is_some() && *until > now)
            .count()
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> SessionFuture<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl SessionStore for MemorySessionStore {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> SessionFuture<'a, ()> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("session store lock");
        entries.retain(|_, (_, until)| *until > now);
        if !matches!(entries.get(id), Some((None, _))) {
            entries.insert(id.to_owned(), (Some(record.clone()), now + ttl));
        }
        ready(())
    }

    fn load<'a>(&'a self, id: &'a str) -> SessionFuture<'a, Option<SessionRecord>> {
        let now = Instant::now();
        let entries = self.entries.lock().expect("session store lock");
        let found = entries
            .get(id)
            .filter(|(_, until)| *until > now)
            .and_then(|(r, _)| r.clone());
        ready(found)
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> SessionFuture<'a, TouchOutcome> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("session store lock");
        let touched = match entries.get_mut(id).filter(|(_, until)| *until > now) {
            Some((Some(_), until)) => {
                *until = now + ttl;
                TouchOutcome::Kept
            }
            Some((None, _)) => TouchOutcome::Removed,
            None => TouchOutcome::Missing,
        };
        ready(touched)
    }

    fn remove<'a>(&'a self, id: &'a str, ttl: Duration) -> SessionFuture<'a, ()> {
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("session store lock");
        entries.insert(id.to_owned(), (None, now + ttl));
        ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> SessionRecord {
        SessionRecord {
            v: 1,
            protocol_version: "2025-11-25".into(),
            client_info: Some(serde_json::json!({"name": "c", "version": "1"})),
            capabilities: serde_json::json!({}),
            log_level: "info".into(),
            subscriptions: vec!["file:///a".into()],
            owner: Some("ab".repeat(32)),
        }
    }

    #[test]
    fn records_round_trip_and_bad_ones_are_errors() {
        let r = record();
        assert_eq!(SessionRecord::from_json(&r.to_json()).unwrap(), r);
        for bad in [
            "",
            "{}",
            "[1]",
            r#"{"v":2,"protocolVersion":"x","capabilities":{},"logLevel":"info"}"#,
        ] {
            assert!(SessionRecord::from_json(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn saves_loads_touches_removes_and_expires() {
        let store = MemorySessionStore::new();
        let ttl = Duration::from_secs(60);
        assert_eq!(store.load("s").await.unwrap(), None);
        assert_eq!(store.touch("s", ttl).await.unwrap(), TouchOutcome::Missing);
        store.save("s", &record(), ttl).await.unwrap();
        assert_eq!(store.load("s").await.unwrap(), Some(record()));
        assert_eq!(store.touch("s", ttl).await.unwrap(), TouchOutcome::Kept);
        store.remove("s", ttl).await.unwrap();
        assert_eq!(store.load("s").await.unwrap(), None);
        assert_eq!(store.touch("s", ttl).await.unwrap(), TouchOutcome::Removed);
        assert!(store.is_empty());
        store.save("s", &record(), ttl).await.unwrap();
        assert_eq!(
            store.load("s").await.unwrap(),
            None,
            "a removed id stays removed"
        );
        assert_eq!(store.touch("s", ttl).await.unwrap(), TouchOutcome::Removed);
        store
            .save("t", &record(), Duration::from_millis(30))
            .await
            .unwrap();
        assert_eq!(store.len(), 1);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert_eq!(store.load("t").await.unwrap(), None, "expired");
        assert_eq!(store.touch("t", ttl).await.unwrap(), TouchOutcome::Missing);
    }
}
