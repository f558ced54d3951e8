//! What the server sends, routed: answers to the requests waiting for them, notifications to
//! the watchers and subscribers, and the server's own requests to the handlers, a bounded
//! number at a time.

use std::sync::{Arc, OnceLock, Weak};

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::core::{Core, Inbound, Outgoing};
use super::error::ClientError;
use super::handlers::ServerNotification;
use super::limits::INBOX;
use super::peek::{self, Read, Received};
use crate::protocol::{ErrorCode, McpError, ProtocolVersion};

impl Core {
    /// Routes one thing the transport read (crate-visible for `src/fuzzing.rs`).
    pub(crate) async fn route(&self, inbound: Inbound) {
        match inbound {
            Inbound::Message(Value::Array(batch))
            | Inbound::Read(Read::Other(Value::Array(batch))) => {
                for msg in batch {
                    self.route_one(msg).await;
                }
            }
            Inbound::Message(msg) | Inbound::Read(Read::Other(msg)) => self.route_one(msg).await,
            // An answer: its result goes to the request as the server sent it.
            Inbound::Read(Read::Answer { id, result, error }) => {
                self.settle(&id, result, error.as_deref());
            }
            Inbound::Failed { id, error } => {
                self.answer(id, Err(error));
            }
            Inbound::Closed(error) => self.lose(error),
        }
    }

    async fn route_one(&self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        match (method, msg.get("id")) {
            (Some(method), Some(id)) => self.serve_request(id.clone(), method, msg).await,
            (Some(method), None) => {
                let n = ServerNotification {
                    method,
                    params: msg.get("params").cloned().unwrap_or(Value::Null),
                };
                if n.method == "notifications/progress" {
                    let token = n.params.get("progressToken").map(|t| match t {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    if let Some(f) = token.and_then(|t| self.progress_watcher(&t)) {
                        f(&n.params);
                    }
                }
                // Before anyone hears of the change, so that a list asked for on hearing it
                // is fetched again.
                self.cache.notified(&n.method);
                self.handlers.notify(&n);
                let _ = self.events.send(n);
            }
            (None, Some(id)) => {
                let result = msg.get("result").map(Received::of);
                let error = msg.get("error").map(peek::to_raw);
                self.settle(id, result, error.as_deref());
            }
            (None, None) => {
                tracing::debug!("a message that is neither request, answer nor notification")
            }
        }
    }

    /// Settles the request an answer names (`id`) with its `result`, or its `error`.
    fn settle(&self, id: &Value, result: Option<Received>, error: Option<&RawValue>) {
        let Some(id) = request_id(id) else {
            tracing::debug!(%id, "an answer with an id this client never sent");
            return;
        };
        let answer = match (result, error) {
            (Some(result), None) => Ok(result),
            (_, Some(error)) => Err(ClientError::Rpc(
                serde_json::from_str::<McpError>(error.get()).unwrap_or_else(|_| {
                    McpError::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("an error the server sent malformed: {}", error.get()),
                    )
                }),
            )),
            (None, None) => Err(ClientError::protocol(
                "an answer with neither `result` nor `error`",
            )),
        };
        if self.answer(id, answer) {
            // The answer may have come another way (a session's GET stream): the request's
            // own stream is not needed any more.
            self.link.abandon(id);
        }
    }

    /// A request from the server (session era: elicitation, sampling, roots, ping): answered
    /// by the handlers on a task of its own, so a slow user never blocks other traffic, and
    /// at most `max_server_requests` at a time. One past that is refused at once: a server
    /// that floods the client gets errors, not a task each.
    async fn serve_request(&self, id: Value, method: String, msg: Value) {
        let Some(core) = self.this.upgrade() else {
            return;
        };
        let asks = &self.server_requests;
        let Ok(permit) = asks.permits.clone().try_acquire_owned() else {
            let error = McpError::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "the client is busy: it answers at most {} requests from the server at \
                     once",
                    asks.limit
                ),
            );
            let reply = json!({"jsonrpc": "2.0", "id": id, "error": error});
            tracing::debug!("refusing the server's {method}: too many requests at once");
            let _ = asks.refusals.send(self.reply(&reply)).await;
            return;
        };
        tokio::spawn(async move {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let reply = match core.handlers.answer(&method, params).await {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
            };
            drop(permit);
            if let Err(e) = core.send_within_deadline(core.reply(&reply)).await {
                tracing::debug!(error = %e, "could not answer the server's {method}");
            }
        });
    }

    /// The client's answer to a server request, as a message.
    fn reply(&self, reply: &Value) -> Outgoing {
        Outgoing {
            body: serde_json::to_vec(reply).unwrap_or_default(),
            id: None,
            method: None,
            version: self.version().map(ProtocolVersion::as_str),
            headers: Vec::new(),
        }
    }
}

/// The request an answer's id names. This client's ids are integers; an answer names one with
/// the same integer, or with its exact decimal string (a server that echoes ids as strings:
/// harmless, as no id of this client is a string). Anything else names nothing: `"07"`, `"+7"`,
/// `7.0`, `7e0` are other ids (JSON-RPC compares ids as sent), and so is a number no `i64` holds.
fn request_id(id: &Value) -> Option<i64> {
    match id {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse::<i64>().ok().filter(|n| n.to_string() == *s),
        _ => None,
    }
}

/// Where a link hands what it read. Once the client exists, a message is routed at once, in
/// the task that read it: the request waiting for an answer is woken by the task that read the
/// answer (an HTTP request's own task, for an answer in the POST's response), not through a
/// router task in between, one wake-up less per message. Before that (a server that writes
/// before the client is made), and for the fuzzing harness, messages wait in the router's
/// queue. A link reads one message at a time and routes it before reading on, so what one
/// stream carries is routed in its order, and a slow route slows the reading (as the bounded
/// queue did).
#[derive(Clone)]
pub(crate) struct Inbox {
    queue: mpsc::Sender<Inbound>,
    core: Arc<OnceLock<Weak<Core>>>,
}

/// The client is gone: nothing routes any more.
#[derive(Debug)]
pub(crate) struct Gone;

impl Inbox {
    /// An inbox, and the queue the router reads until [`attach`](Self::attach).
    pub(crate) fn new() -> (Inbox, mpsc::Receiver<Inbound>) {
        let (queue, rx) = mpsc::channel(INBOX);
        let inbox = Inbox {
            queue,
            core: Arc::new(OnceLock::new()),
        };
        (inbox, rx)
    }

    /// From now on, messages are routed by the task that hands them in.
    pub(crate) fn attach(&self, core: &Arc<Core>) {
        let _ = self.core.set(Arc::downgrade(core));
    }

    /// Routes `inbound` (or queues it, before [`attach`](Self::attach)); waits while it is
    /// routed. `Err` once the client is gone.
    pub(crate) async fn send(&self, inbound: Inbound) -> Result<(), Gone> {
        match self.core.get() {
            Some(core) => {
                let core = core.upgrade().ok_or(Gone)?;
                core.route(inbound).await;
                Ok(())
            }
            None => self.queue.send(inbound).await.map_err(|_| Gone),
        }
    }
}

/// Routes what was queued before the client existed (see [`Inbox`]) until the links stop
/// using the queue or the client is dropped, and sends the refusals of server requests past
/// the bound.
pub(crate) fn spawn_router(
    core: Weak<Core>,
    mut inbox: mpsc::Receiver<Inbound>,
    mut refusals: mpsc::Receiver<Outgoing>,
) {
    let weak = core.clone();
    tokio::spawn(async move {
        while let Some(out) = refusals.recv().await {
            let Some(core) = weak.upgrade() else {
                return;
            };
            if let Err(e) = core.send_within_deadline(out).await {
                tracing::debug!(error = %e, "could not refuse a server request");
            }
        }
    });
    tokio::spawn(async move {
        while let Some(msg) = inbox.recv().await {
            let Some(core) = core.upgrade() else {
                return;
            };
            core.route(msg).await;
        }
        if let Some(core) = core.upgrade() {
            core.lose(ClientError::transport("the connection closed"));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::core::{Link, LinkFuture};
    use crate::client::handlers::Handlers;
    use crate::client::limits::Limits;
    use std::time::Duration;

    /// A link that answers each request itself, through its inbox, before its `send`
    /// returns (as an HTTP link does with the answer in a POST's response).
    struct Answering(Inbox);

    impl Link for Answering {
        fn send(&self, out: Outgoing) -> LinkFuture<'_, Result<(), ClientError>> {
            Box::pin(async move {
                let answer = json!({"jsonrpc": "2.0", "id": out.id, "result": {"ok": true}});
                let _ = self.0.send(Inbound::Message(answer)).await;
                Ok(())
            })
        }
        fn close(&self) -> LinkFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    /// Once the client is attached, what a link hands in is routed in the link's own task:
    /// the answer reaches its request with no router task running. Before, it is queued
    /// for the router.
    #[tokio::test]
    async fn an_attached_inbox_routes_in_the_task_that_hands_in() {
        let (inbox, mut queue) = Inbox::new();
        let (core, _refusals) = Core::new(
            Box::new(Answering(inbox.clone())),
            Handlers::default(),
            json!({}),
            Limits::default(),
        );
        let early = json!({"jsonrpc": "2.0", "method": "notifications/message"});
        inbox.send(Inbound::Message(early.clone())).await.unwrap();
        assert!(matches!(queue.try_recv(), Ok(Inbound::Message(m)) if m == early));
        inbox.attach(&core);
        let answer = tokio::time::timeout(
            Duration::from_secs(30),
            core.request_raw("tools/list", json!({}), None),
        )
        .await
        .expect("answered without a router task");
        assert_eq!(answer.unwrap(), json!({"ok": true}));
        assert!(
            queue.try_recv().is_err(),
            "nothing was queued after attaching"
        );
        drop(core);
        let gone = json!({"jsonrpc": "2.0", "method": "notifications/message"});
        assert!(inbox.send(Inbound::Message(gone)).await.is_err());
    }

    /// Issue #27's `client_router` target (F7): `"07"` and `"+7"` answered request 7, as the
    /// string was read as any `i64` text.
    #[test]
    fn an_answer_names_a_request_by_its_integer_or_its_exact_decimal_string() {
        let id = |text: &str| request_id(&serde_json::from_str(text).unwrap());
        assert_eq!(id("7"), Some(7));
        assert_eq!(id("\"7\""), Some(7));
        assert_eq!(id("-3"), Some(-3));
        assert_eq!(id("\"-3\""), Some(-3));
        for other in [
            "\"07\"",
            "\"+7\"",
            "\" 7\"",
            "\"7 \"",
            "\"-0\"",
            "7.0",
            "7e0",
            "\"7.0\"",
            "9223372036854775808",
            "\"9223372036854775808\"",
            "1234567890123456789012345678901234567890",
            "null",
            "true",
            "[7]",
            "{}",
        ] {
            assert_eq!(id(other), None, "{other} names no request");
        }
    }
}
