//! How a [`Proxy`](super::Proxy) keeps its upstream connections: opened again after the
//! upstream died ([`Link`]), and one per client session in front when the upstream keeps
//! state for its client ([`Upstreams`], [`UpstreamSessions`]).

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use super::calls::{Calls, forwarding};
use crate::client::{Client, ClientBuilder, ClientError, ServerNotification};
use crate::protocol::{McpError, ProtocolEra, ProtocolVersion};
use crate::server::connection::Connection;
use crate::server::mount::{Subscriber, connection_key};

/// The wait before the first attempt to reconnect after an attempt failed; it doubles with
/// each failure in a row, up to [`BACKOFF_MAX`].
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between two attempts to reconnect.
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// Which upstream connection serves a client in front of a [`Proxy`](super::Proxy)
/// ([`Proxy::upstream_sessions`](super::Proxy::upstream_sessions)).
///
/// An upstream is *stateful* when it keeps state for the client it talks to: a session-era
/// upstream (protocol 2025-11-25 and before) over stdio (the process is the session) or over
/// Streamable HTTP with an `Mcp-Session-Id`. What it keeps is the client's (log level, resource
/// subscriptions, roots, whatever its tools remember between calls), and a connection shared by
/// every client in front would mix them. A 2026-07-28 upstream, or a session-era HTTP server
/// without sessions, keeps none: one shared connection serves everyone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamSessions {
    /// [`PerSession`](Self::PerSession) when the upstream is stateful, else
    /// [`Shared`](Self::Shared) (the default).
    #[default]
    Auto,
    /// One upstream connection for every client in front.
    Shared,
    /// One upstream connection (a process, for a spawned server) per session-era client
    /// session in front, opened on its first request and closed when the session ends (an
    /// HTTP session deleted or expired, a stdio client gone), at most
    /// [`Proxy::max_upstream_sessions`](super::Proxy::max_upstream_sessions) at once: past
    /// that, a new session's first request closes the upstream connection of the session
    /// that has waited longest since its last request (one with no request running, and
    /// without subscriptions if there is one), which gets a new one if it comes back, and is
    /// refused when every one has a request running. 2026-07-28 requests, which have no
    /// session, share one connection.
    PerSession,
}

/// The most upstream sessions kept at once by default (one per client session in front).
pub(super) const DEFAULT_MAX_SESSIONS: usize = 16;

/// A spawned server's command, kept to start it again: its program, arguments, environment
/// changes and working directory (`tokio::process::Command` is not `Clone`).
struct CommandSpec {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
}

impl CommandSpec {
    fn of(command: &tokio::process::Command) -> CommandSpec {
        let std = command.as_std();
        CommandSpec {
            program: std.get_program().to_owned(),
            args: std.get_args().map(ToOwned::to_owned).collect(),
            envs: std
                .get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
                .collect(),
            dir: std.get_current_dir().map(ToOwned::to_owned),
        }
    }

    fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args);
        for (k, v) in &self.envs {
            match v {
                Some(v) => command.env(k, v),
                None => command.env_remove(k),
            };
        }
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command
    }
}

/// What a connection is opened to.
enum Target {
    Spawn(CommandSpec),
    #[cfg(feature = "http")]
    Connect(String),
    /// A deprecated HTTP+SSE server's SSE endpoint.
    #[cfg(feature = "http")]
    ConnectSse(String),
}

/// How to open a connection to the upstream (again).
pub(super) struct Opener {
    builder: ClientBuilder,
    target: Target,
    /// For messages: the command or the URL.
    what: String,
}

impl Opener {
    pub(super) fn spawn(builder: ClientBuilder, command: &tokio::process::Command) -> Opener {
        let spec = CommandSpec::of(command);
        let what = std::iter::once(&spec.program)
            .chain(&spec.args)
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        Opener {
            builder,
            target: Target::Spawn(spec),
            what: format!("`{what}`"),
        }
    }

    #[cfg(feature = "http")]
    pub(super) fn connect(builder: ClientBuilder, url: &str) -> Opener {
        Opener {
            builder,
            target: Target::Connect(url.to_owned()),
            what: url.to_owned(),
        }
    }

    #[cfg(feature = "http")]
    pub(super) fn connect_sse(builder: ClientBuilder, url: &str) -> Opener {
        Opener {
            builder,
            target: Target::ConnectSse(url.to_owned()),
            what: url.to_owned(),
        }
    }

    /// A new connection whose asks go to the calls of `calls`.
    pub(super) async fn open(&self, calls: &Arc<Calls>) -> Result<Client, ClientError> {
        let builder = forwarding(self.builder.clone(), calls);
        match &self.target {
            Target::Spawn(spec) => builder.spawn(spec.command()).await,
            #[cfg(feature = "http")]
            Target::Connect(url) => builder.connect(url).await,
            #[cfg(feature = "http")]
            Target::ConnectSse(url) => builder.connect_sse(url).await,
        }
    }
}

/// Whether `e` says that the connection is over (rather than that one request failed).
fn ends_connection(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Transport(_) | ClientError::Closed | ClientError::SessionExpired
    )
}

/// The state of a [`Link`].
#[derive(Default)]
struct State {
    /// The connection in use (the latest; before the first request of a session's link,
    /// none).
    client: Option<Arc<Client>>,
    /// Why the connection in use is over, once a request learned it.
    dead: Option<String>,
    /// Whether its end was reported (logged) already.
    reported: bool,
    /// Failed attempts to reconnect in a row, the last one's error, and when the next may be.
    failures: u32,
    last_error: Option<String>,
    retry_at: Option<Instant>,
}

/// One upstream connection, opened again on the next request after it died (when it has an
/// [`Opener`]), with a bounded backoff between failed attempts.
pub(super) struct Link {
    opener: Option<Arc<Opener>>,
    /// The calls waiting for this connection, where its asks go (`None` for a
    /// [`Proxy::new`](super::Proxy::new)'s, whose client answers its asks itself).
    pub(super) calls: Option<Arc<Calls>>,
    state: Mutex<State>,
    /// One attempt to (re)connect at a time.
    opening: tokio::sync::Mutex<()>,
    /// Where every connection's notifications go (the proxy's, shared by its links).
    events: broadcast::Sender<ServerNotification>,
    /// The URIs subscribed to through this connection, each with its subscribers in front
    /// (`Subscriber::key`: a session's connection, or a 2026-07-28 listen stream):
    /// subscribed to again on a new connection, unsubscribed from when the last of them
    /// unsubscribes.
    pub(super) subscribed: Mutex<HashMap<String, HashSet<usize>>>,
    /// A 2026-07-28 upstream's listen stream for each subscribed URI (it has no
    /// `resources/unsubscribe`: ending the stream ends the subscription).
    pub(super) listening: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// The URIs a session-era upstream was told to subscribe to and not to unsubscribe from:
    /// the lock is held across the telling, so that a subscription and an unsubscription
    /// sent one after the other cannot overtake each other (see `Proxy`'s `reconcile`).
    pub(super) told: tokio::sync::Mutex<HashSet<String>>,
    /// Requests going through it now ([`Busy`]), and when the last one came or went.
    busy: AtomicUsize,
    last_used: Mutex<Instant>,
}

/// A request going through a [`Link`] (which a session's link is not closed under).
pub(super) struct Busy(Arc<Link>);

impl Busy {
    fn new(link: Arc<Link>) -> Busy {
        link.busy.fetch_add(1, Ordering::AcqRel);
        link.touch();
        Busy(link)
    }
}

impl std::ops::Deref for Busy {
    type Target = Link;
    fn deref(&self) -> &Link {
        &self.0
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Link {
    /// A link over `client`, opened again with `opener` (if any) once it died.
    pub(super) fn new(
        client: Option<Client>,
        opener: Option<Arc<Opener>>,
        calls: Option<Arc<Calls>>,
        events: broadcast::Sender<ServerNotification>,
    ) -> Link {
        let link = Link {
            opener,
            calls,
            state: Mutex::default(),
            opening: tokio::sync::Mutex::new(()),
            events,
            subscribed: Mutex::default(),
            listening: Mutex::default(),
            told: tokio::sync::Mutex::default(),
            busy: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
        };
        if let Some(client) = client {
            link.adopt(Arc::new(client), false);
        }
        link
    }

    fn touch(&self) {
        *self.last_used.lock().expect("last-used lock") = Instant::now();
    }

    /// The connection in use (the latest), if any was opened.
    pub(super) fn current(&self) -> Option<Arc<Client>> {
        self.state.lock().expect("link lock").client.clone()
    }

    /// The connection to send a request on: the one in use while it lives, else a new one.
    pub(super) async fn client(&self) -> Result<Arc<Client>, McpError> {
        if let Some(client) = self.usable() {
            return Ok(client);
        }
        // Boxed: a connect's future is ~13 KB, and every forwarded call's future would carry
        // (and copy) that room for the rare call that reconnects.
        Box::pin(self.reconnect()).await
    }

    /// [`Link::client`] when the connection in use is gone: a new one, one opener at a time.
    async fn reconnect(&self) -> Result<Arc<Client>, McpError> {
        let Some(opener) = self.opener.clone() else {
            // Nothing to reconnect with: the connection's own errors say what happened.
            return self.current().ok_or_else(|| {
                McpError::internal("The upstream server has no connection".to_owned())
            });
        };
        let _turn = self.opening.lock().await;
        if let Some(client) = self.usable() {
            return Ok(client);
        }
        {
            let state = self.state.lock().expect("link lock");
            if let Some(at) = state.retry_at
                && let Some(left) = at.checked_duration_since(Instant::now())
            {
                return Err(McpError::internal(format!(
                    "The upstream server {} is unavailable ({}); the next attempt to reconnect is in {} ms",
                    opener.what,
                    state.last_error.as_deref().unwrap_or("it went away"),
                    left.as_millis().max(1)
                )));
            }
        }
        let calls = self.calls.clone().unwrap_or_default();
        // A session's link opens its first connection here too: nothing to make again on it
        // (a subscription that opens it is made by its own `reconcile`).
        let again = self.current().is_some();
        match opener.open(&calls).await {
            Ok(client) => {
                let client = Arc::new(client);
                if again {
                    tracing::info!(upstream = %opener.what, "connected to the upstream server again");
                }
                self.adopt(client.clone(), again);
                Ok(client)
            }
            Err(e) => {
                let mut state = self.state.lock().expect("link lock");
                state.failures += 1;
                let wait = BACKOFF_FIRST
                    .saturating_mul(1 << (state.failures - 1).min(16))
                    .min(BACKOFF_MAX);
                state.retry_at = Some(Instant::now() + wait);
                state.last_error = Some(e.to_string());
                tracing::warn!(
                    upstream = %opener.what,
                    error = %e,
                    retry_in_ms = wait.as_millis() as u64,
                    "could not reconnect to the upstream server"
                );
                Err(McpError::internal(format!(
                    "The upstream server {} is unavailable: could not reconnect ({e}); the next attempt is in {} ms",
                    opener.what,
                    wait.as_millis()
                )))
            }
        }
    }

    /// The connection in use, unless it is over (which is then reported, once).
    fn usable(&self) -> Option<Arc<Client>> {
        let mut state = self.state.lock().expect("link lock");
        let client = state.client.clone()?;
        let gone = state.dead.is_some() || client.is_gone();
        if !gone {
            return Some(client);
        }
        if !state.reported && self.opener.is_some() {
            state.reported = true;
            let why = state
                .dead
                .clone()
                .unwrap_or_else(|| "the connection ended".to_owned());
            tracing::warn!(
                upstream = %self.what(),
                reason = %why,
                "the upstream server went away; the next request reconnects"
            );
        }
        None
    }

    fn what(&self) -> &str {
        self.opener.as_ref().map_or("", |o| o.what.as_str())
    }

    /// Makes `client` the connection in use: its notifications go to the proxy's, and (when
    /// it replaces one that died) the subscriptions are made again on it.
    fn adopt(&self, client: Arc<Client>, again: bool) {
        {
            let mut state = self.state.lock().expect("link lock");
            *state = State {
                client: Some(client.clone()),
                ..State::default()
            };
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut notifications = client.notifications();
        let events = self.events.clone();
        runtime.spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match notifications.recv().await {
                    Ok(n) => {
                        // Nobody listening yet is not an error.
                        let _ = events.send(n);
                    }
                    Err(RecvError::Lagged(_)) => {
                        for method in [
                            "notifications/tools/list_changed",
                            "notifications/prompts/list_changed",
                            "notifications/resources/list_changed",
                        ] {
                            let _ = events.send(ServerNotification {
                                method: method.to_owned(),
                                params: serde_json::Value::Null,
                            });
                        }
                    }
                    // The connection was dropped.
                    Err(RecvError::Closed) => return,
                }
            }
        });
        // A 2026-07-28 upstream's subscriptions are listen streams, which follow the link
        // onto the new connection (`Proxy`'s `keep_listening`).
        if again && client.era() != ProtocolEra::Stateless {
            let uris: Vec<String> = self
                .subscribed
                .lock()
                .expect("subscribed lock")
                .keys()
                .cloned()
                .collect();
            if !uris.is_empty() {
                runtime.spawn(async move {
                    for uri in uris {
                        if let Err(e) = client.subscribe(&uri).await {
                            tracing::warn!(%uri, error = %e, "the upstream refused a subscription again");
                        }
                    }
                });
            }
        }
    }

    /// A request on `client` failed with `e`: when that says the connection is over, the next
    /// request opens a new one (if this link can), and the failure is logged once. Whether
    /// the link reconnects.
    pub(super) fn failed(&self, client: &Arc<Client>, e: &ClientError) -> bool {
        if self.opener.is_none() || !ends_connection(e) {
            return false;
        }
        let mut state = self.state.lock().expect("link lock");
        let current = state
            .client
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, client));
        if current && state.dead.is_none() {
            state.dead = Some(e.to_string());
            state.reported = true;
            tracing::warn!(
                upstream = %self.what(),
                error = %e,
                "the upstream server went away; the next request reconnects"
            );
            // A server that hangs rather than exits is stopped (a spawned one killed).
            let client = client.clone();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { client.close().await });
            }
        }
        true
    }

    /// Closes the connection in use (a session's, when the session ended), and ends its listen
    /// streams, which would otherwise open a new one.
    async fn close(&self) {
        for (_, stream) in self.listening.lock().expect("listening lock").drain() {
            stream.abort();
        }
        let client = self.state.lock().expect("link lock").client.take();
        if let Some(client) = client {
            client.close().await;
        }
    }
}

/// A proxy's upstream connections: the shared one, and one per client session in front when
/// the upstream is stateful.
pub(super) struct Upstreams {
    pub(super) shared: Arc<Link>,
    opener: Option<Arc<Opener>>,
    per_session: bool,
    max: usize,
    /// The sessions' links, by the address of the client's connection (kept alive, and so
    /// unique, until the session ends and its entry goes).
    sessions: Mutex<HashMap<usize, Arc<Link>>>,
    pub(super) events: broadcast::Sender<ServerNotification>,
}

impl Upstreams {
    pub(super) fn new(
        shared: Arc<Link>,
        opener: Option<Arc<Opener>>,
        mode: UpstreamSessions,
        max: usize,
        events: broadcast::Sender<ServerNotification>,
    ) -> Upstreams {
        let per_session = opener.is_some()
            && match mode {
                UpstreamSessions::Shared => false,
                UpstreamSessions::PerSession => true,
                UpstreamSessions::Auto => shared.current().is_some_and(|c| stateful(&c, &opener)),
            };
        Upstreams {
            shared,
            opener,
            per_session,
            max,
            sessions: Mutex::default(),
            events,
        }
    }

    /// The link a request of `version` from the client of `parent` goes through (busy until
    /// the request ends): its session's (made on first use) when each session has its own,
    /// else the shared one.
    pub(super) fn link_for(
        self: &Arc<Self>,
        parent: &Arc<Connection>,
        version: ProtocolVersion,
    ) -> Result<Busy, McpError> {
        let shared = || Ok(Busy::new(self.shared.clone()));
        let Some(opener) = self.opener.clone().filter(|_| self.per_session) else {
            return shared();
        };
        if version == ProtocolVersion::V2026_07_28
            || parent.stateless_only
            || parent.closing.is_cancelled()
        {
            return shared();
        }
        let key = connection_key(parent);
        let mut sessions = self.sessions.lock().expect("sessions lock");
        if let Some(link) = sessions.get(&key) {
            return Ok(Busy::new(link.clone()));
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return shared();
        };
        if sessions.len() >= self.max {
            // The session that waited longest since its last request, with none running
            // (and without subscriptions, if there is one), gives its place up.
            let idle = sessions
                .iter()
                .filter(|(_, link)| link.busy.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, link)| {
                    let subscribed = !link.subscribed.lock().expect("subscribed lock").is_empty();
                    (subscribed, *link.last_used.lock().expect("last-used lock"))
                })
                .map(|(key, _)| *key);
            let Some(idle) = idle else {
                return Err(McpError::internal(format!(
                    "This proxy keeps one upstream session per client session, {} at most, and each has a request running: try again once one is done",
                    self.max
                )));
            };
            if let Some(evicted) = sessions.remove(&idle) {
                tracing::info!(
                    upstream = %opener.what,
                    "closing the upstream session of the client session idle the longest, for a new session"
                );
                runtime.spawn(async move { evicted.close().await });
            }
        }
        let link = Arc::new(Link::new(
            None,
            Some(opener),
            Some(Arc::default()),
            self.events.clone(),
        ));
        sessions.insert(key, link.clone());
        let busy = Busy::new(link);
        drop(sessions);
        // The upstream session ends with the client's (whichever link it has by then).
        let (this, conn): (Weak<Upstreams>, _) = (Arc::downgrade(self), parent.clone());
        runtime.spawn(async move {
            conn.closing.cancelled().await;
            drop(conn);
            let ending = this
                .upgrade()
                .and_then(|this| this.sessions.lock().expect("sessions lock").remove(&key));
            if let Some(ending) = ending {
                ending.close().await;
                tracing::debug!("closed the upstream session of a client session that ended");
            }
        });
        Ok(busy)
    }

    /// The link `who`'s subscription is made through: a session's own (made now if it has
    /// none yet, as [`link_for`](Self::link_for) makes it), so that the subscription lives on
    /// the upstream session its unsubscription and its session's end will reach; the shared
    /// one for a listen stream (whose requests it serves), when sessions share it, or when
    /// none can be made now.
    pub(super) fn link_to_subscribe(
        self: &Arc<Self>,
        parent: &Arc<Connection>,
        who: Subscriber,
    ) -> Arc<Link> {
        if who.listen {
            return self.shared.clone();
        }
        match self.link_for(parent, ProtocolVersion::LATEST_SESSION) {
            Ok(busy) => busy.0.clone(),
            Err(_) => self.shared.clone(),
        }
    }

    /// The link `who` subscribed through (see [`link_to_subscribe`](Self::link_to_subscribe)),
    /// opening none.
    pub(super) fn link_of(&self, parent: &Connection, who: Subscriber) -> Arc<Link> {
        if who.listen {
            return self.shared.clone();
        }
        let key = connection_key(parent);
        self.sessions
            .lock()
            .expect("sessions lock")
            .get(&key)
            .cloned()
            .unwrap_or_else(|| self.shared.clone())
    }
}

/// Whether the upstream `client` is connected to keeps state for its client: it speaks the
/// session era, over stdio or with an HTTP session.
fn stateful(client: &Client, opener: &Option<Arc<Opener>>) -> bool {
    // A spawned server's process, and an HTTP+SSE server's stream, is a session.
    let own_session = opener.as_ref().is_some_and(|o| match o.target {
        Target::Spawn(_) => true,
        #[cfg(feature = "http")]
        Target::ConnectSse(_) => true,
        #[cfg(feature = "http")]
        Target::Connect(_) => false,
    });
    client.protocol_version() != ProtocolVersion::V2026_07_28
        && (own_session || client.session_id().is_some())
}
