//! Change notifications in both eras: `resources/subscribe`/`unsubscribe` and the list-changed
//! notifications of a session, and 2026-07-28 `subscriptions/listen` streams.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::connection::{Connection, Step};
use super::era::{self, Cache, Scope};
use super::handler::{context, params_of, reply};
use super::mount::Subscriber;
use super::resources::check_uri_length;
use crate::catalog::{Change, covers};
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::params::{Body, ListenFilter, Request};
use crate::protocol::{McpError, RequestId};
use crate::registry::Listed;
use crate::request::Asker;
use crate::request::Reply;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What a `subscriptions/listen` gets: what it asked for ([`ListenFilter`]) that this server
/// can send, and whose tasks.
#[derive(Clone, Default, Serialize)]
struct Filter {
    #[serde(flatten)]
    honoured: ListenFilter,
    /// Whose tasks those may be (the stream's caller); not on the wire.
    #[serde(skip)]
    owner: Option<String>,
}

impl Filter {
    /// A change of every kind this filter asks for (after missed changes).
    fn everything(&self) -> Vec<Change> {
        let mut all = Vec::new();
        for (wanted, change) in [
            (self.honoured.tools_list_changed, Change::Tools),
            (self.honoured.prompts_list_changed, Change::Prompts),
            (self.honoured.resources_list_changed, Change::Resources),
        ] {
            if wanted {
                all.push(change);
            }
        }
        for uri in self.honoured.resource_subscriptions.iter().flatten() {
            all.push(Change::Updated(uri.as_str().into()));
        }
        all
    }

    fn wants(&self, change: &Change) -> bool {
        match change {
            Change::Tools => self.honoured.tools_list_changed,
            Change::Prompts => self.honoured.prompts_list_changed,
            Change::Resources => self.honoured.resources_list_changed,
            Change::Updated(uri) => self
                .honoured
                .resource_subscriptions
                .as_ref()
                .is_some_and(|subs| subs.iter().any(|s| covers(s, uri))),
            // Only the owner's own tasks: another caller naming a task id hears nothing.
            Change::Task { id, owner, .. } => {
                self.owner.as_deref() == Some(&**owner)
                    && self
                        .honoured
                        .task_ids
                        .as_ref()
                        .is_some_and(|ids| ids.iter().any(|t| **t == **id))
            }
            // Stands for every kind: the listen loop expands it with `everything`.
            Change::Everything => false,
        }
    }
}

/// The notification announcing `change`, with `_meta` members (a subscription id) if any;
/// `None` for [`Change::Everything`], which stands for one notification of each kind.
fn notification(change: &Change, meta: Option<&Value>) -> Option<Vec<u8>> {
    let (method, mut params) = match change {
        Change::Tools => ("notifications/tools/list_changed", Map::new()),
        Change::Prompts => ("notifications/prompts/list_changed", Map::new()),
        Change::Resources => ("notifications/resources/list_changed", Map::new()),
        Change::Updated(uri) => {
            let mut params = Map::new();
            params.insert("uri".into(), Value::String(uri.to_string()));
            ("notifications/resources/updated", params)
        }
        Change::Task { task, .. } => (
            "notifications/tasks",
            serde_json::from_str(task).unwrap_or_default(),
        ),
        Change::Everything => return None,
    };
    if let Some(meta) = meta {
        params.insert("_meta".into(), meta.clone());
    }
    Some(encode_notification(method, params))
}

/// Passes announced changes to a server's session-era connections (held weakly). One task per
/// server passes each change on (a task per session would cost every idle session its memory).
pub(crate) struct Forwarder {
    conns: Mutex<Vec<Weak<Connection>>>,
    /// The length after the last sweep of closed connections (sweeps are amortized).
    swept: AtomicUsize,
    /// The forwarding task (restarted if its runtime went away, e.g. a server served again on
    /// a new runtime).
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Dropped with the server: ends the forwarding task even if no change ever comes.
    alive: tokio::sync::watch::Sender<()>,
}

impl Default for Forwarder {
    fn default() -> Self {
        Forwarder {
            conns: Mutex::default(),
            swept: AtomicUsize::new(0),
            task: Mutex::default(),
            alive: tokio::sync::watch::channel(()).0,
        }
    }
}

impl Forwarder {
    pub(crate) fn add(self: &Arc<Self>, conn: &Arc<Connection>) {
        {
            let mut conns = self.conns.lock().expect("forwarder lock");
            // A `Weak` keeps its connection's allocation: drop those of closed ones now and then.
            if conns.len() >= 2 * self.swept.load(Ordering::Relaxed).max(16) {
                conns.retain(|c| c.strong_count() > 0);
                self.swept.store(conns.len(), Ordering::Relaxed);
            }
            conns.push(Arc::downgrade(conn));
        }
        let mut task = self.task.lock().expect("forwarder lock");
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut changes = conn.server.inner.catalog.subscribe();
        let mut alive = self.alive.subscribe();
        // Ends when the server is gone (its list dropped) or its `Catalog` handle is.
        let forwarder = Arc::downgrade(self);
        *task = Some(runtime.spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                let change = tokio::select! {
                    change = changes.recv() => change,
                    // The server is gone (its sender dropped).
                    _ = alive.changed() => return,
                };
                let change = match change {
                    // The change bus may have missed changes: as for a lag.
                    Ok(Change::Everything) => None,
                    Ok(change) => Some(change),
                    // Changes were missed: tell every client everything may have changed.
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "change notifications lagged; announcing all");
                        None
                    }
                    Err(RecvError::Closed) => return,
                };
                let Some(forwarder) = forwarder.upgrade() else {
                    return;
                };
                let live: Vec<Arc<Connection>> = {
                    let mut conns = forwarder.conns.lock().expect("forwarder lock");
                    conns.retain(|c| c.strong_count() > 0);
                    forwarder.swept.store(conns.len(), Ordering::Relaxed);
                    conns.iter().filter_map(Weak::upgrade).collect()
                };
                for conn in live {
                    match &change {
                        Some(change) => forward(&conn, change),
                        None => forward_everything(&conn),
                    }
                }
            }
        }));
    }
}

/// Whether the server has anything a change of this kind concerns.
fn serves(conn: &Connection, change: &Change) -> bool {
    let inner = &conn.server.inner;
    match change {
        Change::Tools => inner.serves_tools(),
        Change::Prompts => inner.serves_prompts(),
        Change::Resources | Change::Updated(_) => inner.serves_resources(),
        // Session-era tasks announce themselves (`notifications/tasks/status`).
        Change::Task { .. } => false,
        // Expanded by `forward_everything` before it gets here.
        Change::Everything => false,
    }
}

/// Session era: passes an announced change to the client, if it concerns it.
pub(super) fn forward(conn: &Connection, change: &Change) {
    if !serves(conn, change) {
        return;
    }
    if let Change::Updated(uri) = change {
        let Some(subscribed) = conn.subscriptions() else {
            return;
        };
        let subscribed = subscribed.lock().expect("subscriptions lock");
        if !subscribed.iter().any(|s| covers(s, uri)) {
            return;
        }
    }
    let sink = conn.standalone.lock().expect("standalone lock").clone();
    if let Some(sink) = sink
        && let Some(notification) = notification(change, None)
    {
        sink.send(notification);
    }
}

/// Session era: a GET stream that replaces one the client lost (it reconnected with a
/// `Last-Event-ID` nobody recorded, as every standalone stream's is) carries the session's
/// notifications from now on, starting with every list and every subscribed resource: what
/// went out on the lost stream may never have arrived.
pub(crate) fn reopen_standalone(conn: &Connection, sink: crate::request::Sink) {
    *conn.standalone.lock().expect("standalone lock") = Some(sink);
    forward_everything(conn);
}

/// After missed changes: every list may have changed, and every subscribed resource.
fn forward_everything(conn: &Connection) {
    for change in [Change::Tools, Change::Prompts, Change::Resources] {
        forward(conn, &change);
    }
    let subscribed: Vec<String> = conn
        .subscriptions()
        .map(|s| {
            s.lock()
                .expect("subscriptions lock")
                .iter()
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    for uri in subscribed {
        forward(conn, &Change::Updated(uri.into()));
    }
}

/// Whether `uri` names an enabled resource of the server's own or matches an enabled template.
fn owns_resource(conn: &Connection, uri: &str) -> bool {
    let registry = &conn.server.inner.registry;
    let catalog = &conn.server.inner.catalog;
    match registry.static_resource(uri) {
        Some(r) => r.enabled(catalog),
        None => registry
            .templates
            .items
            .iter()
            .any(|t| t.enabled(catalog) && t.template.matches(uri).is_some()),
    }
}

/// Whether `uri` names an enabled resource or matches an enabled template, of the server's
/// own or of a mount (the caller has checked its length).
fn knows_resource(conn: &Arc<Connection>, uri: &str) -> bool {
    // A mounted server's resource is subscribed to here, under its mounted URI: its updates
    // are announced here under that URI (and an upstream is asked for them).
    owns_resource(conn, uri)
        || conn
            .server
            .inner
            .mounts
            .subscribe(conn, Subscriber::session(conn), uri)
}

pub(super) fn subscribe(conn: &Arc<Connection>, scope: &Scope, req: &Request) -> Step {
    let uri = params_of!(scope, req, Body::Uri).uri.clone();
    if let Err(e) = check_uri_length(conn, &uri) {
        return Step::Reply(scope.err(&req.id, e));
    }
    if !knows_resource(conn, &uri) {
        return Step::Reply(scope.err(&req.id, crate::resource::not_found(&uri, None)));
    }
    {
        let mut subscribed = conn
            .extras()
            .subscriptions
            .lock()
            .expect("subscriptions lock");
        let limit = conn.server.inner.limits.max_subscriptions;
        if subscribed.len() >= limit && !subscribed.contains(&uri) {
            let e = McpError::invalid_params(format!(
                "Too many subscriptions: this session has {limit}; unsubscribe from some first"
            ));
            return Step::Reply(scope.err(&req.id, e));
        }
        subscribed.insert(uri);
    }
    reply(conn, scope, req, &Map::new(), Cache::No)
}

pub(super) fn unsubscribe(conn: &Connection, scope: &Scope, req: &Request) -> Step {
    let uri = params_of!(scope, req, Body::Uri).uri.clone();
    if let Some(subscribed) = conn.subscriptions() {
        subscribed.lock().expect("subscriptions lock").remove(&uri);
    }
    let who = Subscriber::session(conn);
    conn.server.inner.mounts.unsubscribe(conn, who, &uri);
    reply(conn, scope, req, &Map::new(), Cache::No)
}

/// 2026-07-28 `subscriptions/listen`: acknowledges what it will send, then sends each
/// announced change the client asked for, tagged with the subscription id (the request's
/// id), until the client cancels (or closes the HTTP stream) or the server shuts down, when
/// it answers the request.
pub(super) fn listen(conn: &Arc<Connection>, scope: Scope, req: Request) -> Step {
    let asked: &ListenFilter = &params_of!(scope, req, Body::Listen).notifications;
    let limit = conn.server.inner.limits.max_subscriptions;
    if asked
        .resource_subscriptions
        .as_ref()
        .is_some_and(|s| s.len() > limit)
    {
        let e = McpError::invalid_params(format!(
            "Too many resourceSubscriptions: at most {limit} per stream"
        ));
        return Step::Reply(scope.err(&req.id, e));
    }
    for uri in asked.resource_subscriptions.iter().flatten() {
        if let Err(e) = check_uri_length(conn, uri) {
            return Step::Reply(scope.err(&req.id, e));
        }
    }
    // Each change is checked against every watched id, and a resync reads each from the task
    // store: as bounded as resource subscriptions.
    if asked.task_ids.as_ref().is_some_and(|ids| ids.len() > limit) {
        let e = McpError::invalid_params(format!("Too many taskIds: at most {limit} per stream"));
        return Step::Reply(scope.err(&req.id, e));
    }
    // Only what this server can ever send is honoured.
    let inner = &conn.server.inner;
    let registry = &inner.registry;
    let honoured = Filter {
        honoured: ListenFilter {
            tools_list_changed: asked.tools_list_changed && inner.serves_tools(),
            prompts_list_changed: asked.prompts_list_changed && inner.serves_prompts(),
            resources_list_changed: asked.resources_list_changed && inner.serves_resources(),
            resource_subscriptions: asked
                .resource_subscriptions
                .clone()
                .filter(|_| inner.serves_resources()),
            task_ids: asked
                .task_ids
                .clone()
                .filter(|_| registry.has_task_tools() && super::tasks::declares_extension(&scope)),
        },
        owner: Some(super::tasks::owner(conn, &scope)),
    };
    let Some(sink) = scope.sink.clone() else {
        let e = McpError::invalid_request(
            "subscriptions/listen needs a stream to the client (not available with JSON-only HTTP responses)",
        );
        return Step::Reply(scope.err(&req.id, e));
    };
    let id = req.id.clone();
    let in_flight = match conn.begin_listen(&id, |slot| {
        context(
            conn,
            &scope,
            &id,
            slot,
            Asker::Unavailable("a listen stream asks nothing"),
        )
    }) {
        Ok(f) => f,
        Err(e) => return Step::Reply(scope.err(&id, e)),
    };
    // Subscribed before the acknowledgement: nothing announced after it is missed.
    let mut changes = conn.server.inner.catalog.subscribe();
    conn.server.inner.mounts.bridge(&conn.server.inner.catalog);
    // A mounted server's resources: its source is told (a proxy subscribes upstream), for as
    // long as the stream lasts.
    let mounted = MountedSubscriptions::new(
        conn,
        honoured.honoured.resource_subscriptions.iter().flatten(),
    );
    let conn = conn.clone();
    Step::Run(Box::pin(async move {
        let _mounted = mounted;
        use tokio::sync::broadcast::error::RecvError;
        let meta = json!({ SUBSCRIPTION_ID: &id });
        let mut ack = Map::new();
        ack.insert(
            "notifications".into(),
            serde_json::to_value(&honoured).expect("a filter serializes"),
        );
        ack.insert("_meta".into(), meta.clone());
        sink.send(encode_notification(
            "notifications/subscriptions/acknowledged",
            ack,
        ));
        let ctx = &in_flight.ctx;
        loop {
            tokio::select! {
                biased;
                _ = conn.closing.cancelled() => break,
                _ = ctx.cancelled() => return None,
                change = changes.recv() => match change {
                    Ok(change) if honoured.wants(&change) => {
                        if let Some(n) = notification(&change, Some(&meta)) {
                            sink.send(n);
                        }
                    }
                    // Changes were missed (here, or on the change bus): everything asked for
                    // may have changed.
                    Ok(Change::Everything) | Err(RecvError::Lagged(_)) => {
                        for n in honoured.everything().iter().filter_map(|c| notification(c, Some(&meta))) {
                            sink.send(n);
                        }
                        // A task's status is no hint but its state: read it again.
                        if let (Some(ids), Some(owner)) = (&honoured.honoured.task_ids, &honoured.owner) {
                            for change in super::tasks::current(&conn, owner, ids).await {
                                if let Some(n) = notification(&change, Some(&meta)) {
                                    sink.send(n);
                                }
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(RecvError::Closed) => break,
                },
            }
        }
        // The server ends the stream: where there is no stream of its own to close (stdio), it says
        // so with `notifications/cancelled` (the one use 2026-07-28 allows servers), then
        // answers the request (the graceful end), which the client may then ignore.
        if !conn.wire.request_streams {
            sink.send(encode_notification(
                "notifications/cancelled",
                json!({ "requestId": &id, "reason": "The server is shutting down" }),
            ));
        }
        ctx.finish();
        drop(in_flight);
        Some(listen_result(&conn, &scope, &id, meta))
    }))
}

/// The mounted resources one listen stream subscribed to, unsubscribed from when it ends
/// (answered, cancelled or dropped).
struct MountedSubscriptions {
    conn: Arc<Connection>,
    who: Subscriber,
    uris: Vec<String>,
}

impl MountedSubscriptions {
    fn new<'a>(conn: &Arc<Connection>, uris: impl Iterator<Item = &'a String>) -> Self {
        let who = Subscriber::listen();
        let mounts = &conn.server.inner.mounts;
        let uris = uris
            .filter(|uri| !owns_resource(conn, uri) && mounts.subscribe(conn, who, uri))
            .cloned()
            .collect();
        MountedSubscriptions {
            conn: conn.clone(),
            who,
            uris,
        }
    }
}

impl Drop for MountedSubscriptions {
    fn drop(&mut self) {
        for uri in &self.uris {
            self.conn
                .server
                .inner
                .mounts
                .unsubscribe(&self.conn, self.who, uri);
        }
    }
}

/// The result that ends a listen stream: empty, with the subscription id.
fn listen_result(conn: &Connection, scope: &Scope, id: &RequestId, meta: Value) -> Reply {
    let meta = meta.as_object().cloned().unwrap_or_default();
    era::encode_ok(
        &conn.server.inner,
        scope.version().era(),
        id,
        &Map::new(),
        Some(&meta),
        Cache::No,
    )
}
