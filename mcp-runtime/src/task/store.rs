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
    /// The client already has `max_per_owner` records, or the store holds `max_total`, and
    /// none of them is finished (finished records make room first).
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
///
/// Both count every record that has not expired, finished or not: a finished task is kept
/// until its TTL (up to a day) for its client to read, and records nobody bounds would let one
/// client fill the store for everyone (issue #27). Before a task is refused, finished records
/// make room, the one that finished first going first: the client's own when it is at
/// `max_per_owner`, anyone's when the store is at `max_total`. A task is refused only when
/// every record in the way is still unfinished, so a client at its limit never stops
/// another's task, and one that finished its tasks is never locked out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreLimits {
    /// Records one client may have, counted under [`TaskRecord::counts_against`] (its verified
    /// principal, else its address, across all of its sessions).
    pub max_per_owner: usize,
    /// Records (finished or not) the store may hold in all.
    pub max_total: usize,
}

/// What [`TaskStore::update`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateOutcome {
    /// The record was written (its stored revision is now one more than the one given).
    Written,
    /// Someone else wrote the record since the writer read it: nothing was written, and this
    /// is the stored record.
    Stale(Box<TaskRecord>),
    /// There is no such record (removed, or its TTL ran out).
    Missing,
}

/// The 0.1 name of [`UpdateOutcome`].
#[doc(hidden)]
#[deprecated(note = "renamed to `UpdateOutcome`")]
pub type Update = UpdateOutcome;

/// Keeps task records. The default, [`MemoryTaskStore`], keeps them in this process; a shared
/// store (Redis, a database) lets several instances see the same tasks.
///
/// The server writes through [`update`](Self::update), a compare-and-set on
/// [`TaskRecord::revision`]: the instance running a task and the instances that cancel it or
/// end it at a lapsed [lease](super::Lease) never overwrite each other. Its default (a
/// [`get`](Self::get) then a [`put`](Self::put)) is not atomic, which is enough for a store
/// only one process uses; a store shared by instances must override it with an atomic one.
/// Expired records (see [`TaskRecord::is_expired`]) must never be returned, and are removed by
/// [`remove_expired`](Self::remove_expired) (or earlier, by the store's own means).
pub trait TaskStore: Send + Sync + 'static {
    /// Adds a new record, unless that would break `limits`.
    fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()>;

    /// The record with this id, if it exists and has not expired.
    fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>>;

    /// Replaces an existing record (nothing happens if it is gone), whatever its revision.
    fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()>;

    /// Replaces the record with `record.id` if its stored revision is `record.revision`,
    /// storing it with the revision incremented; otherwise writes nothing and returns the
    /// stored record ([`UpdateOutcome::Stale`]) or [`UpdateOutcome::Missing`].
    ///
    /// The default reads, compares and [`put`](Self::put)s: correct for one process, racy for
    /// a store shared by several (override it there).
    fn update(&self, record: TaskRecord) -> StoreFuture<'_, UpdateOutcome> {
        Box::pin(async move {
            match self.get(&record.id).await? {
                None => Ok(UpdateOutcome::Missing),
                Some(stored) if stored.revision != record.revision => {
                    Ok(UpdateOutcome::Stale(Box::new(stored)))
                }
                Some(_) => {
                    let mut record = record;
                    record.revision = record.revision.wrapping_add(1);
                    self.put(record).await?;
                    Ok(UpdateOutcome::Written)
                }
            }
        })
    }

    /// The ids of unfinished tasks whose [lease](super::Lease) lapsed at `now` (their instance
    /// stopped): the reaper ends them `failed`. The default finds none, which is right for a
    /// store only one process uses (such tasks are also ended when read).
    fn lapsed(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        let _ = now;
        ready(Ok(Vec::new()))
    }

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

    /// Removes the finished records of `owner` (its session ended: nobody can read them any
    /// more); their ids. The default lists the owner's records and removes the finished ones.
    fn remove_finished(&self, owner: &str) -> StoreFuture<'_, Vec<String>> {
        let owner = owner.to_owned();
        Box::pin(async move {
            let mut finished = Vec::new();
            let mut after: Option<String> = None;
            loop {
                let (page, more) = self.list(&owner, after.as_deref(), 100).await?;
                after = page.last().map(|r| r.id.clone());
                finished.extend(
                    page.into_iter()
                        .filter(|r| r.status.is_terminal())
                        .map(|r| r.id),
                );
                if !more || after.is_none() {
                    break;
                }
            }
            for id in &finished {
                self.remove(id).await?;
            }
            Ok(finished)
        })
    }
}

/// A shared store: several servers of one process (or one server and the application) can
/// use the same records.
impl<T: TaskStore + ?Sized> TaskStore for std::sync::Arc<T> {
    fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()> {
        (**self).create(record, limits)
    }

    fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
        (**self).get(id)
    }

    fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        (**self).put(record)
    }

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, UpdateOutcome> {
        (**self).update(record)
    }

    fn lapsed(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        (**self).lapsed(now)
    }

    fn remove(&self, id: &str) -> StoreFuture<'_, ()> {
        (**self).remove(id)
    }

    fn list(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreFuture<'_, (Vec<TaskRecord>, bool)> {
        (**self).list(owner, after, limit)
    }

    fn remove_expired(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        (**self).remove_expired(now)
    }

    fn remove_finished(&self, owner: &str) -> StoreFuture<'_, Vec<String>> {
        (**self).remove_finished(owner)
    }
}

/// The default [`TaskStore`]: records in a map in this process, within [`StoreLimits`].
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

impl Records {
    /// Removes the finished record that `which` selects and that finished first (the oldest
    /// created among equals); whether there was one.
    fn evict_oldest_finished(&mut self, which: impl Fn(&TaskRecord) -> bool) -> bool {
        let oldest = self
            .by_id
            .values()
            .filter(|(_, r)| r.status.is_terminal() && which(r))
            .min_by_key(|(seq, r)| (r.last_updated_at, *seq))
            .map(|(_, r)| r.id.clone());
        match oldest {
            Some(id) => self.by_id.remove(&id).is_some(),
            None => false,
        }
    }
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
        let client = record.counts_against().to_owned();
        let mine = |records: &Records| {
            records
                .by_id
                .values()
                .filter(|(_, r)| r.counts_against() == client)
                .count()
        };
        while mine(&records) >= limits.max_per_owner {
            if !records.evict_oldest_finished(|r| r.counts_against() == client) {
                return ready(Err(TaskStoreError::Full(format!(
                    "{} unfinished tasks of this client (the limit is {})",
                    mine(&records),
                    limits.max_per_owner
                ))));
            }
        }
        while records.by_id.len() >= limits.max_total {
            if !records.evict_oldest_finished(|_| true) {
                return ready(Err(TaskStoreError::Full(format!(
                    "the server holds {} unfinished tasks",
                    records.by_id.len()
                ))));
            }
        }
        let seq = records.next;
        records.next = records.next.wrapping_add(1);
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

    fn update(&self, mut record: TaskRecord) -> StoreFuture<'_, UpdateOutcome> {
        let mut records = self.lock();
        let now = SystemTime::now();
        let outcome = match records.by_id.get_mut(&record.id) {
            Some((_, stored)) if stored.is_expired(now) => UpdateOutcome::Missing,
            None => UpdateOutcome::Missing,
            Some((_, stored)) if stored.revision != record.revision => {
                UpdateOutcome::Stale(Box::new(stored.clone()))
            }
            Some((_, stored)) => {
                // A revision read back from a store may be anything: it wraps, never panics.
                record.revision = record.revision.wrapping_add(1);
                *stored = record;
                UpdateOutcome::Written
            }
        };
        ready(Ok(outcome))
    }

    fn lapsed(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
        let records = self.lock();
        let ids = records
            .by_id
            .values()
            .filter(|(_, r)| !r.is_expired(now) && r.lease_lapsed(now))
            .map(|(_, r)| r.id.clone())
            .collect();
        ready(Ok(ids))
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
            client: None,
            tool: "t".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: Some(ttl),
            poll_interval: Duration::from_millis(100),
            input_requests: Map::new(),
            outcome: None,
            revision: 0,
            lease: None,
        }
    }

    /// A record read back from a store may hold anything its JSON can say: a `ttl` of
    /// `u64::MAX` seconds (issue #27: it panicked the reader in `expires_at`) never expires and
    /// never overflows.
    #[test]
    fn a_poisoned_ttl_does_not_panic_the_reader() {
        let poisoned: TaskRecord = serde_json::from_value({
            let mut v = serde_json::to_value(record("p", "me", Duration::from_secs(1))).unwrap();
            v["ttl"] = serde_json::json!({"secs": u64::MAX, "nanos": 999_999_999});
            v
        })
        .unwrap();
        assert_eq!(poisoned.expires_at(), None);
        assert!(!poisoned.is_expired(SystemTime::now()));
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

    fn finish(store: &MemoryTaskStore, id: &str) {
        let mut done = now(store.get(id)).unwrap().unwrap();
        done.status = TaskStatus::Completed;
        // Finished one after the other, whatever the clock's resolution.
        std::thread::sleep(Duration::from_millis(2));
        done.last_updated_at = SystemTime::now();
        now(store.put(done)).unwrap();
    }

    fn held(store: &MemoryTaskStore) -> Vec<String> {
        let mut ids: Vec<String> = store.lock().by_id.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Issue #27: every record counts, finished or not; finished ones make room, the one that
    /// finished first going first, before a task is refused.
    #[test]
    fn limits_count_every_record_and_finished_ones_make_room() {
        let store = MemoryTaskStore::new();
        let hour = Duration::from_secs(3600);
        now(store.create(record("a", "o1", hour), LIMITS)).unwrap();
        now(store.create(record("b", "o1", hour), LIMITS)).unwrap();
        let refused = now(store.create(record("c", "o1", hour), LIMITS));
        assert!(
            matches!(&refused, Err(TaskStoreError::Full(why)) if why.contains("unfinished")),
            "{refused:?}"
        );
        // At its limit, the owner's own finished record makes room (b finished before a).
        finish(&store, "b");
        finish(&store, "a");
        now(store.create(record("c", "o1", hour), LIMITS)).unwrap();
        assert_eq!(held(&store), ["a", "c"]);
        // A full store makes room with anyone's finished record.
        now(store.create(record("d", "o2", hour), LIMITS)).unwrap();
        assert_eq!(held(&store), ["a", "c", "d"]);
        now(store.create(record("e", "o3", hour), LIMITS)).unwrap();
        assert_eq!(held(&store), ["c", "d", "e"]);
        // Nothing finished left: a new owner is refused by the total, an owner at its limit
        // by its own.
        let refused = now(store.create(record("f", "o4", hour), LIMITS));
        assert!(
            matches!(&refused, Err(TaskStoreError::Full(why)) if why.contains("the server holds 3")),
            "{refused:?}"
        );
    }

    /// An owner is counted under its client when it has one: one client's sessions share
    /// one limit, and a client at its limit does not stop another.
    #[test]
    fn owners_of_one_client_share_its_limit() {
        let store = MemoryTaskStore::new();
        let limits = StoreLimits {
            max_per_owner: 2,
            max_total: 10,
        };
        let hour = Duration::from_secs(3600);
        let of = |id: &str, session: &str, client: &str| TaskRecord {
            client: Some(client.into()),
            ..record(id, session, hour)
        };
        now(store.create(of("a", "s1", "c1"), limits)).unwrap();
        now(store.create(of("b", "s2", "c1"), limits)).unwrap();
        let refused = now(store.create(of("c", "s3", "c1"), limits));
        assert!(
            matches!(refused, Err(TaskStoreError::Full(_))),
            "{refused:?}"
        );
        now(store.create(of("d", "s3", "c2"), limits)).unwrap();
    }

    /// A session's finished records go when it ends; its unfinished ones stay.
    #[test]
    fn remove_finished_takes_one_owners_finished_records() {
        let store = MemoryTaskStore::new();
        let hour = Duration::from_secs(3600);
        let limits = StoreLimits {
            max_per_owner: 10,
            max_total: 10,
        };
        for (id, owner) in [("a", "s1"), ("b", "s1"), ("c", "s2")] {
            now(store.create(record(id, owner, hour), limits)).unwrap();
            finish(&store, id);
        }
        now(store.create(record("d", "s1", hour), limits)).unwrap();
        let mut removed = now(store.remove_finished("s1")).unwrap();
        removed.sort();
        assert_eq!(removed, ["a", "b"]);
        assert_eq!(held(&store), ["c", "d"]);
    }

    /// A record read back from a store at the last revision there is: written over, it
    /// wraps instead of panicking.
    #[test]
    fn a_poisoned_revision_does_not_panic_the_writer() {
        let store = MemoryTaskStore::new();
        let mut poisoned = record("a", "o", Duration::from_secs(3600));
        poisoned.revision = u64::MAX;
        now(store.create(poisoned.clone(), LIMITS)).unwrap();
        assert_eq!(now(store.update(poisoned)).unwrap(), UpdateOutcome::Written);
        assert_eq!(now(store.get("a")).unwrap().unwrap().revision, 0);
    }

    #[test]
    fn updates_are_a_compare_and_set_on_the_revision() {
        let store = MemoryTaskStore::new();
        let hour = Duration::from_secs(3600);
        now(store.create(record("a", "o", hour), LIMITS)).unwrap();
        let read = now(store.get("a")).unwrap().unwrap();
        let mut first = read.clone();
        first.status = TaskStatus::Cancelled;
        assert_eq!(now(store.update(first)).unwrap(), UpdateOutcome::Written);
        // A writer that read revision 0 lost: it gets what is stored, nothing is written.
        let mut late = read;
        late.status = TaskStatus::Completed;
        match now(store.update(late)).unwrap() {
            UpdateOutcome::Stale(stored) => {
                assert_eq!((stored.status, stored.revision), (TaskStatus::Cancelled, 1))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            now(store.get("a")).unwrap().unwrap().status,
            TaskStatus::Cancelled
        );
        let mut gone = record("b", "o", hour);
        gone.revision = 0;
        assert_eq!(now(store.update(gone)).unwrap(), UpdateOutcome::Missing);
    }

    #[test]
    fn lapsed_leases_are_found_until_the_task_is_over() {
        let store = MemoryTaskStore::new();
        let hour = Duration::from_secs(3600);
        let t0 = SystemTime::now();
        let mut leased = record("a", "o", hour);
        leased.lease = Some(crate::task::Lease {
            instance: "i1".into(),
            expires_at: t0 + Duration::from_secs(30),
        });
        now(store.create(leased, LIMITS)).unwrap();
        now(store.create(record("b", "o", hour), LIMITS)).unwrap();
        assert!(now(store.lapsed(t0)).unwrap().is_empty());
        let later = t0 + Duration::from_secs(31);
        assert_eq!(now(store.lapsed(later)).unwrap(), ["a"]);
        let mut done = now(store.get("a")).unwrap().unwrap();
        done.status = TaskStatus::Failed;
        now(store.update(done)).unwrap();
        assert!(now(store.lapsed(later)).unwrap().is_empty());
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
