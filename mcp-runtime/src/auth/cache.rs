//! Verified tokens, remembered by a digest of the token until they expire (or a shorter cap),
//! so that a client sending the same token on every request pays for one verification; and
//! refused ones, for a short while, so that a made-up token sent again and again does not cost
//! a request to the authorization server each time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::Principal;

/// The most tokens remembered.
const MAX_ENTRIES: usize = 10_000;

/// What a token was found to be: whose (the principal handed out for it, not copied), or why
/// it was refused.
type Answer = Result<Arc<Principal>, String>;

pub(crate) struct TokenCache {
    /// Each token's answer (by the token's digest), and until when it holds.
    entries: Mutex<HashMap<[u8; 32], (Answer, Instant)>>,
    cap: Duration,
}

/// Seconds since the Unix epoch.
pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A token's SHA-256 (`id::sha256`: with the CPU's SHA instructions where there are any, a
/// few times faster than a portable implementation on an ~800-byte JWT, hashed on every
/// request).
fn key(token: &str) -> [u8; 32] {
    crate::id::sha256(token.as_bytes())
}

impl TokenCache {
    /// Remembers each token for at most `cap`.
    pub(crate) fn new(cap: Duration) -> TokenCache {
        TokenCache {
            entries: Mutex::new(HashMap::new()),
            cap,
        }
    }

    /// The principal of `token`, or why it was refused, if it was checked a moment ago; and
    /// until when that holds.
    pub(crate) fn get(&self, token: &str) -> Option<(Answer, Instant)> {
        let entries = self.entries.lock().unwrap();
        let (answer, until) = entries.get(&key(token))?;
        (Instant::now() < *until).then(|| (answer.clone(), *until))
    }

    /// Remembers a verified token until `exp` (Unix seconds, if it has one) or the cap; until
    /// when, if at all.
    pub(crate) fn put(
        &self,
        token: &str,
        principal: &Arc<Principal>,
        exp: Option<u64>,
    ) -> Option<Instant> {
        let mut ttl = self.cap;
        if let Some(exp) = exp {
            ttl = ttl.min(Duration::from_secs(exp.saturating_sub(now_unix())));
        }
        self.insert(token, Ok(principal.clone()), ttl)
    }

    /// Remembers a refused token (`why`) for `ttl`. Only a refusal of the token itself: "the
    /// issuer could not be reached" is no answer about the token.
    pub(crate) fn put_refusal(&self, token: &str, why: &str, ttl: Duration) {
        self.insert(token, Err(why.to_owned()), ttl.min(self.cap));
    }

    fn insert(&self, token: &str, answer: Answer, ttl: Duration) -> Option<Instant> {
        if ttl.is_zero() {
            return None;
        }
        let mut entries = self.entries.lock().unwrap();
        if entries.len() >= MAX_ENTRIES {
            let now = Instant::now();
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        let until = Instant::now() + ttl;
        entries.insert(key(token), (answer, until));
        Some(until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn remembered_until_expiry_or_the_cap() {
        let p = Arc::new(
            Principal::from_claims(json!({"iss": "i", "sub": "s"}).as_object().unwrap().clone())
                .unwrap(),
        );
        let cache = TokenCache::new(Duration::from_secs(60));
        let until = cache.put("a", &p, Some(now_unix() + 30)).unwrap();
        assert!(until <= Instant::now() + Duration::from_secs(30));
        assert_eq!(cache.get("a"), Some((Ok(p.clone()), until)));
        cache.put_refusal("bad", "not active", Duration::from_secs(10));
        assert_eq!(cache.get("bad").unwrap().0, Err("not active".into()));
        assert_eq!(cache.get("b"), None);
        assert_eq!(
            cache.put("expired", &p, Some(now_unix().saturating_sub(1))),
            None
        );
        assert_eq!(cache.get("expired"), None);
        let none = TokenCache::new(Duration::ZERO);
        assert_eq!(none.put("a", &p, None), None);
        assert_eq!(none.get("a"), None);
    }
}
