//! A request through the server's [middleware](crate::middleware) chain: read once more into a
//! [`McpRequest`], passed down the layers, and at the bottom encoded again and dispatched as
//! any other request. What comes back keeps the dispatcher's own bytes unless a layer changed
//! it.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::connection::{Arrival, CatchUnwind, Connection, Step};
use super::envelope::{self, Head};
use crate::middleware::{self, McpRequest, MiddlewareFuture, Next};
use crate::protocol::McpError;
use crate::protocol::jsonrpc::{Incoming, Request, encode_result};
use crate::request::Reply;

/// How the bottom of the chain dispatches a request (the dispatcher's `on_request`, passed in
/// so that this file does not import the dispatcher that calls it).
pub(super) type Dispatch = fn(&Arc<Connection>, Request<'_>, Option<Head<'_>>, Arrival) -> Step;

/// Runs `req` through the chain, then through `dispatch`.
pub(super) fn through(
    conn: &Arc<Connection>,
    req: Request<'_>,
    arrival: Arrival,
    dispatch: Dispatch,
) -> Step {
    let inner = &conn.server.inner;
    // Params a layer cannot read are refused here: dispatched unread, they would pass every
    // layer (a rate limit, a filter) unseen.
    let params = match req.params.map(|p| serde_json::from_str::<Value>(p.get())) {
        None => Value::Null,
        Some(Ok(params)) => params,
        Some(Err(e)) => {
            let e = McpError::invalid_params(format!(
                "Invalid params for {}: {}",
                req.method,
                crate::protocol::jsonrpc::strip_position(&e)
            ));
            return Step::Reply(Reply::error(Some(&req.id), &e));
        }
    };
    let caller = match inner.caller(arrival.headers.as_deref(), arrival.principal.as_deref()) {
        Some(bytes) => format!("caller:{}", crate::id::digest_hex(&bytes)),
        None if conn.session().is_some() => conn.task_owner(),
        None => "anonymous".into(),
    };
    let request = McpRequest {
        id: req.id.clone(),
        method: req.method.to_string(),
        params,
        caller,
        headers: arrival.headers.clone(),
    };
    let dispatcher = {
        let conn = conn.clone();
        let Arrival {
            sink,
            headers,
            closer,
            principal,
        } = arrival;
        Arc::new(move |req: McpRequest| -> MiddlewareFuture {
            let arrival = Arrival {
                sink: sink.clone(),
                headers: headers.clone(),
                closer: closer.clone(),
                principal: principal.clone(),
            };
            let step = bottom(&conn, &req, arrival, dispatch);
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
    let id = req.id.clone();
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
        Some(match (response.encoded, response.outcome) {
            (Some(reply), _) => reply,
            (None, Ok(result)) => Reply::result(encode_result(&id, &result)),
            (None, Err(e)) => Reply::error(Some(&id), &e),
        })
    }))
}

/// The bottom of the chain: the request, as a layer left it, through the dispatcher.
fn bottom(conn: &Arc<Connection>, req: &McpRequest, arrival: Arrival, dispatch: Dispatch) -> Step {
    let mut message = Map::new();
    message.insert("jsonrpc".into(), "2.0".into());
    message.insert(
        "id".into(),
        serde_json::to_value(&req.id).expect("an id serializes"),
    );
    message.insert("method".into(), req.method.clone().into());
    if !req.params.is_null() {
        message.insert("params".into(), req.params.clone());
    }
    let text = Value::Object(message).to_string();
    match envelope::decode(&text) {
        Ok(envelope) => match envelope.message {
            Incoming::Request(request) => dispatch(conn, request, envelope.head, arrival),
            // A layer cannot turn a request into anything else: it keeps its id.
            _ => Step::Reply(Reply::error(
                Some(&req.id),
                &McpError::internal("Internal error: not a request"),
            )),
        },
        Err(e) => Step::Reply(Reply::error(Some(&req.id), &e.error)),
    }
}
