//! One task whose work runs in this process: its record (written through to the
//! [`TaskStore`] as compare-and-sets, in order), the questions it waits on, and its
//! cancellation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};

use super::store::{StoreLimits, UpdateOutcome};
use super::{TaskOutcome, TaskRecord, TaskStatus, TaskStore, TaskStoreError};
use crate::protocol::McpError;
use crate::request::{AskFuture, RoundAsks, TaskAsks};
use crate::request_state::round::Round;

/// Where a task's status change was made: by this instance, or by another one sharing the
/// store (it cancelled the task, or ended it at a lapsed lease) and announced it itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Here,
    Elsewhere,
}

/// Told of every status change of a task the client knows of.
pub(crate) type OnChange = Box<dyn Fn(&TaskRecord, Origin) + Send + Sync>;

/// Cancels a task's work.
pub(crate) type Canceller = Box<dyn Fn() + Send + Sync>;

/// One task whose work runs here.
pub(crate) struct Live {
    pub(crate) id: String,
    /// Its owner (also in the record, which is behind an async lock).
    pub(super) owner: String,
    /// When its TTL runs out (also in the record).
    pub(super) expires_at: Option<SystemTime>,
    store: Arc<dyn TaskStore>,
    /// The record; every change is written to the store under this lock, so one task's writes
    /// reach the store in order.
    record: tokio::sync::Mutex<TaskRecord>,
    /// Whether the record is in the store yet (it goes in before the tool's first poll).
    stored: AtomicBool,
    /// Whether the task ended while the store was unavailable: its end is written again at
    /// each lease renewal until the store takes it, and the task stays tracked until then
    /// (else the store would keep it `working` until its lease lapsed, and then `failed`).
    unsaved: AtomicBool,
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

/// How a write of a task's record went.
enum Wrote {
    /// Written (or not to be written: not in the store yet).
    Done,
    /// The store failed; the next write tries again.
    Unavailable,
    /// Another instance ended the task meanwhile; the record is now the stored one.
    EndedElsewhere,
    /// The record is gone from the store (its TTL ran out, or the store lost it).
    Gone,
}

impl Live {
    /// A task for `record`, not in the store yet ([`create`](Self::create) puts it there).
    pub(super) fn new(
        record: TaskRecord,
        store: Arc<dyn TaskStore>,
        round: Option<Arc<Round>>,
        on_change: Option<OnChange>,
    ) -> Live {
        Live {
            id: record.id.clone(),
            owner: record.owner.clone(),
            expires_at: record.expires_at(),
            store,
            record: tokio::sync::Mutex::new(record),
            stored: AtomicBool::new(false),
            unsaved: AtomicBool::new(false),
            started: AtomicBool::new(false),
            cancel: OnceLock::new(),
            waiting: Mutex::default(),
            next: Mutex::default(),
            round,
            done: watch::channel(false).0,
            on_change,
        }
    }

    /// Puts the record in the store, within `limits`.
    pub(super) async fn create(&self, limits: StoreLimits) -> Result<(), TaskStoreError> {
        let record = self.record.lock().await;
        self.store.create(record.clone(), limits).await?;
        self.stored.store(true, Ordering::Release);
        Ok(())
    }

    /// Whether the task ended while the store was unavailable (its end is not stored yet).
    pub(super) fn unsaved(&self) -> bool {
        self.unsaved.load(Ordering::Acquire)
    }

    /// What stops the work, once bound.
    pub(super) fn canceller(&self) -> Option<&Canceller> {
        self.cancel.get()
    }

    /// Waits until the task is terminal.
    pub(super) async fn done(&self) {
        let mut done = self.done.subscribe();
        let _ = done.wait_for(|d| *d).await;
    }

    /// Sets what stops the work.
    pub(crate) fn bind(&self, cancel: Canceller) {
        let _ = self.cancel.set(cancel);
    }

    /// A copy of the record.
    pub(crate) async fn snapshot(&self) -> TaskRecord {
        self.record.lock().await.clone()
    }

    /// Writes the record through, over the revision last written: the store refuses it when
    /// another instance wrote meanwhile (it cancelled the task, or ended it at a lapsed lease).
    async fn write(&self, record: &mut TaskRecord) -> Wrote {
        if !self.stored.load(Ordering::Acquire) {
            return Wrote::Done;
        }
        // Only terminal states are written by others; a stale unfinished one (not written by
        // this server) is overwritten at its revision, at most twice.
        for _ in 0..3 {
            match self.store.update(record.clone()).await {
                Ok(UpdateOutcome::Written) => {
                    record.revision = record.revision.wrapping_add(1);
                    return Wrote::Done;
                }
                Ok(UpdateOutcome::Stale(stored)) if stored.status.is_terminal() => {
                    *record = *stored;
                    return Wrote::EndedElsewhere;
                }
                Ok(UpdateOutcome::Stale(stored)) => record.revision = stored.revision,
                Ok(UpdateOutcome::Missing) => return Wrote::Gone,
                Err(e) => {
                    tracing::warn!(task = %self.id, error = %e, "could not write a task's record");
                    return Wrote::Unavailable;
                }
            }
        }
        Wrote::Done
    }

    /// Takes the end another instance gave the task (or the loss of its record) as its own:
    /// the questions are dropped and the work is cancelled.
    fn ended_elsewhere(&self, mut record: tokio::sync::MutexGuard<'_, TaskRecord>, how: Wrote) {
        match how {
            Wrote::EndedElsewhere => {
                tracing::debug!(task = %self.id, status = ?record.status, "task ended by another instance");
                if let Some(on_change) = &self.on_change
                    && self.started.load(Ordering::Acquire)
                {
                    on_change(&record, Origin::Elsewhere);
                }
            }
            Wrote::Gone | Wrote::Done | Wrote::Unavailable => {
                tracing::warn!(task = %self.id, "the task's record is gone from the store; its work is cancelled");
                record.status = TaskStatus::Cancelled;
                record.status_message =
                    Some("The task's record is gone from the task store".into());
                record.outcome = None;
                record.input_requests.clear();
                record.lease = None;
            }
        }
        self.done.send_replace(true);
        drop(record);
        self.waiting.lock().expect("task lock").clear();
        if let Some(cancel) = self.cancel.get() {
            cancel();
        }
    }

    /// Applies `change` to the record unless it is terminal, and writes it through; whether it
    /// changed (not if another instance ended the task meanwhile).
    async fn change(&self, change: impl FnOnce(&mut TaskRecord)) -> bool {
        let mut record = self.record.lock().await;
        if record.status.is_terminal() {
            return false;
        }
        change(&mut record);
        record.last_updated_at = SystemTime::now().max(record.last_updated_at);
        if record.status.is_terminal() {
            record.lease = None;
        }
        match self.write(&mut record).await {
            Wrote::Done => {}
            Wrote::Unavailable => {
                if record.status.is_terminal() {
                    self.unsaved.store(true, Ordering::Release);
                }
            }
            how => {
                self.ended_elsewhere(record, how);
                return false;
            }
        }
        if let Some(on_change) = &self.on_change
            && self.started.load(Ordering::Acquire)
        {
            on_change(&record, Origin::Here);
        }
        if record.status.is_terminal() {
            self.done.send_replace(true);
        }
        true
    }

    /// Renews this instance's lease on the task (for `lease` from now); notices so that another
    /// instance ended it. `false` when the store failed.
    pub(crate) async fn renew(&self, lease: Duration) -> bool {
        let mut record = self.record.lock().await;
        if !self.stored.load(Ordering::Acquire) {
            return true;
        }
        if record.status.is_terminal() {
            if !self.unsaved.load(Ordering::Acquire) {
                return true;
            }
            // It ended while the store was down: its end, again (or, if another instance
            // ended it meanwhile, that end, which the record now holds).
            let wrote = self.write(&mut record).await;
            let saved = !matches!(wrote, Wrote::Unavailable);
            if saved {
                self.unsaved.store(false, Ordering::Release);
            }
            return saved;
        }
        if let Some(claim) = &mut record.lease {
            claim.expires_at = super::later(SystemTime::now(), lease);
        }
        match self.write(&mut record).await {
            Wrote::Done => true,
            Wrote::Unavailable => false,
            how => {
                self.ended_elsewhere(record, how);
                true
            }
        }
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
        match self.write(&mut record).await {
            Wrote::Done | Wrote::Unavailable => {}
            how => {
                self.ended_elsewhere(record, how);
                return;
            }
        }
        if let Some(on_change) = &self.on_change {
            on_change(&record, Origin::Here);
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

impl TaskAsks for Live {
    fn id(&self) -> &str {
        &self.id
    }

    fn next_key(&self, prefix: &'static str) -> String {
        Live::next_key(self, prefix)
    }

    fn upfront(&self) -> Option<&dyn RoundAsks> {
        if self.started.load(Ordering::Acquire) {
            return None;
        }
        self.round.as_deref().map(|round| round as &dyn RoundAsks)
    }

    fn ask(
        &self,
        key: String,
        request: Value,
    ) -> AskFuture<'_, Result<oneshot::Receiver<Value>, McpError>> {
        Box::pin(Live::ask(self, key, request))
    }

    fn withdraw<'a>(&'a self, key: &'a str) -> AskFuture<'a, ()> {
        Box::pin(Live::withdraw(self, key))
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}
