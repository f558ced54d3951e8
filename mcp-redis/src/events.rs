//! [`RedisEventStore`]: SSE events in Redis Streams, one stream key per SSE stream, so a
//! client resumes with `Last-Event-ID` on any instance.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcp_runtime::transport::http::{
    EventFuture, EventReplay, EventStore, EventStoreError, StoredEvent, WaitFuture,
};
use redis::AsyncCommands as _;
use redis::aio::MultiplexedConnection;

use crate::Redis;

/// Entry ids: the stream's opening is `0-1`, event `seq` is `1-<seq>`, its end `2-0`, so
/// `XRANGE (1-<after> +` is exactly "what came after `after`" (and the end, if recorded).
const OPENED: &str = "0-1";
const FINISHED: &str = "2-0";

/// How long an instance's lease lasts by default (renewed every third of it): a stream whose
/// producer stopped renewing for this long is treated as finished by whoever resumes it.
const LEASE: Duration = Duration::from_secs(15);

/// Blocking connections kept for waiting resumers when idle.
const IDLE_WAITERS: usize = 8;
/// Resumers waiting in `XREAD BLOCK` at once, each on a connection of its own; the others
/// poll (a replay every [`POLL`]) rather than open more connections to Redis.
const MAX_BLOCKING: usize = 64;
/// How often a resumer past [`MAX_BLOCKING`] looks for new events.
const POLL: Duration = Duration::from_millis(250);

/// An [`EventStore`] in Redis Streams, shared by a fleet.
///
/// - Each SSE stream is a Redis stream `mcp:{fleet}:events:{session}:{stream}`, created by
///   [`open`](EventStore::open) with a TTL (default 1 h), trimmed to about `max_len` entries
///   (default 1,000: `XADD … MAXLEN ~`). Entry ids are `1-<seq>`: a replay is
///   `XRANGE (1-<seq> +`, and one that would have a gap (trimmed events) is refused.
/// - One `XADD` per event, awaited before the event is sent to the client (`NOMKSTREAM`: an
///   event for a stream Redis lost, or for a removed session, creates nothing).
/// - A session's streams are listed in a set, so removing the session deletes them all.
/// - **A producer that dies does not leave resumers waiting forever**: every instance holds
///   a lease (`mcp:{fleet}:instance:{tag}`, 15 s renewed every 5 s:
///   [`with_lease`](Self::with_lease)) and tags its entries
///   with it; a replay of an unfinished stream whose producer's lease has lapsed reports the
///   stream finished after what was stored, so the resumer's SSE stream ends (within about
///   20 s of the producer's death) and the client retries its request.
/// - Waiting resumers block in `XREAD BLOCK` (a third of the lease at a time, at most 5 s) on connections of their own, not
///   on the shared multiplexed one (a blocking read would stall every other command there),
///   so a new event reaches a resumer on another instance at once; polling would cost a
///   command per interval per resumer and add its latency. At most 64 resumers of an
///   instance block at once (64 connections); more poll every 250 ms.
///
/// Build it inside a Tokio runtime: it spawns the task renewing the instance's lease (which
/// ends when the store is dropped).
pub struct RedisEventStore {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    /// This instance's lease tag, in every entry it writes.
    tag: String,
    max_len: usize,
    ttl: Duration,
    lease: Duration,
    /// When each stream's TTL was last set, for streams that outlive a quarter of it.
    expiries: Mutex<HashMap<String, Instant>>,
    waiters: Mutex<Vec<MultiplexedConnection>>,
    /// Permits to block in `XREAD` (one connection each).
    blocking: tokio::sync::Semaphore,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("tag", &self.inner.tag)
            .field("max_len", &self.inner.max_len)
            .field("ttl", &self.inner.ttl)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> EventStoreError {
    EventStoreError(format!("redis: {e}"))
}

fn random_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mixed = std::collections::hash_map::RandomState::new();
    use std::hash::BuildHasher as _;
    format!("{:016x}", mixed.hash_one((nanos, std::process::id())))
}

impl RedisEventStore {
    /// The store of `redis`'s fleet: streams of at most about 1,000 events, kept 1 h.
    pub fn new(redis: &Redis) -> RedisEventStore {
        let inner = Arc::new(Inner {
            redis: redis.clone(),
            tag: random_tag(),
            max_len: 1000,
            ttl: Duration::from_secs(3600),
            lease: LEASE,
            expiries: Mutex::default(),
            waiters: Mutex::default(),
            blocking: tokio::sync::Semaphore::new(MAX_BLOCKING),
        });
        tokio::spawn(renew(Arc::downgrade(&inner)));
        RedisEventStore { inner }
    }

    /// Keeps about `n` events per stream (at least 1; default 1,000).
    pub fn with_max_len(self, n: usize) -> RedisEventStore {
        self.rebuild(|i| i.max_len = n.max(1))
    }

    /// Keeps a stream for `ttl` after it opened or last finished (default 1 h).
    pub fn with_ttl(self, ttl: Duration) -> RedisEventStore {
        self.rebuild(|i| i.ttl = ttl.max(Duration::from_secs(1)))
    }

    /// How long the instance's lease lasts (default 15 s, at least 1 s; renewed every third
    /// of it): how soon a client resuming a stream of an instance that died gets the end of
    /// it rather than a wait.
    pub fn with_lease(self, lease: Duration) -> RedisEventStore {
        self.rebuild(|i| i.lease = lease.max(Duration::from_secs(1)))
    }

    fn rebuild(self, change: impl FnOnce(&mut Inner)) -> RedisEventStore {
        let old = &self.inner;
        let mut inner = Inner {
            redis: old.redis.clone(),
            tag: old.tag.clone(),
            max_len: old.max_len,
            ttl: old.ttl,
            lease: old.lease,
            expiries: Mutex::default(),
            waiters: Mutex::default(),
            blocking: tokio::sync::Semaphore::new(MAX_BLOCKING),
        };
        change(&mut inner);
        let inner = Arc::new(inner);
        tokio::spawn(renew(Arc::downgrade(&inner)));
        RedisEventStore { inner }
    }
}

/// Renews the instance's lease while the store lives.
async fn renew(inner: Weak<Inner>) {
    loop {
        let Some(store) = inner.upgrade() else { return };
        let mut conn = store.redis.connection();
        let (key, lease) = (store.lease_key(&store.tag), store.lease);
        drop(store);
        let millis = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
        let options = redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(millis));
        let set: Result<(), _> = conn.set_options(&key, 1, options).await;
        if let Err(e) = set {
            tracing::debug!(error = %e, "could not renew the event store's lease");
        }
        tokio::time::sleep(lease / 3).await;
    }
}

impl Inner {
    fn stream_key(&self, session: &str, stream: u64) -> String {
        self.redis.key(&format!("events:{session}:{stream}"))
    }

    fn index_key(&self, session: &str) -> String {
        self.redis.key(&format!("events:{session}"))
    }

    fn lease_key(&self, tag: &str) -> String {
        self.redis.key(&format!("instance:{tag}"))
    }

    /// How long one `XREAD BLOCK` of a waiting resumer lasts before the producer's lease is
    /// looked at again.
    fn block(&self) -> Duration {
        (self.lease / 3).clamp(Duration::from_millis(100), Duration::from_secs(5))
    }

    fn ttl_secs(&self) -> i64 {
        i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX)
    }

    /// `XADD key NOMKSTREAM MAXLEN ~ n id p <tag> [d <bytes>]`.
    fn xadd(&self, key: &str, id: &str, data: Option<&[u8]>) -> redis::Cmd {
        let mut cmd = redis::cmd("XADD");
        cmd.arg(key)
            .arg("NOMKSTREAM")
            .arg("MAXLEN")
            .arg("~")
            .arg(self.max_len)
            .arg(id)
            .arg("p")
            .arg(&self.tag);
        if let Some(data) = data {
            cmd.arg("d").arg(data);
        }
        cmd
    }

    /// Whether the stream's TTL should be set again with this append (it has lived a
    /// quarter of it since it was last set).
    fn due_expiry(&self, key: &str) -> bool {
        let mut expiries = self.expiries.lock().expect("expiries lock");
        let now = Instant::now();
        match expiries.get_mut(key) {
            Some(at) if now.duration_since(*at) < self.ttl / 4 => false,
            Some(at) => {
                *at = now;
                true
            }
            None => {
                expiries.insert(key.to_owned(), now);
                false
            }
        }
    }

    async fn open(&self, session: &str, stream: u64) -> Result<(), EventStoreError> {
        let key = self.stream_key(session, stream);
        {
            let mut expiries = self.expiries.lock().expect("expiries lock");
            let ttl = self.ttl;
            expiries.retain(|_, at| at.elapsed() < ttl);
            expiries.insert(key.clone(), Instant::now());
        }
        let mut add = redis::cmd("XADD");
        add.arg(&key).arg(OPENED).arg("p").arg(&self.tag);
        let index = self.index_key(session);
        let mut conn = self.redis.connection();
        redis::pipe()
            .add_command(add)
            .ignore()
            .expire(&key, self.ttl_secs())
            .ignore()
            .sadd(&index, stream)
            .ignore()
            .expire(&index, self.ttl_secs())
            .ignore()
            .query_async::<()>(&mut conn)
            .await
            .map_err(failed)
    }

    async fn append(
        &self,
        session: &str,
        stream: u64,
        seq: u64,
        event: Bytes,
    ) -> Result<(), EventStoreError> {
        let key = self.stream_key(session, stream);
        let add = self.xadd(&key, &format!("1-{seq}"), Some(&event));
        let mut conn = self.redis.connection();
        if self.due_expiry(&key) {
            let index = self.index_key(session);
            redis::pipe()
                .add_command(add)
                .ignore()
                .expire(&key, self.ttl_secs())
                .ignore()
                .expire(&index, self.ttl_secs())
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(failed)
        } else {
            add.query_async::<()>(&mut conn).await.map_err(failed)
        }
    }

    async fn finish(&self, session: &str, stream: u64) -> Result<(), EventStoreError> {
        let key = self.stream_key(session, stream);
        self.expiries.lock().expect("expiries lock").remove(&key);
        let mut conn = self.redis.connection();
        redis::pipe()
            .add_command(self.xadd(&key, FINISHED, None))
            .ignore()
            .expire(&key, self.ttl_secs())
            .ignore()
            .query_async::<()>(&mut conn)
            .await
            .map_err(failed)
    }

    async fn replay(
        &self,
        session: &str,
        stream: u64,
        after: u64,
    ) -> Result<Option<EventReplay>, EventStoreError> {
        if after == u64::MAX {
            // No event can follow (its seq would not fit): the id is not one this store gave.
            return Ok(None);
        }
        let key = self.stream_key(session, stream);
        let mut conn = self.redis.connection();
        let (entries, last): (Vec<Entry>, Vec<Entry>) = redis::pipe()
            .xrange(&key, format!("(1-{after}"), "+")
            .xrevrange_count(&key, "+", "-", 1)
            .query_async(&mut conn)
            .await
            .map_err(failed)?;
        let Some((_, newest)) = last.first() else {
            return Ok(None); // never opened, expired, removed, or lost by Redis
        };
        let mut replay = EventReplay::default();
        let mut previous = after;
        for (id, fields) in entries {
            if id == FINISHED {
                replay.finished = true;
                break;
            }
            let seq = id
                .strip_prefix("1-")
                .and_then(|s| s.parse::<u64>().ok())
                .ok_or_else(|| EventStoreError(format!("unexpected entry {id} in {key}")))?;
            if previous.checked_add(1) != Some(seq) {
                return Ok(None); // trimmed or never stored: a replay would have a gap
            }
            previous = seq;
            let bytes = fields.get("d").cloned().unwrap_or_default();
            replay.events.push(StoredEvent {
                seq,
                bytes: Bytes::from(bytes),
            });
        }
        if !replay.finished {
            let producer = newest
                .get("p")
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .unwrap_or_default();
            let alive: bool = conn
                .exists(self.lease_key(&producer))
                .await
                .map_err(failed)?;
            if !alive {
                tracing::debug!(stream = %key, "the stream's producer is gone: its replay ends here");
                replay.finished = true;
            }
        }
        Ok(Some(replay))
    }

    async fn wait(&self, session: &str, stream: u64, after: u64) {
        if after == u64::MAX {
            return; // nothing can follow: the replay says the stream is unknown
        }
        let Ok(_permit) = self.blocking.try_acquire() else {
            tokio::time::sleep(POLL).await;
            return;
        };
        let key = self.stream_key(session, stream);
        let pooled = self.waiters.lock().expect("waiters lock").pop();
        let mut conn = match pooled {
            Some(conn) => conn,
            None => {
                let config = redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(Duration::from_secs(2)))
                    .set_response_timeout(Some(self.block() + Duration::from_secs(2)));
                match self
                    .redis
                    .client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                {
                    Ok(conn) => conn,
                    Err(e) => {
                        tracing::debug!(error = %e, "no connection to wait on: polling");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        return;
                    }
                }
            }
        };
        let read: Result<redis::Value, _> = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(u64::try_from(self.block().as_millis()).unwrap_or(5000))
            .arg("STREAMS")
            .arg(&key)
            .arg(format!("1-{after}"))
            .query_async(&mut conn)
            .await;
        match read {
            Ok(_) => {
                let mut waiters = self.waiters.lock().expect("waiters lock");
                if waiters.len() < IDLE_WAITERS {
                    waiters.push(conn);
                }
            }
            Err(e) => {
                // The connection is dropped; the caller replays (and sees the error, if any).
                tracing::debug!(error = %e, "waiting on an event stream failed");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    async fn remove_session(&self, session: &str) -> Result<(), EventStoreError> {
        let index = self.index_key(session);
        let mut conn = self.redis.connection();
        let streams: Vec<u64> = conn.smembers(&index).await.map_err(failed)?;
        let mut pipe = redis::pipe();
        pipe.del(&index).ignore();
        for stream in streams {
            let key = self.stream_key(session, stream);
            self.expiries.lock().expect("expiries lock").remove(&key);
            pipe.del(key).ignore();
        }
        pipe.query_async::<()>(&mut conn).await.map_err(failed)
    }
}

/// One stream entry: its id and fields.
type Entry = (String, HashMap<String, Vec<u8>>);

impl EventStore for RedisEventStore {
    fn open<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        Box::pin(self.inner.open(session, stream))
    }

    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        event: Bytes,
    ) -> EventFuture<'a, ()> {
        Box::pin(self.inner.append(session, stream, seq, event))
    }

    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        Box::pin(self.inner.finish(session, stream))
    }

    fn replay<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> EventFuture<'a, Option<EventReplay>> {
        Box::pin(self.inner.replay(session, stream, after))
    }

    fn wait<'a>(&'a self, session: &'a str, stream: u64, after: u64) -> WaitFuture<'a> {
        Box::pin(self.inner.wait(session, stream, after))
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()> {
        Box::pin(self.inner.remove_session(session))
    }
}
