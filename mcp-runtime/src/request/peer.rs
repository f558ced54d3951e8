//! The way back to the client: the [`Peer`] a request's connection is, and how a handler's
//! asks reach the client ([`Asker`]).

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::ask::round::Round;
use crate::outbound::Sink;
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
    Round(Arc<Round>),
    /// A 2026-07-28 task: answers arrive through `tasks/update`.
    Task(Arc<crate::task::Live>),
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
