//! A request through the server's [middleware](crate::middleware) chain: the decoded request
//! itself is handed down the layers, and at the bottom dispatched as any other request. What
//! comes back keeps the dispatcher's own bytes unless a layer changed it.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context as TaskContext, Poll, Waker};

use super::connection::{Arrival, CatchUnwind, Connection, Step, panic_message};
use crate::middleware::{self, Below, Dispatched, McpRequest, Next, Response};
use crate::protocol::jsonrpc::encode_result;
use crate::protocol::params::{self, Request};
use crate::protocol::{McpError, RequestId};
use crate::request::Reply;

/// How the bottom of the chain dispatches a request (the dispatcher's `on_request`, passed in
/// so that this file does not import the dispatcher that calls it).
pub(super) type Dispatch = fn(&Arc<Connection>, Request, Arrival) -> Step;

/// Runs `req` through the chain, then through `dispatch`.
pub(super) fn through(
    conn: &Arc<Connection>,
    req: Request,
    arrival: Arrival,
    dispatch: Dispatch,
) -> Step {
    let id = req.id.clone();
    let below = Arc::new(Origin {
        conn: conn.clone(),
        headers: arrival.headers.clone(),
        principal: arrival.principal.clone(),
        arrival: Mutex::new(Some(arrival)),
        dispatch,
    });
    let request = McpRequest {
        request: req,
        json: OnceLock::new(),
        edited: false,
        caller: OnceLock::new(),
        below,
    };
    // The first layer's future is polled once here: a chain that answers at once (a
    // pass-through layer over a handler that does not wait) is sent without a task future of
    // its own; one that waits is boxed with what finishes it. A layer's `call` may panic too.
    let chain = &conn.server.inner.middleware;
    let mut run = match catch_unwind(AssertUnwindSafe(|| {
        let next = Next {
            chain: chain.clone(),
            index: 1,
        };
        chain[0].call(request, next)
    })) {
        Ok(run) => run,
        Err(panic) => return now(finish(&id, Err(panic_message(&*panic)))),
    };
    let polled =
        Pin::new(&mut CatchUnwind(&mut run)).poll(&mut TaskContext::from_waker(Waker::noop()));
    match polled {
        Poll::Ready(outcome) => now(finish(&id, outcome)),
        Poll::Pending => Step::Run(Box::pin(async move { finish(&id, CatchUnwind(run).await) })),
    }
}

/// A step answered at once: the reply, or nothing to send.
fn now(reply: Option<Reply>) -> Step {
    reply.map_or(Step::Nothing, Step::Reply)
}

/// What the client gets for what the chain answered: the dispatcher's own bytes when no layer
/// changed them, nothing for a cancelled request.
fn finish(id: &RequestId, outcome: Result<Result<Response, McpError>, String>) -> Option<Reply> {
    let response = match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => middleware::refused(e),
        Err(panic) => {
            tracing::error!(panic = %panic, "middleware panicked");
            middleware::refused(McpError::internal("Internal error: a middleware panicked"))
        }
    };
    if response.cancelled {
        return None;
    }
    Some(match response.encoded {
        Some(reply) => reply,
        None => match response.into_outcome() {
            Ok(result) => Reply::result(encode_result(id, &result)),
            Err(e) => Reply::error(Some(id), &e),
        },
    })
}

/// What is below the chain for one request: its connection, what the transport knows of it
/// (handed to the dispatcher, once), and the dispatcher. A clone of the request a layer keeps
/// holds only what its caller is made from.
struct Origin {
    conn: Arc<Connection>,
    headers: Option<Arc<http::HeaderMap>>,
    principal: Option<Arc<crate::auth::Principal>>,
    arrival: Mutex<Option<Arrival>>,
    dispatch: Dispatch,
}

impl Below for Origin {
    fn caller(&self) -> String {
        let inner = &self.conn.server.inner;
        match inner.caller(self.headers.as_deref(), self.principal.as_deref()) {
            Some(bytes) => format!("caller:{}", crate::id::digest_hex(&bytes)),
            None if self.conn.session().is_some() => self.conn.task_owner(),
            None => "anonymous".into(),
        }
    }

    fn headers(&self) -> Option<&http::HeaderMap> {
        self.headers.as_deref()
    }

    fn dispatch(&self, req: McpRequest) -> Dispatched {
        // A chain ends once per request (`Next::run` takes the `Next`).
        let arrival = self.arrival.lock().unwrap().take().unwrap_or_default();
        match bottom(&self.conn, req, arrival, self.dispatch) {
            Step::Reply(reply) => Dispatched::Now(Some(reply)),
            Step::Run(pending) => Dispatched::Later(pending),
            Step::Nothing => Dispatched::Now(None),
        }
    }
}

/// The bottom of the chain: the request, as a layer left it, through the dispatcher. A
/// request no layer changed is the decoded request itself; a changed one is decoded again
/// from its new params, and must still name what the client's request named (the transport
/// checked the caller's scopes for that).
fn bottom(conn: &Arc<Connection>, req: McpRequest, arrival: Arrival, dispatch: Dispatch) -> Step {
    if !req.edited {
        return dispatch(conn, req.request, arrival);
    }
    let McpRequest { request, json, .. } = req;
    let text = json.get().map(ToString::to_string);
    let params = match text.as_deref().filter(|t| *t != "null") {
        None => Ok(params::Params::default()),
        Some(text) => params::decode(&request.method, Some(text)),
    };
    let params = match params {
        Ok(params) => params,
        Err(e) => {
            let e = McpError::invalid_params(format!(
                "Invalid params for {}: {}",
                request.method,
                crate::protocol::jsonrpc::strip_position(&e)
            ));
            return Step::Reply(Reply::error(Some(&request.id), &e));
        }
    };
    let changed = Request {
        id: request.id.clone(),
        method: request.method.clone(),
        params,
    };
    if changed.names() != request.names() {
        let e = McpError::internal(
            "Internal error: a middleware changed what the request names (its tool, prompt, \
             resource or task), which was checked as the client sent it",
        );
        return Step::Reply(Reply::error(Some(&request.id), &e));
    }
    dispatch(conn, changed, arrival)
}
