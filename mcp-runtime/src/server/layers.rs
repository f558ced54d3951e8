//! A request through the server's [middleware](crate::middleware) chain: the decoded request
//! itself is handed down the layers, and at the bottom dispatched as any other request. What
//! comes back keeps the dispatcher's own bytes unless a layer changed it.

use std::sync::{Arc, LazyLock, OnceLock};

use super::connection::{Arrival, CatchUnwind, Connection, Step};
use crate::middleware::{self, McpRequest, MiddlewareFuture, Next};
use crate::protocol::McpError;
use crate::protocol::jsonrpc::encode_result;
use crate::protocol::params::{self, Request};
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
    let inner = &conn.server.inner;
    let caller: middleware::Caller = {
        let (conn, headers, principal) = (
            conn.clone(),
            arrival.headers.clone(),
            arrival.principal.clone(),
        );
        Box::new(move || {
            let inner = &conn.server.inner;
            match inner.caller(headers.as_deref(), principal.as_deref()) {
                Some(bytes) => format!("caller:{}", crate::id::digest_hex(&bytes)),
                None if conn.session().is_some() => conn.task_owner(),
                None => "anonymous".into(),
            }
        })
    };
    let id = req.id.clone();
    let request = McpRequest {
        request: req,
        json: OnceLock::new(),
        edited: false,
        caller: LazyLock::new(caller),
        headers: arrival.headers.clone(),
    };
    let dispatcher = {
        let conn = conn.clone();
        let Arrival {
            sink,
            headers,
            closer,
            principal,
            peer,
        } = arrival;
        Arc::new(move |req: McpRequest| -> MiddlewareFuture {
            let arrival = Arrival {
                sink: sink.clone(),
                headers: headers.clone(),
                closer: closer.clone(),
                principal: principal.clone(),
                peer,
            };
            let step = bottom(&conn, req, arrival, dispatch);
            Box::pin(async move {
                let reply = match step {
                    Step::Reply(reply) => Some(reply),
                    Step::Run(pending) => pending.await,
                    Step::Nothing => None,
                };
                Ok(middleware::from_reply(reply))
            })
        })
    };
    let next = Next {
        chain: inner.middleware.clone(),
        index: 0,
        inner: dispatcher,
    };
    Step::Run(Box::pin(async move {
        let outcome = CatchUnwind(Box::pin(next.run(request))).await;
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
                Ok(result) => Reply::result(encode_result(&id, &result)),
                Err(e) => Reply::error(Some(&id), &e),
            },
        })
    }))
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
