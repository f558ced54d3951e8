//! One client connection, independent of the transport: its session (if any), its requests in
//! flight, its requests to the client (it is their [`Peer`]), and the [`Step`] types that tell a
//! transport what to do with a message (the dispatcher decides which).

use std::collections::HashMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context as TaskContext, Poll};

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::Server;
use crate::protocol::LogLevel;
use crate::protocol::jsonrpc::{self, Notification};
use crate::protocol::{McpError, RequestId};
use crate::request::Sink;
use crate::request::{Cancellation, ClientAnswer, ClientInfo, Context, Gauge, Peer, Reply, Slot};

/// A response the transport must still wait for; `None` when the request was cancelled.
pub(crate) type Pending = Pin<Box<dyn Future<Output = Option<Reply>> + Send + 'static>>;

/// What the transport does with one incoming message.
pub(crate) enum Step {
    /// Send this response now (cheap requests are answered without a task).
    Reply(Reply),
    /// Run this to completion (on a task of its own) and send what it yields.
    Run(Pending),
    /// Nothing to send (a notification or a client response).
    Nothing,
}

/// What a transport knows about one incoming message besides its text.
#[derive(Default)]
pub(crate) struct Arrival {
    /// Where the request's notifications go, instead of the connection's default.
    pub(crate) sink: Option<Sink>,
    /// The HTTP request headers, on HTTP.
    pub(crate) headers: Option<Arc<http::HeaderMap>>,
    /// Ends the request's HTTP response stream early (resumable streams only).
    pub(crate) closer: Option<Arc<tokio::sync::Notify>>,
    /// The caller, when the HTTP layer verified an access token.
    pub(crate) principal: Option<Arc<crate::auth::Principal>>,
    /// The client's address, on HTTP.
    pub(crate) peer: Option<std::net::IpAddr>,
}

/// What the core needs to know of the transport a connection runs on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wire {
    /// Its name, for [`Context::transport`] and logs.
    pub(crate) name: &'static str,
    /// Whether each request has a response stream of its own that the server can end (HTTP,
    /// the in-process client). Where requests share one stream (stdio), a request the server
    /// ends early is announced with `notifications/cancelled`.
    pub(crate) request_streams: bool,
    /// Whether the connection outlives the message it was made for, so the server can reach
    /// the client later (subscriptions, `list_changed`, session-era tasks). Not so for the
    /// session era served without a session table (`SessionEra::Stateless`).
    pub(crate) lasting: bool,
}

impl Wire {
    pub(crate) const STDIO: Wire = Wire {
        name: "stdio",
        request_streams: false,
        lasting: true,
    };
    pub(crate) const HTTP: Wire = Wire {
        name: "http",
        request_streams: true,
        lasting: true,
    };
    /// HTTP, one message per connection: the session era without a session table.
    pub(crate) const HTTP_ONE_SHOT: Wire = Wire {
        name: "http",
        request_streams: true,
        lasting: false,
    };
    pub(crate) const IN_PROCESS: Wire = Wire {
        name: "in-process",
        request_streams: true,
        lasting: true,
    };
}

/// Per-connection state. A stdio process has one; each test client has one.
pub(crate) struct Connection {
    pub(crate) server: Server,
    pub(crate) wire: Wire,
    /// Serves only the stateless era (the shared connection of the HTTP transport).
    pub(crate) stateless_only: bool,
    /// Where notifications go unless the transport gives a request its own sink.
    sink: Option<Sink>,
    /// The session's `logging/setLevel` as an index into `LogLevel::ALL` (debug, i.e.
    /// everything, until the client sets one). An atomic: it is read on every request.
    log_level: std::sync::atomic::AtomicU8,
    session: OnceLock<Arc<ClientInfo>>,
    /// Requests that can still be cancelled, by id.
    in_flight: Mutex<HashMap<RequestId, Context>>,
    /// Requests whose work is not finished: a cancelled sync tool keeps its slot until its
    /// blocking work ends, so `max_in_flight` bounds the work, not just the bookkeeping.
    active: Arc<Gauge>,
    /// What only some sessions use (asks, subscriptions), allocated on first use: an idle
    /// session does not pay for it.
    extras: OnceLock<Box<Extras>>,
    /// Where notifications unrelated to a request go (stdout; an HTTP session's GET stream).
    pub(crate) standalone: Mutex<Option<Sink>>,
    /// Flips to `true` when the connection shuts down (ends `subscriptions/listen` streams).
    /// (A flag and a `Notify`: a `watch` channel would cost every idle session ~0.5 KiB.)
    pub(crate) closing: Cancellation,
    /// Names this session as the owner of its tasks (made on first use).
    task_owner: OnceLock<String>,
    /// For the connection of a mounted server: the connection it serves through, whose
    /// session it shares and which it reaches the client through (its [`Peer`]).
    parent: Option<std::sync::Weak<Connection>>,
}

impl Connection {
    pub(crate) fn new(server: Server, wire: Wire) -> Arc<Self> {
        Self::with_mode(server, wire, false, None)
    }

    /// A connection whose requests' notifications go to `sink` (stdio's writer, a test client).
    pub(crate) fn with_sink(server: Server, wire: Wire, sink: Sink) -> Arc<Self> {
        Self::with_mode(server, wire, false, Some(sink))
    }

    /// A session-era connection restored from a session store: in the state its `initialize`
    /// (and the client's later `logging/setLevel` and `resources/subscribe`) left it, passing
    /// announced changes on. Nothing in flight moves with it: requests running, and the
    /// server's own requests to the client, stay with the instance that started them.
    pub(crate) fn restore(
        server: Server,
        wire: Wire,
        client: ClientInfo,
        level: LogLevel,
        subscriptions: Vec<String>,
    ) -> Arc<Self> {
        let conn = Self::with_mode(server, wire, false, None);
        conn.open_session(client);
        conn.set_log_level(level);
        if !subscriptions.is_empty() {
            let limit = conn.server.inner.limits.max_subscriptions;
            conn.extras()
                .subscriptions
                .lock()
                .expect("subscriptions lock")
                .extend(subscriptions.into_iter().take(limit));
        }
        conn.start_forwarding();
        conn
    }

    /// A connection that serves only 2026-07-28 requests: `initialize` is unknown on it.
    pub(crate) fn stateless_only(server: Server, wire: Wire) -> Arc<Self> {
        Self::with_mode(server, wire, true, None)
    }

    fn with_mode(
        server: Server,
        wire: Wire,
        stateless_only: bool,
        sink: Option<Sink>,
    ) -> Arc<Self> {
        Arc::new(Connection {
            server,
            wire,
            stateless_only,
            log_level: std::sync::atomic::AtomicU8::new(0),
            session: OnceLock::new(),
            in_flight: Mutex::new(HashMap::new()),
            active: Default::default(),
            extras: OnceLock::new(),
            standalone: Mutex::new(sink.clone()),
            closing: Default::default(),
            task_owner: OnceLock::new(),
            sink,
            parent: None,
        })
    }

    /// The connection to the server mounted at `slot` ([`mount`](super::mount)) through this
    /// one, made on first use: it serves the same era as this one, shares its session and
    /// log level, and reaches the client through it.
    pub(crate) fn child(self: &Arc<Self>, slot: usize, server: &Server) -> Arc<Connection> {
        let child = {
            let mut children = self.extras().children.lock().expect("children lock");
            if children.len() <= slot {
                children.resize(slot + 1, None);
            }
            children[slot]
                .get_or_insert_with(|| {
                    Arc::new(Connection {
                        server: server.clone(),
                        wire: self.wire,
                        stateless_only: self.stateless_only,
                        log_level: std::sync::atomic::AtomicU8::new(0),
                        session: OnceLock::new(),
                        in_flight: Mutex::new(HashMap::new()),
                        active: Default::default(),
                        extras: OnceLock::new(),
                        standalone: Mutex::new(None),
                        closing: Default::default(),
                        task_owner: OnceLock::new(),
                        sink: None,
                        parent: Some(Arc::downgrade(self)),
                    })
                })
                .clone()
        };
        if let Some(session) = self.session.get()
            && child.session.get().is_none()
        {
            let _ = child.session.set(session.clone());
        }
        child
            .log_level
            .store(self.log_level.load(Ordering::Relaxed), Ordering::Relaxed);
        child
    }

    /// The connections of mounted servers made through this one.
    fn children(&self) -> Vec<Arc<Connection>> {
        self.extras.get().map_or_else(Vec::new, |e| {
            let children = e.children.lock().expect("children lock");
            children.iter().flatten().cloned().collect()
        })
    }

    /// The connection this one serves through, for a mounted server's.
    fn parent(&self) -> Option<Arc<Connection>> {
        self.parent.as_ref().and_then(std::sync::Weak::upgrade)
    }

    /// Names this session's tasks after its HTTP session id, so that every instance holding
    /// the session (one that restored it from a shared store) reaches the same tasks in a
    /// shared task store. A digest: the id, which the client uses as a secret, is not written
    /// to the store. Only before the owner is first used (a new or restored session).
    pub(crate) fn own_tasks_as_session(&self, session_id: &str) {
        let _ = self
            .task_owner
            .set(crate::id::digest_hex(session_id.as_bytes()));
    }

    /// This session's name as the owner of tasks: after its HTTP session id
    /// ([`own_tasks_as_session`](Self::own_tasks_as_session)), else random, made on first use
    /// (stdio: one process, one client).
    pub(crate) fn task_owner(&self) -> String {
        format!(
            "session:{}",
            self.task_owner.get_or_init(crate::id::random_id)
        )
    }

    /// The owner of the tasks of HTTP session `id` (see [`task_owner`](Self::task_owner)).
    pub(crate) fn session_task_owner(id: &str) -> String {
        format!("session:{}", crate::id::digest_hex(id.as_bytes()))
    }

    /// Ends this session's tasks for good (the session ended everywhere): those running here
    /// are cancelled, and the finished ones removed from the store, where nobody could read
    /// them any more but they would still count against their client's limit.
    pub(crate) fn end_tasks(&self) {
        if self.task_owner.get().is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (tasks, owner) = (self.server.inner.tasks.clone(), self.task_owner());
            runtime.spawn(async move { tasks.end_session(&owner).await });
        }
    }

    /// Whether tasks of this session still run (the session is not idle then).
    pub(crate) fn has_tasks(&self) -> bool {
        self.task_owner.get().is_some() && self.server.inner.tasks.runs_for(&self.task_owner())
    }

    /// The session opened by `initialize`, if any.
    pub(crate) fn session(&self) -> Option<Arc<ClientInfo>> {
        self.session.get().cloned()
    }

    /// Opens the session; `false` if one is already open.
    pub(crate) fn open_session(&self, client: ClientInfo) -> bool {
        self.session.set(Arc::new(client)).is_ok()
    }

    /// The session's log level.
    pub(crate) fn log_level(&self) -> LogLevel {
        LogLevel::ALL
            [usize::from(self.log_level.load(Ordering::Relaxed)).min(LogLevel::ALL.len() - 1)]
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        let index = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        self.log_level.store(index as u8, Ordering::Relaxed);
    }

    /// The sink for a request: the transport's own for it, else the connection's.
    pub(crate) fn sink_for(&self, given: Option<Sink>) -> Option<Sink> {
        given.or_else(|| self.sink.clone())
    }

    pub(crate) fn on_notification(&self, n: Notification<'_>) {
        match &*n.method {
            "notifications/cancelled" => {
                #[derive(Deserialize)]
                struct Cancelled {
                    #[serde(rename = "requestId")]
                    request_id: RequestId,
                }
                let parsed = n
                    .params
                    .and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok());
                // Unknown, finished and malformed cancellations are ignored, as the spec says.
                // The entry goes at once, so the client may reuse the id straight away.
                if let Some(Cancelled { request_id }) = parsed {
                    self.cancel_request(&request_id);
                }
            }
            "notifications/initialized" => tracing::debug!("client initialized"),
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    /// Cancels the client's request `id`, here or in a mounted server's connection.
    fn cancel_request(&self, id: &RequestId) {
        let found = self.in_flight.lock().expect("in-flight lock").remove(id);
        match found {
            Some(ctx) => {
                tracing::debug!(id = %id, "request cancelled by the client");
                ctx.cancel();
            }
            None => self
                .children()
                .iter()
                .for_each(|child| child.cancel_request(id)),
        }
    }

    /// The state only some sessions use, allocated now if it was not.
    pub(crate) fn extras(&self) -> &Extras {
        self.extras.get_or_init(Default::default)
    }

    /// The resource URIs subscribed to, if any ever were.
    pub(crate) fn subscriptions(&self) -> Option<&Mutex<std::collections::HashSet<String>>> {
        self.extras.get().map(|e| &e.subscriptions)
    }

    /// A client's response: handed to the ask waiting for it (others are ignored).
    pub(crate) fn on_response(&self, r: jsonrpc::ClientResponse<'_>) {
        let waiter = self
            .extras
            .get()
            .and_then(|e| e.outgoing.lock().expect("outgoing lock").remove(&r.id));
        let Some(waiter) = waiter else {
            tracing::debug!(id = %r.id, "ignoring a response to no request of ours");
            return;
        };
        let outcome = match r.outcome {
            Ok(result) => serde_json::from_str::<Value>(result.get())
                .map_err(|e| McpError::invalid_params(format!("Malformed client result: {e}"))),
            Err(error) => {
                #[derive(Deserialize)]
                struct ErrorObject {
                    code: i32,
                    message: String,
                    data: Option<Value>,
                }
                Err(match serde_json::from_str::<ErrorObject>(error.get()) {
                    Ok(e) => McpError {
                        code: crate::protocol::ErrorCode(e.code),
                        message: e.message.into(),
                        data: e.data,
                    },
                    Err(_) => McpError::internal("The client answered with a malformed error"),
                })
            }
        };
        let _ = waiter.send(outcome);
    }

    /// Registers a request that may outlive this call, so it can be cancelled: checks the id
    /// and the connection's limit, then builds its context (holding a slot) with `make`.
    pub(crate) fn begin(
        self: &Arc<Self>,
        id: &RequestId,
        make: impl FnOnce(Slot) -> Context,
    ) -> Result<InFlight, McpError> {
        let limit = self.server.inner.limits.max_in_flight;
        self.begin_in(id, &self.active, limit, "requests", make)
    }

    /// Like [`begin`](Self::begin) for a `subscriptions/listen` stream, which lasts as long as
    /// the client wants: listens have a limit of their own, so they never crowd out requests.
    pub(crate) fn begin_listen(
        self: &Arc<Self>,
        id: &RequestId,
        make: impl FnOnce(Slot) -> Context,
    ) -> Result<InFlight, McpError> {
        let limit = self.server.inner.limits.max_listens;
        let counter = self.extras().listens.clone();
        self.begin_in(id, &counter, limit, "subscriptions/listen streams", make)
    }

    fn begin_in(
        self: &Arc<Self>,
        id: &RequestId,
        counter: &Arc<Gauge>,
        limit: usize,
        what: &str,
        make: impl FnOnce(Slot) -> Context,
    ) -> Result<InFlight, McpError> {
        // The shared stateless connection serves every 2026-07-28 client at once: ids are only
        // unique per client, and cancellation there is closing the stream, so no id table.
        if self.stateless_only {
            let Some(slot) = counter.try_take(limit) else {
                return Err(McpError::internal(format!(
                    "Server busy: {limit} stateless {what} in flight"
                )));
            };
            let ctx = make(slot);
            return Ok(InFlight {
                conn: self.clone(),
                id: id.clone(),
                ctx,
                tracked: false,
            });
        }
        let mut map = self.in_flight.lock().expect("in-flight lock");
        // One hash of the id for the check and the insert.
        let std::collections::hash_map::Entry::Vacant(entry) = map.entry(id.clone()) else {
            tracing::warn!(id = %id, "client reused the id of a request in flight");
            return Err(McpError::invalid_request(format!(
                "Request id {id} is already in flight"
            )));
        };
        let Some(slot) = counter.try_take(limit) else {
            return Err(McpError::internal(format!(
                "Server busy: {limit} {what} already in flight on this connection"
            )));
        };
        let ctx = make(slot);
        entry.insert(ctx.clone());
        Ok(InFlight {
            conn: self.clone(),
            id: id.clone(),
            ctx,
            tracked: true,
        })
    }

    /// Starts passing announced changes to the client (when its session opens).
    pub(crate) fn start_forwarding(self: &Arc<Self>) {
        self.server.inner.forwarder.add(self);
        self.server.inner.mounts.bridge(&self.server.inner.catalog);
    }

    /// Ends `subscriptions/listen` streams (each answers its request).
    pub(crate) fn end_listens(&self) {
        self.closing.cancel();
        self.children().iter().for_each(|c| c.end_listens());
    }

    /// Cancels every request in flight (shutdown).
    pub(crate) fn cancel_all(&self) {
        // Listen streams end first, with a result, rather than as cancelled requests.
        self.closing.cancel();
        // The session's tasks running on this instance end with it (with a shared store,
        // those of its other copies end when those copies do).
        if self.task_owner.get().is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (tasks, owner) = (self.server.inner.tasks.clone(), self.task_owner());
            runtime.spawn(async move { tasks.cancel_owned(&owner).await });
        }
        self.in_flight
            .lock()
            .expect("in-flight lock")
            .values()
            .for_each(Context::cancel);
        self.children().iter().for_each(|c| c.cancel_all());
    }

    /// How many requests have work running (including cancelled sync tools still blocking)
    /// and listen streams are open.
    pub(crate) fn in_flight(&self) -> usize {
        let listens = self.extras.get().map_or(0, |e| e.listens.get());
        let children: usize = self.children().iter().map(|c| c.in_flight()).sum();
        self.active.get() + listens + children
    }

    /// Completes when no request has work running and no listen stream is open.
    pub(crate) async fn drained(&self) {
        while self.in_flight() > 0 {
            self.active.idle().await;
            if let Some(extras) = self.extras.get() {
                extras.listens.idle().await;
            }
            for child in self.children() {
                Box::pin(child.drained()).await;
            }
        }
    }
}

impl Peer for Connection {
    fn standalone(&self) -> Option<Sink> {
        if self.parent.is_some() {
            return self.parent().and_then(|p| p.standalone());
        }
        self.standalone.lock().expect("standalone lock").clone()
    }

    fn start_request(&self) -> (RequestId, ClientAnswer) {
        // A mounted server's asks go out through the connection the client is on, which
        // routes the client's answers back (by its own ids).
        if self.parent.is_some() {
            if let Some(parent) = self.parent() {
                return parent.start_request();
            }
            // The client is gone: an ask that never gets an answer (its sender dropped).
            return (RequestId::Number(-1), oneshot::channel().1);
        }
        let extras = self.extras();
        let id = RequestId::Number(extras.next_outgoing.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        extras
            .outgoing
            .lock()
            .expect("outgoing lock")
            .insert(id.clone(), tx);
        (id, rx)
    }

    fn forget_request(&self, id: &RequestId) -> bool {
        if self.parent.is_some() {
            return self.parent().is_some_and(|p| p.forget_request(id));
        }
        self.extras.get().is_some_and(|e| {
            e.outgoing
                .lock()
                .expect("outgoing lock")
                .remove(id)
                .is_some()
        })
    }

    fn request_timeout(&self) -> std::time::Duration {
        self.server.inner.limits.client_request_timeout
    }
}

/// Session state only some connections need.
#[derive(Default)]
pub(crate) struct Extras {
    /// Our requests to the client awaiting its response (session era), by id.
    outgoing: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, McpError>>>>,
    next_outgoing: AtomicI64,
    /// The resource URIs the client subscribed to.
    pub(crate) subscriptions: Mutex<std::collections::HashSet<String>>,
    /// Open `subscriptions/listen` streams (bounded apart from requests).
    listens: Arc<Gauge>,
    /// The connections of the servers mounted into this one, by mount, made on first use.
    children: Mutex<Vec<Option<Arc<Connection>>>>,
}

/// A request in flight; unregisters itself when dropped (finished, cancelled or abandoned).
pub(crate) struct InFlight {
    conn: Arc<Connection>,
    id: RequestId,
    pub(crate) ctx: Context,
    /// Whether it is in the connection's id table.
    tracked: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Dropped before its result (the client hung up, the task was abandoned): whatever still
        // holds the context (a sync tool's blocking work, a task it spawned) sees a cancellation.
        if !self.ctx.is_finished() {
            self.ctx.cancel();
        }
        if !self.tracked {
            return;
        }
        let mut map = self.conn.in_flight.lock().expect("in-flight lock");
        // Only our own entry: after a cancellation the client may have reused the id.
        if let Some(entry) = map.remove(&self.id)
            && !entry.same_request(&self.ctx)
        {
            map.insert(self.id.clone(), entry);
        }
    }
}

/// Polls a future, turning a panic into `Err` so one bad handler cannot take the server down.
pub(crate) struct CatchUnwind<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut self.0).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(panic_message(&*payload))),
        }
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned())
}
