//! The connection every store shares.

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// Why connecting to Redis failed.
pub type RedisError = redis::RedisError;

/// A handle on one Redis server: a multiplexed connection (it pipelines the commands of every
/// store and reconnects by itself after Redis restarts) and the fleet's key prefix. Cheap to
/// clone.
#[derive(Clone)]
pub struct Redis {
    pub(crate) client: redis::Client,
    pub(crate) conn: ConnectionManager,
    pub(crate) prefix: String,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects to `url` (`redis://127.0.0.1:6379`, `rediss://…` is not built in) for the fleet
    /// named `fleet`: every key this crate writes starts with `mcp:{fleet}:`.
    pub async fn connect(url: &str, fleet: &str) -> Result<Redis, RedisError> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(2)))
            .set_response_timeout(Some(std::time::Duration::from_secs(2)));
        let conn = ConnectionManager::new_with_config(client.clone(), config).await?;
        Ok(Redis {
            client,
            conn,
            prefix: format!("mcp:{fleet}:"),
        })
    }

    /// The multiplexed connection, for commands of the application's own (it is the one the
    /// stores use).
    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// The key `name` of this fleet (`mcp:{fleet}:{name}`).
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }
}
