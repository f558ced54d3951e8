//! Every task of one server: creating them (within the store's limits), reading, answering,
//! cancelling, waiting for and listing them through the [`TaskStore`], the lease renewal of the
//! tasks running here, and the reaper that ends tasks at their TTL or (for tasks of stopped
//! instances) at a lapsed lease.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use super::live::{Live, OnChange};
use super::store::{StoreLimits, UpdateOutcome};
use super::{Lease, TaskOutcome, TaskRecord, TaskStatus, TaskStore, TaskStoreError};
use crate::protocol::McpError;
use crate::request_state::round::Round;

/// Announces the status changes this instance makes to tasks that do not run here.
pub(crate) type Announce = Box<dyn Fn(&TaskRecord) + Send + Sync>;

/// The status message of a task whose instance stopped without ending it.
pub(crate) const STOPPED: &str = "The instance running this task stopped";

/// Tunables of tasks; the defaults are in [`TaskConfig::default`].
#[derive(Clone, Debug)]
pub(crate) struct TaskConfig {
    /// The TTL of a task whose client asked for none.
    pub(crate) default_ttl: Duration,
    /// The longest TTL a client may ask for.
    pub(crate) max_ttl: Duration,
    /// The poll interval suggested to clients.
    pub(crate) poll_interval: Duration,
    pub(crate) limits: StoreLimits,
    /// How long the instance running a task may go without renewing its claim on it (it
    /// renews every third of this).
    pub(crate) lease: Duration,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            default_ttl: Duration::from_secs(60 * 60),
            max_ttl: Duration::from_secs(24 * 60 * 60),
            poll_interval: Duration::from_millis(500),
            limits: StoreLimits {
                max_per_owner: 64,
                max_total: 10_000,
            },
            lease: Duration::from_secs(30),
        }
    }
}

/// Every task of one server.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    /// The tasks whose work runs in this process, by id.
    live: Mutex<HashMap<String, Arc<Live>>>,
    pub(crate) config: TaskConfig,
    /// Names this instance in the leases it takes (random per server).
    instance: String,
    /// Announces the changes made here to tasks running elsewhere.
    announce: Option<Announce>,
    reaper: OnceLock<()>,
}

/// Why a task could not be found: unknown, expired, or someone else's (indistinguishable to
/// the caller on purpose).
pub(crate) fn not_found(id: &str) -> McpError {
    McpError::invalid_params(format!(
        "Unknown task: {}",
        crate::protocol::error::clip(id)
    ))
}

fn store_error(e: TaskStoreError) -> McpError {
    McpError::internal(format!("Cannot create the task: {e}"))
}

fn read_error(e: TaskStoreError) -> McpError {
    McpError::internal(format!("Cannot read the task: {e}"))
}

/// The record of a task ended here on behalf of an instance that no longer runs it (or whose
/// work is elsewhere): `cancelled` by request, or `failed` at a lapsed lease.
fn ended(mut record: TaskRecord, status: TaskStatus, message: &'static str) -> TaskRecord {
    record.status = status;
    record.status_message = Some(message.into());
    record.outcome = (status == TaskStatus::Failed).then(|| {
        let e = McpError::internal(message);
        TaskOutcome::Error(serde_json::to_value(&e).expect("an error serializes"))
    });
    record.input_requests.clear();
    record.lease = None;
    record.last_updated_at = SystemTime::now().max(record.last_updated_at);
    record
}

impl Tasks {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        config: TaskConfig,
        announce: Option<Announce>,
    ) -> Arc<Tasks> {
        Arc::new(Tasks {
            store,
            live: Mutex::default(),
            config,
            instance: crate::id::random_id(),
            announce,
            reaper: OnceLock::new(),
        })
    }

    /// A new task (not in the store yet: [`admit`](Self::admit) puts it there) for `owner`, with the
    /// TTL the client asked for (bounded), or the default.
    pub(crate) fn prepare(
        &self,
        owner: String,
        client: Option<String>,
        tool: &str,
        ttl: Option<Duration>,
        round: Option<Arc<Round>>,
        on_change: Option<OnChange>,
    ) -> Arc<Live> {
        let now = SystemTime::now();
        let ttl = ttl
            .unwrap_or(self.config.default_ttl)
            .min(self.config.max_ttl)
            .max(Duration::from_secs(1));
        let record = TaskRecord {
            id: crate::id::random_id(),
            owner,
            client,
            tool: tool.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: Some(ttl),
            poll_interval: self.config.poll_interval,
            input_requests: Map::new(),
            outcome: None,
            revision: 0,
            lease: Some(Lease {
                instance: self.instance.clone(),
                expires_at: super::later(now, self.config.lease),
            }),
        };
        Arc::new(Live::new(record, self.store.clone(), round, on_change))
    }

    /// Puts a prepared task in the store (within the limits) and tracks it here.
    pub(crate) async fn admit(self: &Arc<Self>, live: &Arc<Live>) -> Result<(), McpError> {
        live.create(self.config.limits).await.map_err(store_error)?;
        self.live
            .lock()
            .expect("tasks lock")
            .insert(live.id.clone(), live.clone());
        self.start_reaper();
        Ok(())
    }

    /// Forgets a task the client never heard of (its call answered without it).
    pub(crate) async fn discard(&self, live: &Live) {
        self.live.lock().expect("tasks lock").remove(&live.id);
        let _ = self.store.remove(&live.id).await;
    }

    /// The record of task `id`, if `owner` may see it (a task whose instance stopped is
    /// ended `failed` first).
    pub(crate) async fn get(&self, id: &str, owner: &str) -> Result<TaskRecord, McpError> {
        match self.store.get(id).await {
            Ok(Some(record)) if record.owner == owner => self.settle_lapsed(record).await,
            Ok(_) => Err(not_found(id)),
            Err(e) => Err(read_error(e)),
        }
    }

    /// `record`, or, if its lease lapsed and its work does not run here, the record ended
    /// `failed` (or whatever another instance wrote meanwhile).
    async fn settle_lapsed(&self, mut record: TaskRecord) -> Result<TaskRecord, McpError> {
        // Three tries: each lost race means another instance wrote the record meanwhile.
        for _ in 0..3 {
            if !record.lease_lapsed(SystemTime::now()) || self.local(&record.id).is_some() {
                return Ok(record);
            }
            let failed = ended(record.clone(), TaskStatus::Failed, STOPPED);
            match self
                .store
                .update(failed.clone())
                .await
                .map_err(read_error)?
            {
                UpdateOutcome::Written => {
                    let failed = TaskRecord {
                        revision: failed.revision.wrapping_add(1),
                        ..failed
                    };
                    tracing::warn!(
                        task = %failed.id,
                        instance = record.lease.as_ref().map_or("", |l| l.instance.as_str()),
                        "the lease on a task lapsed: it ends failed"
                    );
                    self.announce(&failed);
                    return Ok(failed);
                }
                UpdateOutcome::Stale(stored) => record = *stored,
                UpdateOutcome::Missing => return Err(not_found(&record.id)),
            }
        }
        Ok(record)
    }

    fn announce(&self, record: &TaskRecord) {
        if let Some(announce) = &self.announce {
            announce(record);
        }
    }

    fn local(&self, id: &str) -> Option<Arc<Live>> {
        self.live.lock().expect("tasks lock").get(id).cloned()
    }

    /// Delivers answers to task `id`'s questions (keys it is not waiting on are ignored).
    pub(crate) async fn answer(
        &self,
        id: &str,
        owner: &str,
        responses: Map<String, Value>,
    ) -> Result<(), McpError> {
        let record = self.get(id, owner).await?;
        if record.status.is_terminal() {
            return Ok(());
        }
        let Some(live) = self.local(id) else {
            return Err(McpError::internal(
                "The task runs on another server instance and cannot take input here",
            ));
        };
        live.answer(responses).await;
        Ok(())
    }

    /// Cancels task `id`: its status before (a terminal one is left as it was). A task running
    /// on another instance is cancelled in the store; that instance stops its work when it
    /// next writes the record (at the latest at its next lease renewal).
    pub(crate) async fn cancel(&self, id: &str, owner: &str) -> Result<TaskRecord, McpError> {
        const BY_REQUEST: &str = "The task was cancelled by request";
        let mut record = self.get(id, owner).await?;
        if record.status.is_terminal() {
            return Ok(record);
        }
        if let Some(live) = self.local(id) {
            live.finish(TaskStatus::Cancelled, None, Some(BY_REQUEST.into()))
                .await;
            return Ok(record);
        }
        for _ in 0..3 {
            let cancelled = ended(record.clone(), TaskStatus::Cancelled, BY_REQUEST);
            match self.store.update(cancelled.clone()).await {
                Ok(UpdateOutcome::Written) => {
                    self.announce(&TaskRecord {
                        revision: cancelled.revision.wrapping_add(1),
                        ..cancelled
                    });
                    return Ok(record);
                }
                Ok(UpdateOutcome::Stale(stored)) if stored.status.is_terminal() => {
                    return Ok(*stored);
                }
                Ok(UpdateOutcome::Stale(stored)) => record = *stored,
                Ok(UpdateOutcome::Missing) => return Err(not_found(id)),
                Err(e) => {
                    return Err(McpError::internal(format!("Cannot cancel the task: {e}")));
                }
            }
        }
        Err(McpError::internal(
            "Cannot cancel the task: its record keeps changing; try again",
        ))
    }

    /// Waits until task `id` is terminal; its final record. A task running elsewhere is
    /// polled in the store at its poll interval; the wait ends with the task, with its lease
    /// (it ends `failed`) or with its TTL (it is unknown then).
    pub(crate) async fn wait(&self, id: &str, owner: &str) -> Result<TaskRecord, McpError> {
        loop {
            let record = self.get(id, owner).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            if let Some(live) = self.local(id) {
                live.done().await;
                return self.get(id, owner).await;
            }
            let every = record
                .poll_interval
                .clamp(Duration::from_millis(10), Duration::from_secs(5));
            tokio::time::sleep(every).await;
        }
    }

    /// Up to `limit` tasks of `owner` after the one with id `after`; whether more follow.
    pub(crate) async fn list(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<TaskRecord>, bool), McpError> {
        self.store
            .list(owner, after, limit)
            .await
            .map_err(|e| McpError::internal(format!("Cannot list tasks: {e}")))
    }

    /// Ends every task running here as cancelled (the server is stopping).
    pub(crate) async fn shutdown(&self) {
        self.cancel_where(|_| true, "The server shut down").await;
    }

    /// Whether `owner` has work running here.
    pub(crate) fn runs_for(&self, owner: &str) -> bool {
        let live = self.live.lock().expect("tasks lock");
        live.values().any(|t| t.owner == owner)
    }

    /// Ends the tasks of `owner` running here as cancelled (its session ended).
    pub(crate) async fn cancel_owned(&self, owner: &str) {
        self.cancel_where(|t| t.owner == owner, "The session ended")
            .await;
    }

    /// Ends session `owner`'s tasks for good: those running here are cancelled, then its
    /// finished records are removed (nobody can read them any more). Tasks still running on
    /// another instance stay until they end there and expire.
    pub(crate) async fn end_session(&self, owner: &str) {
        self.cancel_owned(owner).await;
        match self.store.remove_finished(owner).await {
            Ok(ids) if !ids.is_empty() => {
                tracing::debug!(tasks = ids.len(), "the ended session's tasks are removed");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not remove an ended session's tasks"),
        }
    }

    async fn cancel_where(&self, which: impl Fn(&Live) -> bool, why: &str) {
        let live: Vec<Arc<Live>> = {
            let live = self.live.lock().expect("tasks lock");
            live.values().filter(|t| which(t)).cloned().collect()
        };
        for task in live {
            task.finish(TaskStatus::Cancelled, None, Some(why.into()))
                .await;
        }
    }

    /// Called by a task's driver when its work is over. A task whose end the store has not
    /// taken yet stays tracked: the lease renewals write it again ([`Live::renew`]).
    pub(crate) fn forget(&self, id: &str) {
        let mut live = self.live.lock().expect("tasks lock");
        if !live.get(id).is_some_and(|l| l.unsaved()) {
            live.remove(id);
        }
    }

    /// Makes sure the reaper runs (an instance that only reads tasks sweeps too: the tasks of
    /// stopped instances end even if nobody asks for them).
    pub(crate) fn touch(self: &Arc<Self>) {
        self.start_reaper();
    }

    /// Starts the reaper (every second: removes expired records, cancelling work still running
    /// for them, and ends the tasks of stopped instances) and the lease renewal of the tasks
    /// running here (every third of the lease).
    fn start_reaper(self: &Arc<Self>) {
        self.reaper.get_or_init(|| {
            let tasks: Weak<Tasks> = Arc::downgrade(self);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                loop {
                    tick.tick().await;
                    let Some(tasks) = tasks.upgrade() else { return };
                    tasks.reap(SystemTime::now()).await;
                }
            });
            let tasks: Weak<Tasks> = Arc::downgrade(self);
            let every = self.config.lease / 3;
            // After a failed round, the next comes sooner: a lease renewed a third of a lease
            // late has only a third left.
            let retry = every.min(Duration::from_secs(1));
            tokio::spawn(async move {
                // The first renewal is due a third of a lease after the first task started.
                let mut wait = every;
                loop {
                    tokio::time::sleep(wait).await;
                    let Some(tasks) = tasks.upgrade() else { return };
                    wait = if tasks.renew().await { every } else { retry };
                }
            });
        });
    }

    /// Renews the lease of every task running here, and writes the ends the store missed
    /// (until the store fails: the others wait for the next round rather than each for the
    /// store's own timeout); `false` when the store failed.
    async fn renew(&self) -> bool {
        let live: Vec<Arc<Live>> = self
            .live
            .lock()
            .expect("tasks lock")
            .values()
            .cloned()
            .collect();
        for task in live {
            let unsaved = task.unsaved();
            if !task.renew(self.config.lease).await {
                return false;
            }
            if unsaved && !task.unsaved() {
                tracing::debug!(task = %task.id, "the task's end is in the store at last");
                self.live.lock().expect("tasks lock").remove(&task.id);
            }
        }
        true
    }

    pub(crate) async fn reap(&self, now: SystemTime) {
        let mut expired = self.store.remove_expired(now).await.unwrap_or_default();
        // Tasks running here whose TTL ran out, whoever removed their record.
        expired.extend(
            self.live
                .lock()
                .expect("tasks lock")
                .values()
                .filter(|l| l.expires_at.is_some_and(|at| now >= at))
                .map(|l| l.id.clone()),
        );
        for id in expired {
            let live = self.live.lock().expect("tasks lock").remove(&id);
            if let Some(cancel) = live.as_ref().and_then(|l| l.canceller()) {
                tracing::debug!(task = %id, "task expired; its work is cancelled");
                cancel();
            }
        }
        let Ok(lapsed) = self.store.lapsed(now).await else {
            return;
        };
        for id in lapsed {
            if self.local(&id).is_none()
                && let Ok(Some(record)) = self.store.get(&id).await
            {
                let _ = self.settle_lapsed(record).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use serde_json::{Map, json};

    use super::{TaskConfig, Tasks};
    use crate::task::{
        MemoryTaskStore, StoreFuture, StoreLimits, TaskOutcome, TaskRecord, TaskStatus, TaskStore,
        TaskStoreError, UpdateOutcome,
    };

    fn tasks() -> Arc<Tasks> {
        Tasks::new(
            Arc::new(MemoryTaskStore::new()),
            TaskConfig::default(),
            None,
        )
    }

    #[tokio::test]
    async fn the_first_end_wins_and_answers_clear_their_questions() {
        let tasks = tasks();
        let live = tasks.prepare("me".into(), None, "t", None, None, None);
        tasks.admit(&live).await.unwrap();
        let first = live
            .ask("a".into(), json!({"method": "elicitation/create"}))
            .await
            .unwrap();
        let _second = live
            .ask("b".into(), json!({"method": "elicitation/create"}))
            .await
            .unwrap();
        assert!(
            live.ask("a".into(), json!({})).await.is_err(),
            "a key waits once"
        );
        let record = tasks.get(&live.id, "me").await.unwrap();
        assert_eq!(record.status, TaskStatus::InputRequired);
        assert_eq!(record.input_requests.len(), 2);

        let mut answers = Map::new();
        answers.insert("a".into(), json!({"action": "accept"}));
        answers.insert("nobody-asked".into(), json!(1));
        live.answer(answers).await;
        assert_eq!(first.await.unwrap(), json!({"action": "accept"}));
        let record = tasks.get(&live.id, "me").await.unwrap();
        assert_eq!(record.status, TaskStatus::InputRequired, "b still waits");
        assert_eq!(record.input_requests.keys().collect::<Vec<_>>(), ["b"]);

        live.withdraw("b").await;
        assert_eq!(
            tasks.get(&live.id, "me").await.unwrap().status,
            TaskStatus::Working
        );

        tasks.cancel(&live.id, "me").await.unwrap();
        live.finish(
            TaskStatus::Completed,
            Some(TaskOutcome::Result(json!({}))),
            None,
        )
        .await;
        let record = tasks.get(&live.id, "me").await.unwrap();
        assert_eq!(record.status, TaskStatus::Cancelled);
        assert_eq!(record.outcome, None);
        // Someone else's id is unknown.
        assert!(tasks.get(&live.id, "you").await.is_err());
    }

    /// Two instances sharing one store.
    fn fleet(lease: Duration) -> (Arc<Tasks>, Arc<Tasks>) {
        let store: Arc<MemoryTaskStore> = Arc::new(MemoryTaskStore::new());
        let config = TaskConfig {
            lease,
            ..TaskConfig::default()
        };
        (
            Tasks::new(Arc::new(store.clone()), config.clone(), None),
            Tasks::new(Arc::new(store), config, None),
        )
    }

    fn cancelled_flag(live: &super::Live) -> Arc<std::sync::atomic::AtomicBool> {
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let set = flag.clone();
        live.bind(Box::new(move || {
            set.store(true, std::sync::atomic::Ordering::SeqCst)
        }));
        flag
    }

    #[tokio::test]
    async fn a_cancel_elsewhere_is_stored_at_once_and_stops_the_work_at_the_next_write() {
        let (a, b) = fleet(Duration::from_secs(30));
        let live = a.prepare("me".into(), None, "t", None, None, None);
        let stopped = cancelled_flag(&live);
        a.admit(&live).await.unwrap();
        let before = b.cancel(&live.id, "me").await.unwrap();
        assert_eq!(before.status, TaskStatus::Working);
        let stored = a.get(&live.id, "me").await.unwrap();
        assert_eq!(stored.status, TaskStatus::Cancelled);
        assert_eq!(stored.lease, None);
        // The renewal finds the record ended: the work is cancelled, the end is kept.
        live.renew(Duration::from_secs(30)).await;
        assert!(stopped.load(std::sync::atomic::Ordering::SeqCst));
        live.finish(
            TaskStatus::Completed,
            Some(TaskOutcome::Result(json!({}))),
            None,
        )
        .await;
        let stored = b.get(&live.id, "me").await.unwrap();
        assert_eq!(stored.status, TaskStatus::Cancelled);
        assert_eq!(live.snapshot().await.status, TaskStatus::Cancelled);
        // A second cancel finds it over; someone else's id is unknown on every instance.
        let again = b.cancel(&live.id, "me").await.unwrap();
        assert_eq!(again.status, TaskStatus::Cancelled);
        assert!(b.cancel(&live.id, "you").await.is_err());
    }

    #[tokio::test]
    async fn a_lapsed_lease_ends_the_task_failed_for_readers_and_the_reaper() {
        let (a, b) = fleet(Duration::from_millis(300));
        let store = b.store.clone();
        let read = a.prepare("me".into(), None, "t", None, None, None);
        a.admit(&read).await.unwrap();
        let swept = a.prepare("me".into(), None, "t", None, None, None);
        a.admit(&swept).await.unwrap();
        // Renewed, it holds.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            b.get(&read.id, "me").await.unwrap().status,
            TaskStatus::Working
        );
        // `a` stops renewing (it died): after the lease, readers see it failed.
        drop(a);
        tokio::time::sleep(Duration::from_millis(450)).await;
        let failed = b.get(&read.id, "me").await.unwrap();
        assert_eq!(failed.status, TaskStatus::Failed);
        assert_eq!(failed.status_message.as_deref(), Some(super::STOPPED));
        assert!(matches!(failed.outcome, Some(TaskOutcome::Error(_))));
        assert_eq!(
            store.get(&swept.id).await.unwrap().unwrap().status,
            TaskStatus::Working,
            "nobody read it yet"
        );
        b.reap(SystemTime::now()).await;
        let swept_record = store.get(&swept.id).await.unwrap().unwrap();
        assert_eq!(swept_record.status, TaskStatus::Failed);
    }

    /// A shared store that can be taken down: every call fails while `down` is set.
    struct Flaky {
        inner: MemoryTaskStore,
        down: std::sync::atomic::AtomicBool,
    }

    impl Flaky {
        fn check(&self) -> Result<(), TaskStoreError> {
            if self.down.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(TaskStoreError::Unavailable("down".into()));
            }
            Ok(())
        }
    }

    fn failing<'a, T: Send + 'a>(e: TaskStoreError) -> StoreFuture<'a, T> {
        Box::pin(std::future::ready(Err(e)))
    }

    impl TaskStore for Flaky {
        fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()> {
            match self.check() {
                Ok(()) => self.inner.create(record, limits),
                Err(e) => failing(e),
            }
        }
        fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
            match self.check() {
                Ok(()) => self.inner.get(id),
                Err(e) => failing(e),
            }
        }
        fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
            match self.check() {
                Ok(()) => self.inner.put(record),
                Err(e) => failing(e),
            }
        }
        fn update(&self, record: TaskRecord) -> StoreFuture<'_, UpdateOutcome> {
            match self.check() {
                Ok(()) => self.inner.update(record),
                Err(e) => failing(e),
            }
        }
        fn lapsed(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
            match self.check() {
                Ok(()) => self.inner.lapsed(now),
                Err(e) => failing(e),
            }
        }
        fn remove(&self, id: &str) -> StoreFuture<'_, ()> {
            match self.check() {
                Ok(()) => self.inner.remove(id),
                Err(e) => failing(e),
            }
        }
        fn list(
            &self,
            owner: &str,
            after: Option<&str>,
            limit: usize,
        ) -> StoreFuture<'_, (Vec<TaskRecord>, bool)> {
            match self.check() {
                Ok(()) => self.inner.list(owner, after, limit),
                Err(e) => failing(e),
            }
        }
        fn remove_expired(&self, now: SystemTime) -> StoreFuture<'_, Vec<String>> {
            match self.check() {
                Ok(()) => self.inner.remove_expired(now),
                Err(e) => failing(e),
            }
        }
    }

    /// A task that ends while the store is down is written when the store is back (by the
    /// next lease renewal round, which comes within a second after a failed one), not left
    /// `working` until its lease lapses and another instance ends it `failed`. The rounds are
    /// run by hand here (the default lease puts the first timed one 10 s away).
    #[tokio::test]
    async fn an_end_the_store_missed_is_written_when_it_is_back() {
        let store = Arc::new(Flaky {
            inner: MemoryTaskStore::new(),
            down: false.into(),
        });
        let here = Tasks::new(store.clone(), TaskConfig::default(), None);
        let elsewhere = Tasks::new(store.clone(), TaskConfig::default(), None);
        let live = here.prepare("me".into(), None, "t", None, None, None);
        here.admit(&live).await.unwrap();
        store.down.store(true, std::sync::atomic::Ordering::SeqCst);
        live.finish(
            TaskStatus::Completed,
            Some(TaskOutcome::Result(json!({"ok": true}))),
            None,
        )
        .await;
        // The driver is done with it; it stays tracked until its end is stored.
        here.forget(&live.id);
        assert!(here.local(&live.id).is_some());
        // A renewal round while the store is down fails (the next comes sooner) ...
        assert!(!here.renew().await);
        assert_eq!(
            store.inner.get(&live.id).await.unwrap().unwrap().status,
            TaskStatus::Working
        );
        assert!(here.local(&live.id).is_some());
        // ... and the one after it, with the store back, writes the end.
        store.down.store(false, std::sync::atomic::Ordering::SeqCst);
        assert!(here.renew().await);
        let stored = elsewhere.get(&live.id, "me").await.unwrap();
        assert_eq!(stored.status, TaskStatus::Completed);
        assert_eq!(
            stored.outcome,
            Some(TaskOutcome::Result(json!({"ok": true})))
        );
        assert_eq!(stored.lease, None);
        assert!(here.local(&live.id).is_none(), "no longer tracked");
        // Long after its lease would have lapsed, it is still completed: nobody failed it.
        elsewhere
            .reap(SystemTime::now() + 4 * TaskConfig::default().lease)
            .await;
        assert_eq!(
            elsewhere.get(&live.id, "me").await.unwrap().status,
            TaskStatus::Completed
        );
    }

    #[tokio::test]
    async fn waiting_elsewhere_polls_until_the_task_ends() {
        let (a, b) = fleet(Duration::from_secs(30));
        let live = a.prepare("me".into(), None, "t", None, None, None);
        a.admit(&live).await.unwrap();
        let waiter = tokio::spawn({
            let (b, id) = (b.clone(), live.id.clone());
            async move { b.wait(&id, "me").await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiter.is_finished());
        live.finish(
            TaskStatus::Completed,
            Some(TaskOutcome::Result(json!({"ok": true}))),
            None,
        )
        .await;
        let record = tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the wait ends")
            .unwrap()
            .unwrap();
        assert_eq!(record.status, TaskStatus::Completed);
        assert_eq!(
            record.outcome,
            Some(TaskOutcome::Result(json!({"ok": true})))
        );
    }

    #[tokio::test]
    async fn reaping_and_shutdown_end_what_runs() {
        let tasks = tasks();
        let short = tasks.prepare(
            "me".into(),
            None,
            "t",
            Some(Duration::from_secs(1)),
            None,
            None,
        );
        tasks.admit(&short).await.unwrap();
        let long = tasks.prepare("me".into(), None, "t", None, None, None);
        tasks.admit(&long).await.unwrap();
        assert_eq!(short.snapshot().await.ttl, Some(Duration::from_secs(1)));
        tasks.reap(SystemTime::now() + Duration::from_secs(2)).await;
        assert!(
            tasks.get(&short.id, "me").await.is_err(),
            "expired and removed"
        );
        assert!(tasks.local(&short.id).is_none());
        tasks.shutdown().await;
        let record = tasks.get(&long.id, "me").await.unwrap();
        assert_eq!(record.status, TaskStatus::Cancelled);
        assert_eq!(
            record.status_message.as_deref(),
            Some("The server shut down")
        );
    }
}
