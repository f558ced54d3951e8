//! Tool calls run as tasks, and the `tasks/*` methods, in both eras (see [`crate::task`]).
//!
//! - 2026-07-28: the `io.modelcontextprotocol/tasks` extension, declared by the client per
//!   request; `tasks/get`, `tasks/update`, `tasks/cancel`.
//! - 2025-11-25: the experimental `tasks` capability and the `task` param of `tools/call`;
//!   `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`.

use std::future::Future;
use std::sync::{Arc, Weak};
use std::task::Poll;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::connection::{CatchUnwind, Connection, Step};
use super::era::{self, Cache, Scope};
use super::handler::{Outcome, context_with, run, unread};
use crate::changes::Change;
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::params::{Body, Request};
use crate::protocol::{CallToolResult, Era, ErrorCode, McpError, ProtocolVersion, RequestId};
use crate::registry::RegisteredTool;
use crate::request::{Asker, Context, Peer};
use crate::task::{Live, Origin, TaskOutcome, TaskRecord, TaskStatus, TaskSupport, rfc3339};
use crate::tool::{ToolCall, ToolFuture};

/// The 2026-07-28 extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How a `tools/call` runs.
pub(super) enum Mode {
    /// As a plain request.
    Plain,
    /// As a task, with the TTL the client asked for.
    Task(Option<Duration>),
}

/// Whether a call of `tool` runs as a task: from the tool's setting and, in 2026-07-28, the
/// extension in the request's client capabilities, in 2025-11-25 the call's `task` param.
pub(super) fn mode(
    scope: &Scope,
    tool: &RegisteredTool,
    task_param: Option<&Value>,
) -> Result<Mode, McpError> {
    let support = tool.def.task;
    match scope.version().era() {
        Era::Stateless => {
            // A 2025-11-25 `task` param means nothing here (the server decides).
            match (support, declares_extension(scope)) {
                (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(Mode::Plain),
                (_, true) => Ok(Mode::Task(None)),
                (TaskSupport::Required, false) => Err(missing_extension(&format!(
                    "The tool `{}` runs only as a task",
                    tool.def.name
                ))),
            }
        }
        Era::Session if scope.version() != ProtocolVersion::V2025_11_25 => Ok(Mode::Plain),
        Era::Session => {
            #[derive(Deserialize)]
            struct TaskParam {
                ttl: Option<u64>,
            }
            let wanted = match task_param.map(<Option<TaskParam> as Deserialize>::deserialize) {
                None | Some(Ok(None)) => None,
                Some(Ok(Some(p))) => Some(p.ttl.map(Duration::from_millis)),
                Some(Err(e)) => {
                    return Err(McpError::invalid_params(format!(
                        "Invalid params for tools/call: `task`: {}",
                        crate::protocol::jsonrpc::strip_position(&e)
                    )));
                }
            };
            match (support, wanted) {
                (TaskSupport::Forbidden, Some(_)) => Err(McpError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "The tool `{}` does not run as a task (execution.taskSupport is forbidden)",
                        tool.def.name
                    ),
                )),
                (TaskSupport::Required, None) => Err(McpError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "The tool `{}` runs only as a task: call it with the `task` param",
                        tool.def.name
                    ),
                )),
                (_, None) => Ok(Mode::Plain),
                (_, Some(ttl)) => Ok(Mode::Task(ttl)),
            }
        }
    }
}

pub(super) fn declares_extension(scope: &Scope) -> bool {
    scope
        .client
        .capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some()
}

/// -32021 naming the tasks extension.
fn missing_extension(why: &str) -> McpError {
    McpError::new(
        ErrorCode::MISSING_CLIENT_CAPABILITY,
        format!("{why}: the client did not declare the `{EXTENSION}` extension"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } }))
}

/// Announces, on listen streams, the changes this instance makes to 2026-07-28 tasks running
/// on another instance (it cancelled one, or ended one whose instance stopped). Session-era
/// tasks have no listen streams: their session hears it when it asks.
pub(crate) fn announcer(changes: crate::changes::Changes) -> crate::task::Announce {
    Box::new(move |record: &TaskRecord| {
        if record.owner.starts_with("caller:") {
            let task = task_object(record, Era::Stateless, true);
            changes.task_changed(&record.id, &record.owner, &task);
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
            let task = task_object(&record, Era::Stateless, true);
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
pub(super) fn owner(conn: &Connection, scope: &Scope) -> String {
    match scope.version().era() {
        Era::Session => conn.task_owner(),
        Era::Stateless => {
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

/// Runs `tools/call` of `tool` as a task.
pub(super) fn call_as_task(
    conn: &Arc<Connection>,
    mut scope: Scope,
    id: &RequestId,
    tool: &RegisteredTool,
    arguments: Option<&RawValue>,
    ttl: Option<Duration>,
) -> Step {
    let (def, output_mode) = (tool.def, tool.mode);
    let inner = &conn.server.inner;
    let stateless = scope.version().era() == Era::Stateless;
    let owner = owner(conn, &scope);
    let on_change: Option<crate::task::OnChange> = if stateless {
        let (changes, owner) = (inner.changes.clone(), owner.clone());
        Some(Box::new(move |record: &TaskRecord, origin: Origin| {
            // The instance that ended the task elsewhere announced it (see `announcer`).
            if origin == Origin::Here {
                let task = task_object(record, Era::Stateless, true);
                changes.task_changed(&record.id, &owner, &task);
            }
        }))
    } else {
        let conn: Weak<Connection> = Arc::downgrade(conn);
        Some(Box::new(move |record: &TaskRecord, _: Origin| {
            if let Some(conn) = conn.upgrade()
                && let Some(sink) = Peer::standalone(&*conn)
            {
                let params = task_object(record, Era::Session, false);
                sink.send(encode_notification("notifications/tasks/status", params));
            }
        }))
    };
    let live = inner
        .tasks
        .prepare(owner, def.name, ttl, scope.round.clone(), on_change);
    // The work outlives the call's response stream: its messages (progress, logs, asks) go to
    // the session's own channel (stdout; on HTTP the GET stream, whichever is open when they
    // are sent), and 2026-07-28 has nowhere to send them.
    if stateless {
        scope.sink = None;
    } else if conn.wire.request_streams {
        let session: Weak<Connection> = Arc::downgrade(conn);
        scope.sink = Some(crate::outbound::Sink::new(move |message| {
            session
                .upgrade()
                .and_then(|conn| Peer::standalone(&*conn))
                .is_some_and(|sink| sink.send(message))
        }));
    }
    let asker = if stateless {
        Asker::Task(live.clone())
    } else {
        let peer: Weak<dyn Peer> = Arc::downgrade(conn) as Weak<dyn Peer>;
        Asker::Session(peer)
    };
    let related = (!stateless).then(|| live.id.clone());
    let ctx = context_with(conn, &scope, id, None, asker, related);
    live.bind(ctx.canceller());
    let fut = (def.call)(ToolCall {
        context: ctx.clone(),
        arguments,
        mode: output_mode,
    });
    let (conn, id) = (conn.clone(), id.clone());
    Step::Run(Box::pin(async move {
        let inner = &conn.server.inner;
        let tasks = inner.tasks.clone();
        let version = scope.version();
        // A single-use requestState is recorded before anything runs on it.
        if let Some(round) = &scope.round
            && let Err(e) = inner.claim_round(round).await
        {
            ctx.cancel();
            return Some(scope.err(&id, e));
        }
        if let Err(e) = tasks.admit(&live).await {
            ctx.cancel();
            return Some(scope.err(&id, e));
        }
        // Until the work is spawned, a dropped call (the client hung up) takes the task with it.
        let mut unclaimed = Unclaimed {
            tasks: tasks.clone(),
            live: Some(live.clone()),
        };
        let mut fut = CatchUnwind(fut);
        // The first poll runs here: a 2026-07-28 call whose tool is done at once answers with
        // its result, and one whose tool asked upfront answers `InputRequiredResult`.
        let first =
            std::future::poll_fn(|cx| Poll::Ready(std::pin::Pin::new(&mut fut).poll(cx))).await;
        if let Poll::Ready(outcome) = first {
            if stateless {
                tasks.discard(&live).await;
                unclaimed.live = None;
                ctx.finish();
                return Some(plain_reply(&conn, &scope, &id, outcome));
            }
            // Settled before the client hears of the task: no status notification for it.
            let (status, outcome, message) = settle(outcome, version);
            live.finish(status, Some(outcome), message).await;
            live.started
                .store(true, std::sync::atomic::Ordering::Release);
            unclaimed.live = None;
            tasks.forget(&live.id);
            ctx.finish();
            return Some(created(&conn, &scope, &id, &live.snapshot().await));
        }
        if let Some(round) = scope.round.as_ref().filter(|r| r.is_blocked()) {
            ctx.cancel();
            tasks.discard(&live).await;
            unclaimed.live = None;
            return Some(match round.input_required(&inner.sealer) {
                Ok(body) => era::encode_input_required(inner, &id, &body),
                Err(e) => scope.err(&id, e),
            });
        }
        live.started
            .store(true, std::sync::atomic::Ordering::Release);
        let record = live.snapshot().await;
        unclaimed.live = None;
        // The work stays in the call's request span (see `trace.rs`).
        let work = drive(tasks, live, ctx, fut, version);
        tokio::spawn(tracing::Instrument::instrument(
            work,
            tracing::Span::current(),
        ));
        Some(created(&conn, &scope, &id, &record))
    }))
}

/// A task whose call may still be dropped before its work is spawned; dropped so, it is
/// cancelled and removed (it would stay `working` until its TTL otherwise).
struct Unclaimed {
    tasks: Arc<crate::task::Tasks>,
    live: Option<Arc<Live>>,
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        if let Some(live) = self.live.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let tasks = self.tasks.clone();
            runtime.spawn(async move {
                live.finish(TaskStatus::Cancelled, None, None).await;
                tasks.discard(&live).await;
            });
        }
    }
}

/// Runs a task's work to its end and records how it ended.
async fn drive(
    tasks: Arc<crate::task::Tasks>,
    live: Arc<Live>,
    ctx: Context,
    fut: CatchUnwind<ToolFuture>,
    version: ProtocolVersion,
) {
    let outcome = tokio::select! {
        biased;
        outcome = fut => Some(outcome),
        // Cancelled or expired: whoever did it set the status.
        _ = ctx.cancelled() => None,
    };
    if let Some(outcome) = outcome {
        let (status, outcome, message) = settle(outcome, version);
        live.finish(status, Some(outcome), message).await;
    }
    ctx.finish();
    tasks.forget(&live.id);
}

/// How a tool's outcome ends its task. 2026-07-28: a tool error (`isError`) is `completed`, a
/// protocol error `failed`. 2025-11-25 counts a tool error as `failed` too, and `tasks/result`
/// returns the tool's result either way.
fn settle(
    outcome: Result<Result<CallToolResult, McpError>, String>,
    version: ProtocolVersion,
) -> (TaskStatus, TaskOutcome, Option<String>) {
    match outcome {
        Ok(Ok(mut result)) => {
            era::downgrade_result(&mut result, version);
            let failed = result.is_error() && version.era() == Era::Session;
            let value = serde_json::to_value(&result).expect("a tool result serializes");
            let status = if failed {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            };
            (status, TaskOutcome::Result(value), None)
        }
        Ok(Err(e)) => {
            let message = e.message.to_string();
            let value = serde_json::to_value(&e).expect("an error serializes");
            (TaskStatus::Failed, TaskOutcome::Error(value), Some(message))
        }
        Err(panic) => {
            tracing::error!(panic = %panic, "task panicked");
            let e = McpError::internal("Internal error: the tool panicked");
            let value = serde_json::to_value(&e).expect("an error serializes");
            (
                TaskStatus::Failed,
                TaskOutcome::Error(value),
                Some(e.message.to_string()),
            )
        }
    }
}

/// The call's own answer when it did not become a task (2026-07-28, done at once).
fn plain_reply(
    conn: &Connection,
    scope: &Scope,
    id: &RequestId,
    outcome: Result<Result<CallToolResult, McpError>, String>,
) -> crate::request::Reply {
    let inner = &conn.server.inner;
    match outcome {
        Ok(Ok(mut result)) => {
            result.shape_for(scope.version());
            scope.ok(inner, id, &result, result.meta(), Cache::No)
        }
        Ok(Err(e)) => scope.err(id, e),
        Err(panic) => {
            tracing::error!(panic = %panic, "tool panicked");
            scope.err(id, McpError::internal("Internal error: the tool panicked"))
        }
    }
}

/// `CreateTaskResult`: flat with `resultType: "task"` in 2026-07-28, `{task}` in 2025-11-25.
fn created(
    conn: &Connection,
    scope: &Scope,
    id: &RequestId,
    record: &TaskRecord,
) -> crate::request::Reply {
    let inner = &conn.server.inner;
    match scope.version().era() {
        Era::Stateless => era::encode_typed(
            inner,
            id,
            &task_object(record, Era::Stateless, false),
            "task",
        ),
        Era::Session => {
            let body = json!({ "task": task_object(record, Era::Session, false) });
            scope.ok(inner, id, &body, None, Cache::No)
        }
    }
}

/// A task as the wire shows it. `detailed` (2026-07-28 `tasks/get`) adds what it waits for or
/// ended with.
pub(crate) fn task_object(record: &TaskRecord, era: Era, detailed: bool) -> Value {
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
        Era::Stateless => {
            task.insert("ttlMs".into(), ttl);
            task.insert("pollIntervalMs".into(), poll);
        }
        Era::Session => {
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
        Era::Stateless if !declares_extension(scope) => {
            refuse(missing_extension(&format!("`{}` needs tasks", req.method)))
        }
        Era::Session if scope.version() != ProtocolVersion::V2025_11_25 => {
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
                let body = task_object(&record, era, era == Era::Stateless);
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
            Era::Stateless => scope.ok(inner, &id, &Map::new(), None, Cache::No),
            Era::Session if before.status.is_terminal() => scope.err(
                &id,
                McpError::invalid_params(format!(
                    "Cannot cancel task {}: it is already {}",
                    before.id,
                    task_object(&before, Era::Session, false)["status"]
                        .as_str()
                        .unwrap_or_default()
                )),
            ),
            Era::Session => match inner.tasks.get(&task_id, &owner).await {
                Ok(after) => scope.ok(
                    inner,
                    &id,
                    &task_object(&after, Era::Session, false),
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
                    .map(|r| task_object(r, Era::Session, false))
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
