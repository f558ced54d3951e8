//! [`RedisStateGuard`]: the single-use guard for 2026-07-28 `requestState`, shared by every
//! instance of a fleet.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_runtime::request_state::{GuardFuture, RequestStateGuard};

use crate::Redis;

/// A [`RequestStateGuard`] in Redis: each state's nonce is recorded with one
/// `SET mcp:{fleet}:rs:{nonce} 1 NX PXAT <expiry>`, so a state is used once across the whole
/// fleet, and Redis forgets the nonce when the state expires.
///
/// While Redis is unreachable (a restart, a network split) every retry that carries a state
/// fails with -32603 instead of running unchecked, after at most the guard's
/// [`timeout`](Self::timeout) (default 2 s; the shared connection may otherwise hold a command
/// while it reconnects); the connection reconnects by itself, and retries succeed again once
/// it has. Without persistence, a Redis restart forgets the
/// nonces recorded before it: states issued before the restart may then be used once more,
/// within their TTL (`appendonly yes` closes that gap).
///
/// ```no_run
/// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = mcp_redis::Redis::connect("redis://127.0.0.1:6379", "weather").await?;
/// let server = mcp_runtime::Server::builder()
///     .name("weather")
///     .request_state_keys([[7u8; 32]]) // every instance holds the same ring
///     .request_state_guard(mcp_redis::RedisStateGuard::new(&redis))
///     .build()?;
/// # drop(server);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct RedisStateGuard {
    redis: Redis,
    timeout: Duration,
}

impl RedisStateGuard {
    /// A guard keeping its nonces in `redis`, under the fleet's prefix.
    pub fn new(redis: &Redis) -> RedisStateGuard {
        RedisStateGuard {
            redis: redis.clone(),
            timeout: Duration::from_secs(2),
        }
    }

    /// How long one check may wait for Redis before it fails (default 2 s). The runtime gives
    /// a guard 5 s at most.
    pub fn timeout(mut self, timeout: Duration) -> RedisStateGuard {
        self.timeout = timeout;
        self
    }
}

/// Milliseconds since the Unix epoch of `expires`, but at least a second from now: a record
/// written already expired would be gone at once, and the state could be used again.
fn expiry_ms(expires: SystemTime) -> u64 {
    let floor = SystemTime::now() + Duration::from_secs(1);
    expires
        .max(floor)
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl RequestStateGuard for RedisStateGuard {
    fn first_use<'a>(&'a self, id: &'a str, expires: SystemTime) -> GuardFuture<'a> {
        Box::pin(async move {
            let key = self.redis.key(&format!("rs:{id}"));
            let mut conn = self.redis.connection();
            // `OK` when the key was set (the first use), nil when it existed.
            let mut cmd = redis::cmd("SET");
            cmd.arg(&key)
                .arg(1)
                .arg("NX")
                .arg("PXAT")
                .arg(expiry_ms(expires));
            let set = cmd.query_async::<Option<String>>(&mut conn);
            match tokio::time::timeout(self.timeout, set).await {
                Ok(set) => Ok(set?.is_some()),
                Err(_) => Err(format!("Redis did not answer within {:?}", self.timeout).into()),
            }
        })
    }
}
