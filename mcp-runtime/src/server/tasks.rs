//! The `tasks/*` methods, in both eras (see [`crate::task`]), and the wire form of a task.
//!
//! - 2026-07-28: the `io.modelcontextprotocol/tasks` extension, declared by the client per
//!   request; `tasks/get`, `tasks/update`, `tasks/cancel`.
//! - 2025-11-25: the experimental `tasks` capability and the `task` param of `tools/call`;
//!   `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`.
//!
//! A `tools/call` that runs as a task is in `task_call.rs`.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::connection::{Connection, Step};
use super::era::{Cache, Scope};
use super::handler::{Outcome, run, unread};
use crate::catalog::Change;
use crate::protocol::params::{Body, Request};
use crate::protocol::{ErrorCode, McpError, ProtocolEra, ProtocolVersion};
use crate::task::{TaskOutcome, TaskRecord, TaskStatus, rfc3339};

/// The 2026-07-28 extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

pub(super) fn declares_extension(scope: &Scope) -> bool {
    scope
        .client
        .capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some()
}

/// -32021 naming the tasks extension.
pub(super) fn missing_extension(why: &str) -> McpError {
    McpError::new(
        ErrorCode::MISSING_CLIENT_CAPABILITY,
        format!("{why}: the client did not declare the `{EXTENSION}` extension"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } }))
}

/// Announces, on listen streams, the changes this instance makes to 2026-07-28 tasks running
/// on another instance (it cancelled one, or ended one whose instance stopped). Session-era
/// tasks have no listen streams: their session hears it when it asks.
pub(crate) fn announcer(catalog: crate::catalog::Catalog) -> crate::task::Announce {
    Box::new(move |record: &TaskRecord| {
        if record.owner.starts_with("caller:") {
            let task = task_object(record, ProtocolEra::Stateless, true);
            catalog.task_changed(&record.id, &record.owner, &task);
        }
    })
}

/// The state of each of `owner`'s tasks in `ids` (those it may see), as the changes a listen
/// stream sends after it may have missed some (the change bus reconnected): a task status
/// announced meanwhile is not lost for good.
pub(super) async fn current(conn: &Connection, owner: &str, ids: &[String]) -> Vec<Change> {
    let mut changes = Vec::new();
    for id in ids {
        if let Ok(record) = conn.server.inner.tasks.get(id, owner).await {
            let task = task_object(&record, ProtocolEra::Stateless, true);
            changes.push(Change::Task {
                id: id.as_str().into(),
                owner: owner.into(),
                task: task.to_string().into(),
            });
        }
    }
    changes
}

/// Who may see the tasks a request creates or names: its session, or (2026-07-28) its caller,
/// as a digest.
pub(crate) fn owner(conn: &Connection, scope: &Scope) -> String {
    match scope.version().era() {
        ProtocolEra::Session => conn.task_owner(),
        ProtocolEra::Stateless => {
            let caller = conn
                .server
                .inner
                .caller(scope.headers.as_deref(), scope.principal.as_deref());
            match caller {
                Some(bytes) => format!("caller:{}", crate::id::digest_hex(&bytes)),
                None => "caller:anonymous".into(),
            }
        }
    }
}

/// Whose limit the tasks a request creates count against ([`TaskRecord::client`]): its
/// verified principal, else its address. Not its session (one caller opening many sessions
/// is one client), nor an identity nobody verified (a made-up `Authorization` header never
/// opens a new allowance). `None` where there is neither (stdio: one process, one client).
pub(super) fn client(scope: &Scope) -> Option<String> {
    if let Some(principal) = scope.principal.as_deref() {
        let key = principal.caller_key();
        return Some(format!("principal:{}", crate::id::digest_hex(&key)));
    }
    scope.peer.map(|ip| {
        format!(
            "address:{}",
            crate::id::digest_hex(ip.to_string().as_bytes())
        )
    })
}

/// A task as the wire shows it. `detailed` (2026-07-28 `tasks/get`) adds what it waits for or
/// ended with.
pub(crate) fn task_object(record: &TaskRecord, era: ProtocolEra, detailed: bool) -> Value {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let mut task = Map::new();
    task.insert("taskId".into(), record.id.clone().into());
    task.insert(
        "status".into(),
        serde_json::to_value(record.status).expect("a status serializes"),
    );
    if let Some(message) = &record.status_message {
        task.insert("statusMessage".into(), message.clone().into());
    }
    task.insert("createdAt".into(), rfc3339(record.created_at).into());
    task.insert(
        "lastUpdatedAt".into(),
        rfc3339(record.last_updated_at).into(),
    );
    let ttl = record.ttl.map_or(Value::Null, |t| ms(t).into());
    let poll = ms(record.poll_interval).into();
    match era {
        ProtocolEra::Stateless => {
            task.insert("ttlMs".into(), ttl);
            task.insert("pollIntervalMs".into(), poll);
        }
        ProtocolEra::Session => {
            task.insert("ttl".into(), ttl);
            task.insert("pollInterval".into(), poll);
        }
    }
    if detailed {
        if record.status == TaskStatus::InputRequired && !record.input_requests.is_empty() {
            task.insert(
                "inputRequests".into(),
                Value::Object(record.input_requests.clone()),
            );
        }
        match (&record.outcome, record.status) {
            (Some(TaskOutcome::Result(result)), TaskStatus::Completed) => {
                task.insert("result".into(), result.clone());
            }
            (Some(TaskOutcome::Error(error)), TaskStatus::Failed) => {
                task.insert("error".into(), error.clone());
            }
            _ => {}
        }
    }
    Value::Object(task)
}

/// Whether this request may use the `tasks/*` methods; `Err` is the reply refusing it.
fn gate(conn: &Connection, scope: &Scope, req: &Request) -> Result<(), Step> {
    let refuse = |e: McpError| Err(Step::Reply(scope.err(&req.id, e)));
    match scope.version().era() {
        ProtocolEra::Stateless if !declares_extension(scope) => {
            refuse(missing_extension(&format!("`{}` needs tasks", req.method)))
        }
        ProtocolEra::Session if scope.version() != ProtocolVersion::V2025_11_25 => {
            refuse(McpError::method_not_found(&req.method))
        }
        _ if !conn.server.inner.registry.has_task_tools() => {
            refuse(McpError::method_not_found(&req.method))
        }
        _ => {
            conn.server.inner.tasks.touch();
            Ok(())
        }
    }
}

/// What every `tasks/*` handler but `tasks/update` starts with: the gate, the task id, and
/// who asks.
fn open(conn: &Connection, scope: &Scope, req: &Request) -> Result<(String, String), Step> {
    gate(conn, scope, req)?;
    match &req.params.body {
        Body::Task(p) => Ok((p.task_id.clone(), owner(conn, scope))),
        _ => Err(Step::Reply(scope.err(&req.id, unread(req)))),
    }
}

/// `tasks/get`: the task, with (2026-07-28) its questions, result or error.
pub(super) fn get(conn: &Arc<Connection>, scope: Scope, req: Request) -> Step {
    let (task_id, owner) = match open(conn, &scope, &req) {
        Ok(opened) => opened,
        Err(step) => return step,
    };
    let (conn, id) = (conn.clone(), req.id.clone());
    Step::Run(Box::pin(async move {
        let inner = &conn.server.inner;
        Some(match inner.tasks.get(&task_id, &owner).await {
            Ok(record) => {
                let era = scope.version().era();
                let body = task_object(&record, era, era == ProtocolEra::Stateless);
                scope.ok(inner, &id, &body, None, Cache::No)
            }
            Err(e) => scope.err(&id, e),
        })
    }))
}

/// `tasks/update` (2026-07-28): answers to a task's questions; an empty acknowledgement.
pub(super) fn update(conn: &Arc<Connection>, scope: Scope, mut req: Request) -> Step {
    if let Err(step) = gate(conn, &scope, &req) {
        return step;
    }
    let Body::UpdateTask(params) = std::mem::take(&mut req.params.body) else {
        return Step::Reply(scope.err(&req.id, unread(&req)));
    };
    let owner = owner(conn, &scope);
    let (conn, id) = (conn.clone(), req.id.clone());
    Step::Run(Box::pin(async move {
        let inner = &conn.server.inner;
        Some(
            match inner
                .tasks
                .answer(&params.task_id, &owner, params.input_responses)
                .await
            {
                Ok(()) => scope.ok(inner, &id, &Map::new(), None, Cache::No),
                Err(e) => scope.err(&id, e),
            },
        )
    }))
}

/// `tasks/cancel`: 2026-07-28 acknowledges (also for a task already over); 2025-11-25 returns
/// the cancelled task, and refuses one already over (-32602).
pub(super) fn cancel(conn: &Arc<Connection>, scope: Scope, req: Request) -> Step {
    let (task_id, owner) = match open(conn, &scope, &req) {
        Ok(opened) => opened,
        Err(step) => return step,
    };
    let (conn, id) = (conn.clone(), req.id.clone());
    Step::Run(Box::pin(async move {
        let inner = &conn.server.inner;
        let before = match inner.tasks.cancel(&task_id, &owner).await {
            Ok(before) => before,
            Err(e) => return Some(scope.err(&id, e)),
        };
        Some(match scope.version().era() {
            ProtocolEra::Stateless => scope.ok(inner, &id, &Map::new(), None, Cache::No),
            ProtocolEra::Session if before.status.is_terminal() => scope.err(
                &id,
                McpError::invalid_params(format!(
                    "Cannot cancel task {}: it is already {}",
                    before.id,
                    task_object(&before, ProtocolEra::Session, false)["status"]
                        .as_str()
                        .unwrap_or_default()
                )),
            ),
            ProtocolEra::Session => match inner.tasks.get(&task_id, &owner).await {
                Ok(after) => scope.ok(
                    inner,
                    &id,
                    &task_object(&after, ProtocolEra::Session, false),
                    None,
                    Cache::No,
                ),
                Err(e) => scope.err(&id, e),
            },
        })
    }))
}

/// The body of a `tasks/result` answer.
#[derive(Serialize)]
#[serde(transparent)]
struct TaskResult(Value);

impl Outcome for TaskResult {}

/// `tasks/result` (2025-11-25): waits until the task is over, then answers what the call would
/// have: the tool's result (naming the task in `_meta`), or its error.
pub(super) fn result(conn: &Arc<Connection>, scope: Scope, req: Request) -> Step {
    let (task_id, owner) = match open(conn, &scope, &req) {
        Ok(opened) => opened,
        Err(step) => return step,
    };
    let tasks = conn.server.inner.tasks.clone();
    let id = req.id.clone();
    run(conn, scope, &id, "tasks/result", Cache::No, move |_ctx| {
        Box::pin(async move {
            let record = tasks.wait(&task_id, &owner).await?;
            match record.outcome {
                Some(TaskOutcome::Result(mut result)) => {
                    if let Value::Object(result) = &mut result {
                        let meta = result
                            .entry("_meta")
                            .or_insert_with(|| Value::Object(Map::new()));
                        if let Value::Object(meta) = meta {
                            meta.insert(
                                "io.modelcontextprotocol/related-task".into(),
                                json!({ "taskId": record.id }),
                            );
                        }
                    }
                    Ok(TaskResult(result))
                }
                Some(TaskOutcome::Error(error)) => Err(serde_json::from_value::<ErrorBody>(error)
                    .map_or_else(
                        |_| McpError::internal("The task failed"),
                        ErrorBody::into_error,
                    )),
                None => Err(McpError::internal(format!(
                    "The task ended without a result ({})",
                    record.status_message.as_deref().unwrap_or("cancelled")
                ))),
            }
        })
    })
}

#[derive(Deserialize)]
struct ErrorBody {
    code: i32,
    message: String,
    data: Option<Value>,
}

impl ErrorBody {
    fn into_error(self) -> McpError {
        let e = McpError::new(ErrorCode(self.code), self.message);
        match self.data {
            Some(data) => e.with_data(data),
            None => e,
        }
    }
}

/// `tasks/list` (2025-11-25): the session's tasks, paged.
pub(super) fn list(conn: &Arc<Connection>, scope: Scope, req: Request) -> Step {
    if let Err(step) = gate(conn, &scope, &req) {
        return step;
    }
    let cursor = match super::handler::cursor_of(&req) {
        Ok(c) => c,
        Err(e) => return Step::Reply(scope.err(&req.id, e)),
    };
    let (conn, id, owner) = (conn.clone(), req.id.clone(), owner(conn, &scope));
    Step::Run(Box::pin(async move {
        let inner = &conn.server.inner;
        let tasks = &inner.tasks;
        if let Some(after) = &cursor
            && tasks.get(after, &owner).await.is_err()
        {
            return Some(scope.err(&id, McpError::invalid_params("Invalid cursor")));
        }
        let page = inner.limits.page_size;
        Some(match tasks.list(&owner, cursor.as_deref(), page).await {
            Ok((records, more)) => {
                let mut body = Map::new();
                let items: Vec<Value> = records
                    .iter()
                    .map(|r| task_object(r, ProtocolEra::Session, false))
                    .collect();
                if more && let Some(last) = records.last() {
                    body.insert("nextCursor".into(), last.id.clone().into());
                }
                body.insert("tasks".into(), Value::Array(items));
                scope.ok(inner, &id, &body, None, Cache::No)
            }
            Err(e) => scope.err(&id, e),
        })
    }))
}
