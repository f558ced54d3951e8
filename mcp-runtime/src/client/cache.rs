//! Cache hints (2026-07-28 `ttlMs` and `cacheScope`) as a host reads them, and the optional
//! response cache ([`ClientBuilder::cache`](super::ClientBuilder::cache)) that honours them:
//! a list, or `server/discover`, asked again within its `ttlMs` is answered from memory, and
//! a `notifications/*/list_changed` drops the lists it names at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::server::CacheScope;

/// What a cacheable result says of its caching (2026-07-28 `CacheableResult`): how long it may
/// be reused, and by whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheHint {
    /// `ttlMs`: how long the result may be reused (zero: not at all).
    pub ttl: Duration,
    /// `cacheScope`: whether a cache shared across users may keep it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// The hint of one result: `None` when it carries no valid `ttlMs` and `cacheScope`
    /// (a session-era result, or a server that leaves them out).
    pub(crate) fn of(result: &Value) -> Option<CacheHint> {
        let ttl = result.get("ttlMs")?;
        let ttl = match ttl.as_u64() {
            Some(ms) => ms,
            // A whole number written as a float (`60000.0`).
            None => {
                let ms = ttl.as_f64().filter(|f| f.is_finite() && *f >= 0.0)?;
                ms as u64
            }
        };
        let scope = match result.get("cacheScope")?.as_str()? {
            "public" => CacheScope::Public,
            "private" => CacheScope::Private,
            _ => return None,
        };
        Some(CacheHint {
            ttl: Duration::from_millis(ttl),
            scope,
        })
    }

    /// The hint of a list read over several pages: the shortest `ttlMs`, `private` if any page
    /// says so, and none if a page has none.
    pub(crate) fn merge(a: Option<CacheHint>, b: Option<CacheHint>) -> Option<CacheHint> {
        let (a, b) = (a?, b?);
        Some(CacheHint {
            ttl: a.ttl.min(b.ttl),
            scope: if a.scope == CacheScope::Public && b.scope == CacheScope::Public {
                CacheScope::Public
            } else {
                CacheScope::Private
            },
        })
    }
}

/// One cached answer.
struct Entry {
    items: Vec<Value>,
    hint: CacheHint,
    until: Instant,
}

#[derive(Default)]
struct Slot {
    /// Bumped by every invalidation: an answer fetched before one is not stored.
    generation: u64,
    entry: Option<Entry>,
}

/// The cached lists (and discovery), by method. Off unless the builder turned it on.
pub(crate) struct ResponseCache {
    enabled: bool,
    slots: Mutex<HashMap<&'static str, Slot>>,
}

/// The methods whose answers are kept.
pub(crate) const CACHED: [&str; 6] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "skills/list",
    "server/discover",
];

/// The cached methods a notification says have changed.
fn invalidated_by(notification: &str) -> &'static [&'static str] {
    match notification {
        "notifications/tools/list_changed" => &["tools/list"],
        "notifications/prompts/list_changed" => &["prompts/list"],
        // Skills are resources: a changed resource list may be a changed skill set.
        "notifications/resources/list_changed" => {
            &["resources/list", "resources/templates/list", "skills/list"]
        }
        _ => &[],
    }
}

fn key_of(method: &str) -> Option<&'static str> {
    CACHED.iter().copied().find(|m| *m == method)
}

impl ResponseCache {
    pub(crate) fn new(enabled: bool) -> ResponseCache {
        ResponseCache {
            enabled,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The cached answer of `method`, while its `ttlMs` lasts.
    pub(crate) fn get(&self, method: &str) -> Option<(Vec<Value>, CacheHint)> {
        if !self.enabled {
            return None;
        }
        let key = key_of(method)?;
        let mut slots = self.slots.lock().unwrap();
        let slot = slots.get_mut(key)?;
        match &slot.entry {
            Some(e) if Instant::now() < e.until => Some((e.items.clone(), e.hint)),
            Some(_) => {
                slot.entry = None;
                None
            }
            None => None,
        }
    }

    /// The generation of `method`'s slot, taken before fetching it.
    pub(crate) fn generation(&self, method: &str) -> u64 {
        let Some(key) = key_of(method).filter(|_| self.enabled) else {
            return 0;
        };
        self.slots
            .lock()
            .unwrap()
            .get(key)
            .map_or(0, |s| s.generation)
    }

    /// Keeps `method`'s answer for its `ttlMs`, unless it was invalidated since `generation`
    /// (a change announced while it was being fetched makes it stale already).
    pub(crate) fn put(
        &self,
        method: &str,
        generation: u64,
        items: &[Value],
        hint: Option<CacheHint>,
    ) {
        let (Some(key), Some(hint)) = (key_of(method), hint) else {
            return;
        };
        if !self.enabled || hint.ttl.is_zero() {
            return;
        }
        let Some(until) = Instant::now().checked_add(hint.ttl) else {
            return;
        };
        let mut slots = self.slots.lock().unwrap();
        let slot = slots.entry(key).or_default();
        if slot.generation == generation {
            slot.entry = Some(Entry {
                items: items.to_vec(),
                hint,
                until,
            });
        }
    }

    /// Drops what `notification` (a server notification's method) says has changed.
    pub(crate) fn notified(&self, notification: &str) {
        if !self.enabled {
            return;
        }
        let keys = invalidated_by(notification);
        if keys.is_empty() {
            return;
        }
        let mut slots = self.slots.lock().unwrap();
        for key in keys {
            let slot = slots.entry(key).or_default();
            slot.generation += 1;
            slot.entry = None;
        }
    }

    /// Drops everything (a new session: what the old one listed may not hold).
    pub(crate) fn clear(&self) {
        let mut slots = self.slots.lock().unwrap();
        for slot in slots.values_mut() {
            slot.generation += 1;
            slot.entry = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hints_read_and_merge() {
        let a = CacheHint::of(&json!({"ttlMs": 60000, "cacheScope": "public"})).unwrap();
        assert_eq!(a.ttl, Duration::from_secs(60));
        assert_eq!(a.scope, CacheScope::Public);
        let b = CacheHint::of(&json!({"ttlMs": 1000.0, "cacheScope": "private"})).unwrap();
        let m = CacheHint::merge(Some(a), Some(b)).unwrap();
        assert_eq!(
            (m.ttl, m.scope),
            (Duration::from_secs(1), CacheScope::Private)
        );
        assert_eq!(CacheHint::of(&json!({"ttlMs": 5})), None);
        assert_eq!(
            CacheHint::of(&json!({"ttlMs": -1, "cacheScope": "public"})),
            None
        );
        assert_eq!(
            CacheHint::of(&json!({"ttlMs": 5, "cacheScope": "shared"})),
            None
        );
        assert_eq!(CacheHint::merge(Some(a), None), None);
    }

    #[test]
    fn kept_within_ttl_and_dropped_by_the_notification_that_names_it() {
        let cache = ResponseCache::new(true);
        let hint = CacheHint::of(&json!({"ttlMs": 60000, "cacheScope": "private"}));
        let g = cache.generation("tools/list");
        cache.put("tools/list", g, &[json!({"name": "a"})], hint);
        cache.put("prompts/list", 0, &[json!({"name": "p"})], hint);
        assert_eq!(
            cache.get("tools/list").unwrap().0,
            vec![json!({"name": "a"})]
        );
        cache.notified("notifications/prompts/list_changed");
        assert!(cache.get("tools/list").is_some());
        assert!(cache.get("prompts/list").is_none());
        cache.notified("notifications/tools/list_changed");
        assert!(cache.get("tools/list").is_none());
        // An answer fetched before the change is not kept.
        cache.put("tools/list", g, &[json!({"name": "old"})], hint);
        assert!(cache.get("tools/list").is_none());
    }

    #[test]
    fn zero_ttl_no_hint_or_disabled_is_not_kept() {
        let zero = CacheHint::of(&json!({"ttlMs": 0, "cacheScope": "private"}));
        let cache = ResponseCache::new(true);
        cache.put("tools/list", 0, &[], zero);
        cache.put("prompts/list", 0, &[], None);
        assert!(cache.get("tools/list").is_none());
        assert!(cache.get("prompts/list").is_none());
        let off = ResponseCache::new(false);
        let hint = CacheHint::of(&json!({"ttlMs": 60000, "cacheScope": "private"}));
        off.put("tools/list", 0, &[], hint);
        assert!(off.get("tools/list").is_none());
    }
}
