//! Tasks: tool calls that outlive their request.
//!
//! A tool declared `#[tool(task = "optional")]` or `#[tool(task = "required")]` may run as a
//! task: the call returns a task handle at once, the work goes on in the background, and the
//! client polls it (`tasks/get`), answers its questions and cancels it, even after it
//! disconnected. The fn is written like any other tool: [`Context`](crate::Context) progress,
//! logs, cancellation and asks all work inside a task. Whether a call becomes a task is decided
//! by the server per request, from the tool's setting and what the client declared:
//!
//! | tool's `task` | client supports tasks | client does not |
//! |---|---|---|
//! | never (default) | runs as a plain call | runs as a plain call |
//! | `"optional"` | a task | runs as a plain call |
//! | `"required"` | a task | refused (-32021 in 2026-07-28, -32601 in 2025-11-25) |
//!
//! On the wire, in each era:
//! - **2026-07-28** (extension `io.modelcontextprotocol/tasks`, declared per request in
//!   `_meta` client capabilities): `tools/call` answers `resultType: "task"` with the task;
//!   `tasks/get` returns it with its `result` or `error` once done and its `inputRequests`
//!   while it waits for answers; `tasks/update` delivers `inputResponses`; `tasks/cancel`
//!   acknowledges. A call whose tool finishes before its first wait answers with the result
//!   itself. An ask made with [`Context::ask_upfront`](crate::Context::ask_upfront) before the
//!   tool first waits runs as a multi-round-trip request (`InputRequiredResult`) before any
//!   task exists.
//! - **2025-11-25** (experimental `tasks` capability, the client asks with the `task` param of
//!   `tools/call`): `CreateTaskResult`, `tasks/get`, the blocking `tasks/result`,
//!   `tasks/list` and `tasks/cancel`, and `notifications/tasks/status`. A task's asks go to the
//!   client as requests, as in any session-era call, tagged with the related task.
//!
//! A task belongs to the session (session era) or the caller (2026-07-28: the same caller a
//! `requestState` is bound to) that created it: anyone else asking for its id is told it does
//! not exist. Tasks live until their TTL (counted from creation) runs out; then they are removed,
//! and a task still running is cancelled. Each client (its verified principal, else its
//! address, across all of its sessions) may hold a bounded number of records, finished or not,
//! and finished ones make room before a task is refused ([`StoreLimits`]); a session's finished
//! tasks are removed when it ends. Records are kept by a [`TaskStore`]
//! ([`MemoryTaskStore`] by default; [`ServerBuilder::task_store`](crate::ServerBuilder::task_store)
//! sets another); the work itself runs in the process that created the task.
//!
//! ## Several instances sharing one store
//!
//! With a shared store (`mcp_redis::RedisTaskStore`), a task created through one instance is
//! read (`tasks/get`, `tasks/result`, `tasks/list`) and cancelled (`tasks/cancel`) through any
//! other. Every write is a compare-and-set on the record's [`revision`](TaskRecord::revision),
//! and a terminal status is final, so instances never overwrite each other:
//!
//! - **Leases.** The instance running a task holds a [`Lease`] on it, renewed every third of the
//!   lease ([`ServerBuilder::task_lease`](crate::ServerBuilder::task_lease), 30 s by default).
//!   When the lease lapses (the instance was killed), whoever reads the task next, or the
//!   reaper of any instance (every second), ends it `failed` with the status message
//!   *"The instance running this task stopped"*: a task is never `working` forever.
//! - **Cancellation.** `tasks/cancel` on another instance writes `cancelled` to the store at
//!   once (before it answers, as the spec asks). The owning instance sees it at its next
//!   write, at the latest at its next lease renewal, and stops the work then: the work stops
//!   within a third of the lease (10 s by default).
//! - **Results.** `tasks/result` on an instance that does not run the task polls the store at
//!   the task's poll interval until the task is terminal, its lease lapses (`failed`) or its
//!   TTL ends (unknown task).
//! - Answers to a 2026-07-28 task's questions (`tasks/update`) must reach the instance that
//!   runs it; elsewhere they are refused with a clear error.

mod live;
mod store;
mod tasks;
pub(crate) mod time;

pub(crate) use live::{Live, OnChange, Origin};
#[allow(deprecated)]
pub use store::Update;
pub use store::{
    MemoryTaskStore, StoreFuture, StoreLimits, TaskStore, TaskStoreError, UpdateOutcome,
};
pub(crate) use tasks::{Announce, TaskConfig, Tasks};
pub(crate) use time::{later, rfc3339};

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a tool may run as a task (`#[tool(task = "…")]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client supports tasks, a plain call otherwise.
    Optional,
    /// Always a task: clients without task support are refused.
    Required,
}

impl TaskSupport {
    /// The 2025-11-25 `execution.taskSupport` value.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client to answer its questions.
    InputRequired,
    /// Done, with a result (which may be a tool error: `isError`).
    Completed,
    /// Ended by a protocol error (the tool's `Err(McpError)` or a panic).
    Failed,
    /// Cancelled by the client, by its TTL or by the server's shutdown.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is over (completed, failed or cancelled).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// What a task ended with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskOutcome {
    /// The tool's result (a `CallToolResult`, as JSON).
    Result(Value),
    /// A JSON-RPC error object (`code`, `message`, `data`).
    Error(Value),
}

/// Everything the server keeps about one task. A [`TaskStore`] keeps these; the running work
/// itself stays in the process that started it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task's id (128 random bits, hex).
    pub id: String,
    /// Who may see it: a digest of its session or caller, never the credentials themselves.
    pub owner: String,
    /// Whose limit it counts against ([`StoreLimits::max_per_owner`]): the client that created
    /// it, as a digest of its verified principal, else of its address, whatever session it
    /// called through (`None`: its [`owner`](Self::owner), as for a stdio session or a record
    /// written before this field existed). See [`counts_against`](Self::counts_against).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The tool it runs.
    pub tool: String,
    /// Its status.
    pub status: TaskStatus,
    /// A human-readable word on its status.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When its status (or its questions) last changed.
    pub last_updated_at: SystemTime,
    /// How long it is kept from creation (`None`: until the server stops).
    pub ttl: Option<Duration>,
    /// How often the client is asked to poll.
    pub poll_interval: Duration,
    /// Questions waiting for the client's answer, by key (`{method, params}` each).
    pub input_requests: Map<String, Value>,
    /// How it ended, once terminal.
    pub outcome: Option<TaskOutcome>,
    /// How many times the record was written since its creation (0). A store writes a record
    /// only over the revision its writer read ([`TaskStore::update`]).
    #[serde(default)]
    pub revision: u64,
    /// Which instance runs the task, and until when it promised to renew that claim; `None`
    /// once the task is terminal.
    #[serde(default)]
    pub lease: Option<Lease>,
}

/// An instance's claim on a running task: it renews it while the work runs, and a task whose
/// lease lapsed is ended `failed` by whoever sees it next.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    /// The instance running the task (random per process).
    pub instance: String,
    /// When the claim lapses unless renewed.
    pub expires_at: SystemTime,
}

impl TaskRecord {
    /// When the task may be removed (`None`: never, also for a `ttl` past the end of time,
    /// which a record read back from a store may hold).
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.ttl.and_then(|ttl| self.created_at.checked_add(ttl))
    }

    /// The key its owner's limit counts it under: [`client`](Self::client), else
    /// [`owner`](Self::owner).
    pub fn counts_against(&self) -> &str {
        self.client.as_deref().unwrap_or(&self.owner)
    }

    /// Whether its TTL has run out at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at().is_some_and(|at| now >= at)
    }

    /// Whether the task is unfinished and the instance running it let its lease lapse at
    /// `now` (it stopped without ending the task).
    pub fn lease_lapsed(&self, now: SystemTime) -> bool {
        !self.status.is_terminal() && self.lease.as_ref().is_some_and(|l| now >= l.expires_at)
    }
}
