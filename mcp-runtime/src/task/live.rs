//! The tasks running in this process: their records (written through to the [`TaskStore`]),
//! the questions they wait on, their cancellation, and the reaper that ends them at their TTL.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};

use super::store::StoreLimits;
use super::{TaskOutcome, TaskRecord, TaskStatus, TaskStore, TaskStoreError};
use crate::ask::round::Round;
use crate::protocol::McpError;

/// Told of every status change of a task the client knows of.
pub(crate) type OnChange = Box<dyn Fn(&TaskRecord) + Send + Sync>;

/// Cancels a task's work.
pub(crate) type Canceller = Box<dyn Fn() + Send + Sync>;

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
        }
    }
}

/// Every task of one server.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    /// The tasks whose work runs in this process, by id.
    live: Mutex<HashMap<String, Arc<Live>>>,
    pub(crate) config: TaskConfig,
    reaper: OnceLock<()>,
}

/// One task whose work runs here.
pub(crate) struct Live {
    pub(crate) id: String,
    /// Its owner (also in the record, which is behind an async lock).
    owner: String,
    store: Arc<dyn TaskStore>,
    /// The record; every change is written to the store under this lock, so one task's writes
    /// reach the store in order.
    record: tokio::sync::Mutex<TaskRecord>,
    /// Whether the record is in the store yet (it goes in before the tool's first poll).
    stored: AtomicBool,
    /// Whether the client has been told about the task (its asks no longer go into a
    /// multi-round-trip `InputRequiredResult`).
    pub(crate) started: AtomicBool,
    /// Cancels the task's work (holding its context weakly: the context holds this task).
    cancel: OnceLock<Canceller>,
    /// Answers awaited, by key.
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// The next key number of each kind of ask.
    next: Mutex<HashMap<&'static str, usize>>,
    /// The multi-round-trip round of the call that created the task (2026-07-28), for the asks
    /// made upfront, before the task started.
    pub(crate) round: Option<Arc<Round>>,
    /// Flips to `true` when the task is terminal.
    done: watch::Sender<bool>,
    /// Told of every status change (session era: `notifications/tasks/status`).
    on_change: Option<OnChange>,
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

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, config: TaskConfig) -> Arc<Tasks> {
        Arc::new(Tasks {
            store,
            live: Mutex::default(),
            config,
            reaper: OnceLock::new(),
        })
    }

    /// A new task (not in the store yet: [`Live::store`] puts it there) for `owner`, with the
    /// TTL the client asked for (bounded), or the default.
    pub(crate) fn prepare(
        &self,
        owner: String,
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
        let id = crate::id::random_id();
        let record = TaskRecord {
            id: id.clone(),
            owner: owner.clone(),
            tool: tool.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: Some(ttl),
            poll_interval: self.config.poll_interval,
            input_requests: Map::new(),
            outcome: None,
        };
        Arc::new(Live {
            id,
            owner,
            store: self.store.clone(),
            record: tokio::sync::Mutex::new(record),
            stored: AtomicBool::new(false),
            started: AtomicBool::new(false),
            cancel: OnceLock::new(),
            waiting: Mutex::default(),
            next: Mutex::default(),
            round,
            done: watch::channel(false).0,
            on_change,
        })
    }

    /// Puts a prepared task in the store (within the limits) and tracks it here.
    pub(crate) async fn admit(self: &Arc<Self>, live: &Arc<Live>) -> Result<(), McpError> {
        let record = live.record.lock().await;
        self.store
            .create(record.clone(), self.config.limits)
            .await
            .map_err(store_error)?;
        live.stored.store(true, Ordering::Release);
        drop(record);
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

    /// The record of task `id`, if `owner` may see it.
    pub(crate) async fn get(&self, id: &str, owner: &str) -> Result<TaskRecord, McpError> {
        match self.store.get(id).await {
            Ok(Some(record)) if record.owner == owner => Ok(record),
            Ok(_) => Err(not_found(id)),
            Err(e) => Err(McpError::internal(format!("Cannot read the task: {e}"))),
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

    /// Cancels task `id`: its status before (a terminal one is left as it was).
    pub(crate) async fn cancel(&self, id: &str, owner: &str) -> Result<TaskRecord, McpError> {
        let record = self.get(id, owner).await?;
        if record.status.is_terminal() {
            return Ok(record);
        }
        match self.local(id) {
            Some(live) => {
                live.finish(
                    TaskStatus::Cancelled,
                    None,
                    Some("The task was cancelled by request".into()),
                )
                .await;
                Ok(record)
            }
            None => Err(McpError::internal(
                "The task runs on another server instance and cannot be cancelled here",
            )),
        }
    }

    /// Waits until task `id` is terminal; its final record.
    pub(crate) async fn wait(&self, id: &str, owner: &str) -> Result<TaskRecord, McpError> {
        let record = self.get(id, owner).await?;
        if record.status.is_terminal() {
            return Ok(record);
        }
        if let Some(live) = self.local(id) {
            let mut done = live.done.subscribe();
            let _ = done.wait_for(|d| *d).await;
        }
        self.get(id, owner).await
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

    /// Called by a task's driver when its work is over.
    pub(crate) fn forget(&self, id: &str) {
        self.live.lock().expect("tasks lock").remove(id);
    }

    /// Removes expired records every second, cancelling work still running for them.
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
        });
    }

    pub(crate) async fn reap(&self, now: SystemTime) {
        let Ok(expired) = self.store.remove_expired(now).await else {
            return;
        };
        for id in expired {
            let live = self.live.lock().expect("tasks lock").remove(&id);
            if let Some(cancel) = live.as_ref().and_then(|l| l.cancel.get()) {
                tracing::debug!(task = %id, "task expired; its work is cancelled");
                cancel();
            }
        }
    }
}

impl Live {
    /// Sets what stops the work.
    pub(crate) fn bind(&self, cancel: Canceller) {
        let _ = self.cancel.set(cancel);
    }

    /// A copy of the record.
    pub(crate) async fn snapshot(&self) -> TaskRecord {
        self.record.lock().await.clone()
    }

    /// Applies `change` to the record unless it is terminal, and writes it through; whether it
    /// changed.
    async fn change(&self, change: impl FnOnce(&mut TaskRecord)) -> bool {
        let mut record = self.record.lock().await;
        if record.status.is_terminal() {
            return false;
        }
        change(&mut record);
        record.last_updated_at = SystemTime::now().max(record.last_updated_at);
        if self.stored.load(Ordering::Acquire)
            && let Err(e) = self.store.put(record.clone()).await
        {
            tracing::warn!(task = %self.id, error = %e, "could not write a task's record");
        }
        if let Some(on_change) = &self.on_change
            && self.started.load(Ordering::Acquire)
        {
            on_change(&record);
        }
        if record.status.is_terminal() {
            self.done.send_replace(true);
        }
        true
    }

    /// Ends the task with `status` (first end wins: a cancelled task stays cancelled).
    pub(crate) async fn finish(
        &self,
        status: TaskStatus,
        outcome: Option<TaskOutcome>,
        message: Option<String>,
    ) {
        let changed = self
            .change(|r| {
                r.status = status;
                r.outcome = outcome;
                r.status_message = message;
                r.input_requests.clear();
            })
            .await;
        if changed {
            self.waiting.lock().expect("task lock").clear();
            if status == TaskStatus::Cancelled
                && let Some(cancel) = self.cancel.get()
            {
                cancel();
            }
        }
    }

    /// The key of the next ask of a kind: `elicit-0`, `elicit-1`, `sample-0`, …
    pub(crate) fn next_key(&self, prefix: &'static str) -> String {
        let mut next = self.next.lock().expect("task lock");
        let n = next.entry(prefix).or_insert(0);
        let key = format!("{prefix}-{n}");
        *n += 1;
        key
    }

    /// Parks the task on a question: it is `input_required` until every question has an
    /// answer. The answer arrives through [`answer`](Self::answer).
    pub(crate) async fn ask(
        &self,
        key: String,
        request: Value,
    ) -> Result<oneshot::Receiver<Value>, McpError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut waiting = self.waiting.lock().expect("task lock");
            if waiting.contains_key(&key) {
                return Err(McpError::internal(format!(
                    "The task already waits for an answer under the key `{key}`"
                )));
            }
            waiting.insert(key.clone(), tx);
        }
        let changed = self
            .change(|r| {
                r.input_requests.insert(key.clone(), request);
                r.status = TaskStatus::InputRequired;
            })
            .await;
        if !changed {
            self.waiting.lock().expect("task lock").remove(&key);
            return Err(McpError::internal("The task is over"));
        }
        Ok(rx)
    }

    /// Hands the client's answers to the questions waiting for them; the answered questions
    /// leave the record at once, and the task is `working` again once none is left.
    pub(crate) async fn answer(&self, mut responses: Map<String, Value>) {
        let mut record = self.record.lock().await;
        if record.status.is_terminal() {
            return;
        }
        let mut senders = Vec::new();
        {
            let mut waiting = self.waiting.lock().expect("task lock");
            for (key, answer) in std::mem::take(&mut responses) {
                if let Some(tx) = waiting.remove(&key) {
                    record.input_requests.remove(&key);
                    senders.push((tx, answer));
                }
            }
        }
        if senders.is_empty() {
            return;
        }
        if record.input_requests.is_empty() {
            record.status = TaskStatus::Working;
        }
        record.last_updated_at = SystemTime::now().max(record.last_updated_at);
        if self.stored.load(Ordering::Acquire)
            && let Err(e) = self.store.put(record.clone()).await
        {
            tracing::warn!(task = %self.id, error = %e, "could not write a task's record");
        }
        if let Some(on_change) = &self.on_change {
            on_change(&record);
        }
        drop(record);
        for (tx, answer) in senders {
            let _ = tx.send(answer);
        }
    }

    /// Takes a question back whose ask ended without an answer (cancelled, dropped).
    pub(crate) async fn withdraw(&self, key: &str) {
        if self
            .waiting
            .lock()
            .expect("task lock")
            .remove(key)
            .is_none()
        {
            return;
        }
        self.change(|r| {
            r.input_requests.remove(key);
            if r.input_requests.is_empty() {
                r.status = TaskStatus::Working;
            }
        })
        .await;
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use serde_json::{Map, json};

    use super::{TaskConfig, Tasks};
    use crate::task::{MemoryTaskStore, TaskOutcome, TaskStatus};

    fn tasks() -> Arc<Tasks> {
        Tasks::new(Arc::new(MemoryTaskStore::new()), TaskConfig::default())
    }

    #[tokio::test]
    async fn the_first_end_wins_and_answers_clear_their_questions() {
        let tasks = tasks();
        let live = tasks.prepare("me".into(), "t", None, None, None);
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

    #[tokio::test]
    async fn reaping_and_shutdown_end_what_runs() {
        let tasks = tasks();
        let short = tasks.prepare("me".into(), "t", Some(Duration::from_secs(1)), None, None);
        tasks.admit(&short).await.unwrap();
        let long = tasks.prepare("me".into(), "t", None, None, None);
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
