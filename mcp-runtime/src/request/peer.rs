//! The way back to the client: the [`Peer`] a request's connection is, and how a handler's
//! asks reach the client ([`Asker`]). The two 2026-07-28 ways, a multi-round-trip request's
//! round and a task, are defined above this layer (`request_state::round::Round`, `task::Live`); here
//! they are the small traits [`RoundAsks`] and [`TaskAsks`], which is all a request and the
//! asks need of them.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Notify, oneshot};

use super::Sink;
use crate::protocol::{McpError, RequestId};

/// Where the client's answer to a server-to-client request arrives.
pub(crate) type ClientAnswer = oneshot::Receiver<Result<Value, McpError>>;

/// The client end of a connection, as a request sees it: the channel for messages that belong to
/// no request, and requests to the client answered by id. A session-era connection implements
/// it in this process; a deployment spread over several processes implements it over its message
/// bus. Kept object-safe and small for that reason.
pub(crate) trait Peer: Send + Sync {
    /// The connection's own channel to the client (stdout, an HTTP session's GET stream), for
    /// messages that belong to no request; `None` while none is open.
    fn standalone(&self) -> Option<Sink>;

    /// Registers a request to the client: its new id, and where the client's answer (its
    /// JSON-RPC response with that id) will arrive.
    fn start_request(&self) -> (RequestId, ClientAnswer);

    /// Forgets a request to the client; `true` if it was still unanswered.
    fn forget_request(&self, id: &RequestId) -> bool;

    /// How long the client has to answer a request.
    fn request_timeout(&self) -> Duration;
}

/// How a request's handler reaches the client.
pub(crate) enum Asker {
    /// It cannot (with the reason given to the handler).
    Unavailable(&'static str),
    /// Session era: requests over the connection.
    Session(Weak<dyn Peer>),
    /// 2026-07-28: answers arrive in retries.
    Round(Arc<dyn RoundAsks>),
    /// A 2026-07-28 task: answers arrive through `tasks/update`.
    Task(Arc<dyn TaskAsks>),
}

/// What the client said to one ask of a round.
pub(crate) enum Answer {
    /// Its answer.
    Given(Value),
    /// Nothing yet.
    Missing,
    /// It answered under this key, but a different question.
    Changed,
}

/// The asks of one round of a 2026-07-28 multi-round-trip request (`request_state::round::Round`): each
/// is answered from the client's retry, or recorded, and the handler is stopped to ask it.
pub(crate) trait RoundAsks: Send + Sync {
    /// The key of the next ask of a kind: `elicit-0`, `elicit-1`, `sample-0`, …
    fn next_key(&self, prefix: &'static str) -> String;

    /// The value remembered under `key` (`Context::remember`), if any.
    fn recall(&self, key: &str) -> Option<Value>;

    /// Remembers `value` under `key` for the rounds to come.
    fn keep(&self, key: &str, value: Value);

    /// The client's answer to `key`, if it gave one to the question `digest` names.
    fn answer(&self, key: &str, digest: &str) -> Answer;

    /// Records an ask the client must answer (`method` with `params`), and raises
    /// [`blocked`](Self::blocked).
    fn need(&self, key: String, method: &'static str, params: Value, digest: String);

    /// Raised once the handler waits on an ask with no answer.
    fn blocked(&self) -> &Blocked;
}

/// The future of an ask inside a task, boxed: only a task that asks pays for it, never a call.
pub(crate) type AskFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The asks of a 2026-07-28 task (`task::Live`): the task waits in `input_required` until the
/// client answers through `tasks/update`.
pub(crate) trait TaskAsks: Send + Sync {
    /// The task's id.
    fn id(&self) -> &str;

    /// The key of the next ask of a kind: `elicit-0`, `elicit-1`, `sample-0`, …
    fn next_key(&self, prefix: &'static str) -> String;

    /// The round of the call that made the task, while the task has not started: what is asked
    /// upfront and remembered then goes through it.
    fn upfront(&self) -> Option<&dyn RoundAsks>;

    /// Parks the task on a question (`{"method", "params"}`) under `key`; its answer arrives
    /// on the receiver.
    fn ask(
        &self,
        key: String,
        request: Value,
    ) -> AskFuture<'_, Result<oneshot::Receiver<Value>, McpError>>;

    /// Takes a question back whose ask ended without an answer.
    fn withdraw<'a>(&'a self, key: &'a str) -> AskFuture<'a, ()>;
}

/// A flag raised once, and the wake-up of whoever waits for it.
#[derive(Default)]
pub(crate) struct Blocked {
    raised: AtomicBool,
    notify: Notify,
}

impl Blocked {
    pub(crate) fn raise(&self) {
        self.raised.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }

    /// Completes once raised.
    pub(crate) async fn wait(&self) {
        loop {
            // Registered before the check: a raise in between still wakes it.
            let notified = self.notify.notified();
            if self.is_raised() {
                return;
            }
            notified.await;
        }
    }
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Asker::Unavailable(_) => "Unavailable",
            Asker::Session(_) => "Session",
            Asker::Round(_) => "Round",
            Asker::Task(_) => "Task",
        })
    }
}
