//! [`RedisSessionStore`]: session-era sessions in Redis, one string key per session.

use std::sync::LazyLock;
use std::time::Duration;

use mcp_runtime::transport::http::{
    SessionFuture, SessionRecord, SessionStore, SessionStoreError, TouchOutcome,
};
use redis::{AsyncCommands as _, Script};

use crate::Redis;

/// A [`SessionStore`] in Redis: the record of session `id` is the JSON string key
/// `mcp:{fleet}:session:{id}` with a millisecond expiry (`SET … PX`); a removal leaves
/// `mcp:{fleet}:session-gone:{id}` for as long, so instances still holding the session learn
/// of it when they next push its expiry back, and cannot save it again meanwhile (a removed
/// session is never restored).
///
/// Commands: one script call (`EVALSHA`: `EXISTS` the removal, else `SET … PX`) per session
/// created (and per `logging/setLevel` or `resources/(un)subscribe`; the first call on a
/// Redis also loads the script), one `PEXPIRE` per session in use per refresh interval (at
/// most a minute), one `GET` per restore, `DEL` + `SET` per `DELETE`.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_redis::RedisError> {
/// use std::sync::Arc;
/// let redis = mcp_redis::Redis::connect("redis://127.0.0.1:6379", "prod").await?;
/// let config = mcp_runtime::transport::HttpConfig::new("0.0.0.0:8000")
///     .session_store(Arc::new(mcp_redis::RedisSessionStore::new(&redis)));
/// # let _ = config; Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct RedisSessionStore {
    redis: Redis,
}

impl RedisSessionStore {
    /// The store of `redis`'s fleet.
    pub fn new(redis: &Redis) -> RedisSessionStore {
        RedisSessionStore {
            redis: redis.clone(),
        }
    }

    fn record_key(&self, id: &str) -> String {
        self.redis.key(&format!("session:{id}"))
    }

    fn gone_key(&self, id: &str) -> String {
        self.redis.key(&format!("session-gone:{id}"))
    }
}

/// Saves a record (`KEYS[1]`: `ARGV[1]`, expiring in `ARGV[2]` ms) unless the session's removal
/// (`KEYS[2]`) is remembered: checked and written in one step, so a save racing a `DELETE`
/// on another instance cannot land after it.
static SAVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
",
    )
});

fn failed(e: redis::RedisError) -> SessionStoreError {
    SessionStoreError(format!("redis: {e}"))
}

/// A TTL as Redis milliseconds (at least 1: 0 would be refused).
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SessionStore for RedisSessionStore {
    fn save<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> SessionFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.redis.connection();
            SAVE.key(self.record_key(id))
                .key(self.gone_key(id))
                .arg(record.to_json())
                .arg(millis(ttl))
                .invoke_async::<()>(&mut conn)
                .await
                .map_err(failed)
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> SessionFuture<'a, Option<SessionRecord>> {
        Box::pin(async move {
            let mut conn = self.redis.connection();
            let text: Option<String> = conn.get(self.record_key(id)).await.map_err(failed)?;
            text.map(|t| SessionRecord::from_json(&t)).transpose()
        })
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> SessionFuture<'a, TouchOutcome> {
        Box::pin(async move {
            let mut conn = self.redis.connection();
            let kept: bool = conn
                .pexpire(
                    self.record_key(id),
                    millis(ttl).try_into().unwrap_or(i64::MAX),
                )
                .await
                .map_err(failed)?;
            if kept {
                return Ok(TouchOutcome::Kept);
            }
            let gone: bool = conn.exists(self.gone_key(id)).await.map_err(failed)?;
            Ok(if gone {
                TouchOutcome::Removed
            } else {
                TouchOutcome::Missing
            })
        })
    }

    fn remove<'a>(&'a self, id: &'a str, ttl: Duration) -> SessionFuture<'a, ()> {
        Box::pin(async move {
            let mut conn = self.redis.connection();
            redis::pipe()
                .del(self.record_key(id))
                .ignore()
                .set_options(
                    self.gone_key(id),
                    1,
                    redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(millis(ttl))),
                )
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(failed)
        })
    }
}
