//! An optional single-use guard for 2026-07-28 `requestState`: with one configured
//! ([`ServerBuilder::request_state_guard`](crate::ServerBuilder::request_state_guard)), every
//! state carries a random nonce, and a retry runs only if the guard has not seen that nonce
//! before. Without one (the default) a state may be presented again until it expires, and no
//! request touches a store.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::SystemTime;

/// Why a guard could not answer (its store is unreachable, say). The request it was asked
/// about fails with -32603: a guard that cannot answer lets nothing through.
pub type GuardError = Box<dyn std::error::Error + Send + Sync>;

/// What [`RequestStateGuard::first_use`] returns.
pub type GuardFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, GuardError>> + Send + 'a>>;

/// Remembers which `requestState` tokens have been used, so each is used once.
///
/// The server calls [`first_use`](Self::first_use) with a state's nonce before the retry that
/// carries it runs: `Ok(true)` lets it run, `Ok(false)` refuses it (-32602, the state was used
/// already), an error fails it (-32603). Every instance of a fleet must share the guard's
/// store (`mcp_redis::RedisStateGuard` keeps it in Redis); [`MemoryStateGuard`] serves a
/// single instance.
///
/// ```standalone_crate
/// use std::time::SystemTime;
/// use mcp_runtime::request_state::{GuardFuture, RequestStateGuard};
///
/// /// Lets every state through once per process, by asking the in-memory guard.
/// struct Logged(mcp_runtime::request_state::MemoryStateGuard);
///
/// impl RequestStateGuard for Logged {
///     fn first_use<'a>(&'a self, id: &'a str, expires: SystemTime) -> GuardFuture<'a> {
///         Box::pin(async move {
///             let first = self.0.first_use(id, expires).await?;
///             if !first {
///                 eprintln!("a requestState was presented twice");
///             }
///             Ok(first)
///         })
///     }
/// }
///
/// let server = mcp_runtime::Server::builder()
///     .request_state_guard(Logged(Default::default()))
///     .build()
///     .unwrap();
/// # drop(server);
/// ```
pub trait RequestStateGuard: Send + Sync + 'static {
    /// Records the state `id` (a random nonce, 22 base64url characters) as used: `true` the
    /// first time it is seen, `false` after. The state stops opening at `expires`; the guard
    /// may forget `id` then.
    fn first_use<'a>(&'a self, id: &'a str, expires: SystemTime) -> GuardFuture<'a>;
}

/// A shared guard: keep a handle (for its metrics, say) or give one to several servers.
impl<G: RequestStateGuard + ?Sized> RequestStateGuard for std::sync::Arc<G> {
    fn first_use<'a>(&'a self, id: &'a str, expires: SystemTime) -> GuardFuture<'a> {
        (**self).first_use(id, expires)
    }
}

/// A [`RequestStateGuard`] in this process's memory: right for one instance (a fleet needs a
/// shared store). Expired nonces are dropped as new ones come in, so it holds about as many as
/// the states issued within their TTL.
#[derive(Debug, Default)]
pub struct MemoryStateGuard {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    expiry: HashMap<Box<str>, SystemTime>,
    /// The size at which expired entries are next swept (amortized O(1) per insert).
    sweep_at: usize,
}

impl MemoryStateGuard {
    /// An empty guard.
    pub fn new() -> MemoryStateGuard {
        MemoryStateGuard::default()
    }

    fn record(&self, id: &str, expires: SystemTime) -> bool {
        let now = SystemTime::now();
        // A panic elsewhere while the lock was held leaves a map that is still consistent.
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.expiry.get(id).is_some_and(|until| *until > now) {
            return false;
        }
        if seen.expiry.len() >= seen.sweep_at {
            seen.expiry.retain(|_, until| *until > now);
            seen.sweep_at = (seen.expiry.len() * 2).max(1024);
        }
        seen.expiry.insert(id.into(), expires);
        true
    }

    /// How many nonces it holds (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .expiry
            .len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RequestStateGuard for MemoryStateGuard {
    fn first_use<'a>(&'a self, id: &'a str, expires: SystemTime) -> GuardFuture<'a> {
        let first = self.record(id, expires);
        Box::pin(async move { Ok(first) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_nonce_is_used_once_until_it_expires() {
        let guard = MemoryStateGuard::new();
        let later = SystemTime::now() + Duration::from_secs(60);
        assert!(guard.first_use("a", later).await.unwrap());
        assert!(!guard.first_use("a", later).await.unwrap());
        assert!(guard.first_use("b", later).await.unwrap());
        // Once expired, the state no longer opens; its nonce may be forgotten.
        let past = SystemTime::now() - Duration::from_secs(1);
        assert!(guard.first_use("c", past).await.unwrap());
        assert!(guard.first_use("c", past).await.unwrap());
    }

    #[tokio::test]
    async fn expired_nonces_are_swept() {
        let guard = MemoryStateGuard::new();
        let past = SystemTime::now() - Duration::from_secs(1);
        for i in 0..5000 {
            guard.first_use(&format!("old-{i}"), past).await.unwrap();
        }
        assert!(guard.len() <= 1024, "{}", guard.len());
        let later = SystemTime::now() + Duration::from_secs(60);
        for i in 0..3000 {
            assert!(guard.first_use(&format!("new-{i}"), later).await.unwrap());
        }
        assert!(guard.len() >= 3000);
        assert!(!guard.first_use("new-7", later).await.unwrap());
    }
}
