//! What every request handler is built from: [`run`] for handlers that may outlive their
//! message (registered for cancellation and the connection's limit, shaped for the request's
//! era), the request's [`context`], plain [`reply`]s, paged lists, and params parsing with
//! errors in one wording.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::connection::{CatchUnwind, Connection, Step};
use super::era::{self, Cache, Scope};
use crate::protocol::params::{Body, Request};
use crate::protocol::{McpError, ProtocolEra, ProtocolVersion, RequestId};
use crate::request::{Asker, Cancellation, Context, RequestInfo, Slot};

pub(super) fn reply<T: Serialize>(
    conn: &Connection,
    scope: &Scope,
    req: &Request,
    body: &T,
    cache: Cache,
) -> Step {
    Step::Reply(scope.ok(&conn.server.inner, &req.id, body, None, cache))
}

/// Runs a handler that may outlive this call (it awaits, or calls user code): registers it
/// for cancellation and the connection's limit, polls it first and cancellation second, and
/// shapes its outcome for the request's era.
pub(super) fn run<T: Outcome>(
    conn: &Arc<Connection>,
    scope: Scope,
    id: &RequestId,
    what: &'static str,
    cache: Cache,
    start: impl FnOnce(Context) -> HandlerFuture<T>,
) -> Step {
    let asker = match (&scope.round, scope.version().era()) {
        (Some(round), _) => Asker::Round(round.clone()),
        (None, ProtocolEra::Session) => {
            let peer: std::sync::Weak<Connection> = Arc::downgrade(conn);
            Asker::Session(peer)
        }
        (None, ProtocolEra::Stateless) => Asker::Unavailable(
            "in protocol 2026-07-28 only tools/call, prompts/get and resources/read can ask the client",
        ),
    };
    // A retry carrying answers is never cached.
    let cache = match &scope.round {
        Some(round) if round.retry => Cache::No,
        _ => cache,
    };
    let in_flight = match conn.begin(id, |slot| context(conn, &scope, id, slot, asker)) {
        Ok(f) => f,
        Err(e) => return Step::Reply(scope.err(id, e)),
    };
    let fut = start(in_flight.ctx.clone());
    let id = id.clone();
    let conn = conn.clone();
    Step::Run(Box::pin(async move {
        // A single-use requestState is recorded before anything runs on it.
        if let Some(round) = &scope.round
            && let Err(e) = super::input::claim_round(&conn.server.inner, round).await
        {
            in_flight.ctx.finish();
            return Some(scope.err(&id, e));
        }
        // The handler is polled once on its own first: most finish on that poll, and then
        // no timer, cancellation or input future is ever made (a cheap `is_cancelled` check
        // covers cancellation).
        let ctx = &in_flight.ctx;
        let mut handler = CatchUnwind(fut);
        let first = std::future::poll_fn(|cx| {
            std::task::Poll::Ready(std::pin::Pin::new(&mut handler).poll(cx))
        })
        .await;
        let limit = conn.server.inner.limits.request_timeout;
        let timed_out = async {
            match limit {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let outcome = match first {
            std::task::Poll::Ready(outcome) => outcome,
            std::task::Poll::Pending => tokio::select! {
                biased;
                outcome = &mut handler => outcome,
                _ = ctx.cancelled() => return None,
                // A 2026-07-28 handler waits for answers the client must give: stop it there.
                _ = ctx.input_blocked() => {
                    ctx.finish();
                    let round = scope.round.as_ref().expect("only rounds block");
                    let body = round.input_required(&conn.server.inner.sealer);
                    // Whatever still holds the context (a spawned task awaiting an ask) ends.
                    ctx.cancel();
                    return Some(match body {
                        Ok(body) => era::encode_input_required(&conn.server.inner, &id, &body),
                        Err(e) => scope.err(&id, e),
                    });
                }
                _ = timed_out => {
                    ctx.cancel();
                    let limit = limit.unwrap_or_default();
                    tracing::warn!(handler = what, ?limit, "request timed out");
                    return Some(scope.err(&id, McpError::internal(format!("Request timed out after {} ms", limit.as_millis()))));
                }
            },
        };
        if ctx.is_cancelled() {
            return None;
        }
        // Nothing more goes out for this request once its result does.
        ctx.finish();
        drop(in_flight);
        let inner = &conn.server.inner;
        Some(match outcome {
            Ok(Ok(mut result)) => {
                let tool_error = result.is_tool_error();
                if tool_error {
                    super::trace::record_tool_error();
                }
                if let Some(kind) = result.result_type()
                    && scope.version().era() == ProtocolEra::Stateless
                {
                    return Some(era::encode_typed(inner, &id, &result, kind));
                }
                result.shape_for(scope.version());
                let mut reply = scope.ok(inner, &id, &result, result.meta(), cache);
                reply.tool_error = tool_error;
                reply
            }
            Ok(Err(e)) => scope.err(&id, e),
            Err(panic) => {
                tracing::error!(handler = what, panic = %panic, "handler panicked");
                scope.err(
                    &id,
                    McpError::internal(format!("Internal error: `{what}` panicked")),
                )
            }
        })
    }))
}

/// The context of a request that may outlive its message.
pub(super) fn context(
    conn: &Connection,
    scope: &Scope,
    id: &RequestId,
    slot: Slot,
    asker: Asker,
) -> Context {
    context_with(conn, scope, id, Some(slot), asker, None)
}

/// [`context`] with everything given: a task's work holds no place among the connection's
/// requests (it outlives its request), and a 2025-11-25 task's messages name it.
pub(super) fn context_with(
    conn: &Connection,
    scope: &Scope,
    id: &RequestId,
    slot: Option<Slot>,
    asker: Asker,
    related_task: Option<String>,
) -> Context {
    Context::new(RequestInfo {
        id: id.clone(),
        client: scope.client.clone(),
        progress_token: scope.progress_token.clone(),
        transport: conn.wire.name,
        cancel: Cancellation::default(),
        _slot: slot,
        sink: scope.sink.clone(),
        log_level: scope.log_level,
        finished: Default::default(),
        gate: Default::default(),
        progress: Default::default(),
        states: conn.server.inner.states.clone(),
        headers: scope.headers.clone(),
        closer: scope.closer.clone(),
        principal: scope.principal.clone(),
        catalog: conn.server.inner.catalog.handle(),
        asker,
        related_task,
    })
}

/// A list method: `items` paged by the request's cursor, under `key` in the result.
pub(super) fn list_page<T: crate::registry::Listed>(
    conn: &Connection,
    scope: &Scope,
    req: &Request,
    key: &'static str,
    paged: &super::super::registry::Paged<T>,
    listing: impl Fn(&T) -> &RawValue,
) -> Step {
    let cursor = match cursor_of(req) {
        Ok(c) => c,
        Err(e) => return Step::Reply(scope.err(&req.id, e)),
    };
    let inner = &conn.server.inner;
    let Some((items, next_cursor)) = paged.page_enabled(
        &inner.catalog,
        scope.principal.as_deref(),
        cursor.as_deref(),
        inner.limits.page_size,
    ) else {
        return Step::Reply(scope.err(&req.id, McpError::invalid_params("Invalid cursor")));
    };
    let body = ListPage {
        key,
        items: items.into_iter().map(listing).collect(),
        next_cursor,
    };
    reply(conn, scope, req, &body, Cache::Listing)
}

/// The future of a handler run through [`Connection::run`].
pub(super) type HandlerFuture<T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<T, McpError>> + Send>>;

/// A handler's result: serialized as the response body, after era-specific shaping.
pub(super) trait Outcome: Serialize + Send + 'static {
    /// Adjusts the result for what `version` understands.
    fn shape_for(&mut self, _version: ProtocolVersion) {}
    /// The handler's own `_meta` members.
    fn meta(&self) -> Option<&serde_json::Map<String, Value>> {
        None
    }
    /// Whether it is a tool result reporting a tool error (`isError`).
    fn is_tool_error(&self) -> bool {
        false
    }
    /// A 2026-07-28 `resultType` other than `complete` (`input_required`, `task`) the result
    /// has as it is (a result forwarded from elsewhere).
    fn result_type(&self) -> Option<&'static str> {
        None
    }
}

/// One page of a list result: `{"<key>": [...], "nextCursor"?: "..."}`.
pub(super) struct ListPage<I> {
    pub(super) key: &'static str,
    pub(super) items: Vec<I>,
    pub(super) next_cursor: Option<String>,
}

impl<I: Serialize> Serialize for ListPage<I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(self.key, &self.items)?;
        if let Some(next) = &self.next_cursor {
            map.serialize_entry("nextCursor", next)?;
        }
        map.end()
    }
}

/// The params of `req` when they are of `$variant`; else returns the [`unread`] error.
macro_rules! params_of {
    ($scope:expr, $req:expr, $variant:path) => {
        match &$req.params.body {
            $variant(p) => p,
            _ => {
                return $crate::server::connection::Step::Reply(
                    $scope.err(&$req.id, super::handler::unread(&$req)),
                );
            }
        }
    };
}
pub(super) use params_of;

/// The `cursor` of a list request (absent params mean the first page); `Err` for params that
/// do not fit the method.
pub(super) fn cursor_of(req: &Request) -> Result<Option<String>, McpError> {
    match &req.params.body {
        Body::List(p) => Ok(p.cursor.clone()),
        Body::Directory(p) => Ok(p.cursor.clone()),
        Body::Invalid(e) => Err(e.clone()),
        _ => Ok(None),
    }
}

/// The error for a request whose decoded params are not of its handler's kind: the params did
/// not fit the method (`Body::Invalid`, -32602), or, as the decode is keyed on the method, a
/// handler was routed a method it was not written for (-32603). Handlers take their params
/// through this (or [`params_of!`]): params are refused once the method is known to be
/// served, never read by anything else.
pub(super) fn unread(req: &Request) -> McpError {
    if let Body::Invalid(e) = &req.params.body {
        return e.clone();
    }
    McpError::internal(format!(
        "Internal error: the params of {} were not decoded for it",
        req.method
    ))
}
