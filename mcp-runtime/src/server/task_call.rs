//! A `tools/call` run as a task, in both eras (see [`crate::task`]): whether it becomes one,
//! the work spawned past its request, and the reply that hands the client the task (or, when
//! the tool was done at once in 2026-07-28, its result).

use std::future::Future;
use std::sync::{Arc, Weak};
use std::task::Poll;
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::connection::{CatchUnwind, Connection, Step};
use super::era::{self, Cache, Scope};
use super::handler::{Outcome, context_with};
use super::tasks::{client, declares_extension, missing_extension, owner, task_object};
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::{
    CallToolResult, ErrorCode, McpError, ProtocolEra, ProtocolVersion, RequestId,
};
use crate::registry::RegisteredTool;
use crate::request::{Asker, Context, Peer};
use crate::task::{Live, Origin, TaskOutcome, TaskRecord, TaskStatus, TaskSupport};
use crate::tool::{ToolCall, ToolFuture};

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
        ProtocolEra::Stateless => {
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
        ProtocolEra::Session if scope.version() != ProtocolVersion::V2025_11_25 => Ok(Mode::Plain),
        ProtocolEra::Session => {
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
    let stateless = scope.version().era() == ProtocolEra::Stateless;
    let owner = owner(conn, &scope);
    let on_change: Option<crate::task::OnChange> = if stateless {
        let (catalog, owner) = (inner.catalog.clone(), owner.clone());
        Some(Box::new(move |record: &TaskRecord, origin: Origin| {
            // The instance that ended the task elsewhere announced it (see `announcer`).
            if origin == Origin::Here {
                let task = task_object(record, ProtocolEra::Stateless, true);
                catalog.task_changed(&record.id, &owner, &task);
            }
        }))
    } else {
        let conn: Weak<Connection> = Arc::downgrade(conn);
        Some(Box::new(move |record: &TaskRecord, _: Origin| {
            if let Some(conn) = conn.upgrade()
                && let Some(sink) = Peer::standalone(&*conn)
            {
                let params = task_object(record, ProtocolEra::Session, false);
                sink.send(encode_notification("notifications/tasks/status", params));
            }
        }))
    };
    let live = inner.tasks.prepare(
        owner,
        client(&scope),
        def.name,
        ttl,
        scope.round.clone(),
        on_change,
    );
    // The work outlives the call's response stream: its messages (progress, logs, asks) go to
    // the session's own channel (stdout; on HTTP the GET stream, whichever is open when they
    // are sent), and 2026-07-28 has nowhere to send them.
    if stateless {
        scope.sink = None;
    } else if conn.wire.request_streams {
        let session: Weak<Connection> = Arc::downgrade(conn);
        scope.sink = Some(crate::request::Sink::new(move |message| {
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
            && let Err(e) = super::input::claim_round(inner, round).await
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
            let failed = result.is_error() && version.era() == ProtocolEra::Session;
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
        ProtocolEra::Stateless => era::encode_typed(
            inner,
            id,
            &task_object(record, ProtocolEra::Stateless, false),
            "task",
        ),
        ProtocolEra::Session => {
            let body = json!({ "task": task_object(record, ProtocolEra::Session, false) });
            scope.ok(inner, id, &body, None, Cache::No)
        }
    }
}
