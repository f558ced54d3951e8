//! Where task records are kept: the [`TaskStore`] trait and the in-memory default.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::SystemTime;

use super::TaskRecord;

/// The future a [`TaskStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// Why a store refused or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskStoreError {
    /// The owner already has `max_per_owner` unfinished tasks, or the store holds `max_total`.
    Full(String),
    /// The store itself failed (a lost connection, a refused write).
    Unavailable(String),
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::Full(why) => write!(f, "too many tasks: {why}"),
            TaskStoreError::Unavailable(why) => write!(f, "task store unavailable: {why}"),
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// The limits a store enforces when it creates a task (atomically with the insert, so that
/// concurrent calls cannot overshoot them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreLimits {
    /// Unfinished (working or input-required) tasks one owner may have.
    pub max_per_owner: usize,
    /// Records (finished or not) the store may hold in all.
    pub max_total: usize,
}

/// Keeps task records. The default, [`MemoryTaskStore`], keeps them in this process; a shared
/// store (Redis, a database) lets several instances see the same tasks.
///
/// Records are replaced whole ([`put`](Self::put)); the server serializes the writes of one
/// task, so a store needs no compare-and-set. Expired records (see
/// [`TaskRecord::is_expired`]) must never be returned, and are removed by
/// [`remove_expired`](Self::remove_expired) (or earlier, by the store's own means).
pub trait TaskStore: Send + Sync + 'static {
    /// Adds a new record, unless that would break `limits`.
    fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()>;

    /// The record with this id, if it exists and has not expired.
    fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>>;

    /// Replaces an existing record (nothing happens if it is gone).
    fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()>;

    /// Removes a record.
    fn remove(&self, id: &str) -> StoreFuture<'_, ()>;

    /// Up to `limit` records of `owner` in creation order, starting after the one with id
    /// `after`; and whether more follow.
    fn list(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreFuture<'_, (Vec<TaskRecord>, bool)>;

    /// Removes the records expired at `now`; their ids.
    fn remove_expired(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>>;
}

/// The default [`TaskStore`]: records in a map in this process.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Records>,
}

#[derive(Debug, Default)]
struct Records {
    by_id: HashMap<String, (u64, TaskRecord)>,
    /// The creation number of the next record (orders `list`).
    next: u64,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn ready<'a, T: Send + 'a>(value: Result<T, TaskStoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()> {
        let mut records = self.lock();
        let now = SystemTime::now();
        records.by_id.retain(|_, (_, r)| !r.is_expired(now));
        if records.by_id.len() >= limits.max_total {
            return ready(Err(TaskStoreError::Full(format!(
                "the server holds {} tasks",
                limits.max_total
            ))));
        }
        let unfinished = records
            .by_id
            .values()
            .filter(|(_, r)| r.owner == record.owner && !r.status.is_terminal())
            .count();
        if unfinished >= limits.max_per_owner {
            return ready(Err(TaskStoreError::Full(format!(
                "{unfinished} unfinished tasks of this client (the limit is {})",
                limits.max_per_owner
            ))));
        }
        let seq = records.next;
        records.next += 1;
        records.by_id.insert(record.id.clone(), (seq, record));
        ready(Ok(()))
    }

    fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
        let records = self.lock();
        let now = SystemTime::now();
        let found = records
            .by_id
            .get(id)
            .map(|(_, r)| r)
            .filter(|r| !r.is_expired(now))
            .cloned();
        ready(Ok(found))
    }

    fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        if let Some((_, slot)) = self.lock().by_id.get_mut(&record.id) {
            *slot = record;
        }
        ready(Ok(()))
    }

    fn remove(&self, id: &str) -> StoreFuture<'_, ()> {
        self.lock().by_id.remove(id);
        ready(Ok(()))
    }

    fn list(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreFuture<'_, (Vec<TaskRecord>, bool)> {
        let records = self.lock();
        let now = SystemTime::now();
        let start = after
            .and_then(|id| records.by_id.get(id))
            .map(|(seq, _)| *seq);
        let mut mine: Vec<&(u64, TaskRecord)> = records
            .by_id
            .values()
            .filter(|(seq, r)| {
                r.owner == owner && !r.is_expired(now) && start.is_none_or(|s| *seq > s)
            })
            .collect();
        mine.sort_by_key(|(seq, _)| *seq);
        let more = mine.len() > limit;
        let page = mine
            .into_iter()
            .take(limit)
            .map(|(_, r)| r.clone())
            .collect();
        ready(Ok((page, more)))
    }

    fn remove_expired(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        let mut records = self.lock();
        let expired: Vec<String> = records
            .by_id
            .iter()
            .filter(|(_, (_, r))| r.is_expired(now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            records.by_id.remove(id);
        }
        ready(Ok(expired))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use serde_json::Map;

    use super::*;
    use crate::task::TaskStatus;

    fn record(id: &str, owner: &str, ttl: Duration) -> TaskRecord {
        let now = SystemTime::now();
        TaskRecord {
            id: id.into(),
            owner: owner.into(),
            tool: "t".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: Some(ttl),
            poll_interval: Duration::from_millis(100),
            input_requests: Map::new(),
            outcome: None,
        }
    }

    fn now<T>(f: StoreFuture<'_, T>) -> Result<T, TaskStoreError> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    const LIMITS: StoreLimits = StoreLimits {
        max_per_owner: 2,
        max_total: 3,
    };

    #[test]
    fn limits_count_unfinished_tasks_per_owner_and_records_in_all() {
        let store = MemoryTaskStore::new();
        let hour = Duration::from_secs(3600);
        now(store.create(record("a", "o1", hour), LIMITS)).unwrap();
        now(store.create(record("b", "o1", hour), LIMITS)).unwrap();
        let refused = now(store.create(record("c", "o1", hour), LIMITS));
        assert!(
            matches!(refused, Err(TaskStoreError::Full(_))),
            "{refused:?}"
        );
        // A finished task no longer counts against its owner, but still against the total.
        let mut done = now(store.get("a")).unwrap().unwrap();
        done.status = TaskStatus::Completed;
        now(store.put(done)).unwrap();
        now(store.create(record("c", "o1", hour), LIMITS)).unwrap();
        let refused = now(store.create(record("d", "o2", hour), LIMITS));
        assert!(
            matches!(refused, Err(TaskStoreError::Full(_))),
            "{refused:?}"
        );
    }

    #[test]
    fn list_pages_one_owner_in_creation_order() {
        let store = MemoryTaskStore::new();
        let limits = StoreLimits {
            max_per_owner: 10,
            max_total: 10,
        };
        let hour = Duration::from_secs(3600);
        for id in ["z", "y", "x"] {
            now(store.create(record(id, "me", hour), limits)).unwrap();
        }
        now(store.create(record("w", "you", hour), limits)).unwrap();
        let (page, more) = now(store.list("me", None, 2)).unwrap();
        let ids: Vec<&str> = page.iter().map(|r| r.id.as_str()).collect();
        assert_eq!((ids, more), (vec!["z", "y"], true));
        let (page, more) = now(store.list("me", Some("y"), 2)).unwrap();
        let ids: Vec<&str> = page.iter().map(|r| r.id.as_str()).collect();
        assert_eq!((ids, more), (vec!["x"], false));
    }

    #[test]
    fn expired_records_are_never_returned_and_are_removed() {
        let store = MemoryTaskStore::new();
        let limits = StoreLimits {
            max_per_owner: 10,
            max_total: 10,
        };
        now(store.create(record("old", "me", Duration::from_millis(1)), limits)).unwrap();
        now(store.create(record("new", "me", Duration::from_secs(3600)), limits)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(now(store.get("old")).unwrap(), None);
        assert!(now(store.get("new")).unwrap().is_some());
        let (page, _) = now(store.list("me", None, 10)).unwrap();
        assert_eq!(page.len(), 1);
        // Both are gone once `remove_expired` sees them expired.
        let later = SystemTime::now() + Duration::from_secs(7200);
        let mut reaped = now(store.remove_expired(later)).unwrap();
        reaped.sort();
        assert_eq!(reaped, ["new", "old"]);
        assert_eq!(
            now(store.remove_expired(later)).unwrap(),
            Vec::<String>::new()
        );
    }
}
