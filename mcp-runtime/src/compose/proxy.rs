//! [`Proxy`]: a server elsewhere, reached through a [`Client`], served as this process's own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::calls::{CALL, Calls, forwarding};
use super::lifecycle::{DEFAULT_MAX_SESSIONS, Link, Opener, UpstreamSessions, Upstreams};
use crate::auth::Principal;
use crate::catalog::{Catalog, Change};
use crate::client::peek::Received;
use crate::client::{Client, ClientBuilder, ClientError};
use crate::protocol::headers::HeaderParam;
use crate::protocol::params::Body;
use crate::protocol::{McpError, ProtocolEra, ProtocolVersion};
use crate::request::Context;
use crate::server::mount::{
    CallFuture, Dispatch, Forwarded, Kind, ListFuture, Mounted, Names, Offers, Source, Subscriber,
    params_json, run_forwarded,
};
use crate::server::{Server, ServerBuilder};

/// The most pages of one upstream list read for one downstream list.
const MAX_PAGES: usize = 1000;

/// Where a server's capabilities declare the tasks extension.
const TASKS_EXTENSION_POINTER: &str = "/extensions/io.modelcontextprotocol~1tasks";

/// Where a server's capabilities declare the skills extension (SEP-2640).
const SKILLS_EXTENSION_POINTER: &str = "/extensions/io.modelcontextprotocol~1skills";

/// The most task ids a proxy remembers as its upstream's (the oldest are forgotten first;
/// a forgotten task's requests still reach the upstream when this side runs no tasks).
const MAX_TASKS: usize = 10_000;

/// The ids of the tasks the upstream created for clients of this side, oldest first, each
/// with the owner it was created for, as this server's own tasks are owned (a session, or in
/// 2026-07-28 a caller): the upstream binds them all to this proxy.
#[derive(Default)]
struct TaskIds {
    order: std::collections::VecDeque<String>,
    known: HashMap<String, String>,
}

impl TaskIds {
    fn insert(&mut self, id: &str, owner: String) {
        if self.known.contains_key(id) {
            return;
        }
        self.known.insert(id.to_owned(), owner);
        self.order.push_back(id.to_owned());
        if self.order.len() > MAX_TASKS
            && let Some(old) = self.order.pop_front()
        {
            self.known.remove(&old);
        }
    }

    /// Whether `owner` may use the task `id`: a task created here is its owner's alone; any
    /// other id goes to the upstream, which checks the request first (the tasks extension
    /// declared, the method known) and then says it does not know the task.
    fn allows(&self, id: &str, owner: &str) -> bool {
        self.known.get(id).is_none_or(|o| o == owner)
    }
}

/// A server reached through a [`Client`] connection, served as part of this one: mount it
/// like any server (`Server::builder().mount("up", Proxy::new(client))`), or serve it alone
/// under its own name with [`Proxy::server`] (a bridge from one transport to another).
///
/// Forwarded, in both protocol eras (on either side): the tools, resources, resource templates
/// and prompts as the upstream lists them (every field: titles, icons, annotations, output
/// schemas, `execution`, `_meta`), `tools/call`, `resources/read`, `prompts/get` and
/// `completion/complete` with their results as the upstream gives them (`_meta` included),
/// progress (the upstream's `notifications/progress` for a call reach the client that made
/// it, under its own token), cancellation (a client's cancellation cancels the upstream
/// request), the upstream's errors (its JSON-RPC error, code, message and data, as it sent
/// it), resource subscriptions (one upstream subscription per URI and upstream connection,
/// ended when the last client in front that subscribed through it unsubscribes; a session that
/// ends without unsubscribing leaves a shared connection's subscription in place) and the
/// upstream's list-changed and resource-updated notifications; with [`Proxy::server`], its
/// `serverInfo`, `instructions` and capabilities.
///
/// The upstream's requests to the client (elicitation, sampling, roots) go to the client whose
/// call is waiting for the upstream, and its answers back, when the proxy was made with
/// [`Proxy::connect`] or [`Proxy::spawn`] (with [`Proxy::new`] the [`Client`]'s own handlers
/// answer them). Where both sides speak 2026-07-28, the upstream's input rounds reach the
/// client as they are (its `inputRequests`, all of a round at once, under its keys, and its
/// `requestState`) and the client's answers go back the same way, unless the client is an
/// identified caller (an OAuth principal, or what binds a `requestState` to its caller): the
/// upstream binds its state to the proxy it sees, so this server's own rounds, bound to that
/// caller, stand in (as they do for the tasks the upstream created, which are their caller's
/// alone). Where only the client in front speaks 2026-07-28, it answers through an input
/// round of this server: its call is then run again
/// with the answer, and so is the upstream call, which must be repeatable. A session-era
/// upstream names no call in its asks: each goes to the latest call still waiting (on its
/// connection: with one upstream session per client session, that client's). A
/// 2026-07-28 upstream gets, with each call, the capabilities of the client in front (from the
/// request, or from its `initialize`): it asks only what that client can answer, refuses with
/// -32021 what needs more, and runs the call as a task when the client declared the tasks
/// extension.
///
/// The upstream's log messages (`notifications/message`) go, likewise, to the client of the
/// latest call still waiting (and are dropped when none is).
///
/// Task-augmented calls pass through where the client in front and the upstream speak the same
/// era (they are not translated between eras): the upstream's tasks extension (2026-07-28) or
/// `tasks` capability (2025-11-25) is declared, its `CreateTaskResult` passed on, and
/// `tasks/get`, `tasks/update`, `tasks/cancel` and `tasks/result` go to it (of any task, when
/// the server in front runs no tasks of its own), a task created through the proxy only for the
/// session or caller it was created for, as the server's own tasks are. Served alone (mounted
/// without a prefix), its skills (SEP-2640) pass through too: the extension as the upstream
/// declares it, `skills/list`, `skills/get`, `resources/directory/read` and its `skill://`
/// files. On 2026-07-28 HTTP, the `Mcp-Param-*` headers of the upstream's tools' `x-mcp-header`
/// arguments are checked as the server's own tools' are, from the latest listing of the
/// upstream's tools (which also tells the upstream's client to send them). A 2026-07-28
/// upstream's list changes and resource updates are heard on `subscriptions/listen` streams
/// kept open upstream.
///
/// Connections (with [`Proxy::connect`] and [`Proxy::spawn`]; a [`Proxy::new`] has only the
/// client it was given):
/// - an upstream that went away (a spawned server that exited, an HTTP server that refuses
///   connections or forgot the session) fails the requests waiting for it with an internal
///   error (-32603) that says so, is logged, and is connected to again (spawned again) on the
///   next request; when that fails, the next attempt waits 100 ms, doubling with each failure
///   in a row up to 10 s, and a request meanwhile fails at once saying when it will be.
///   Subscriptions are made again on the new connection.
/// - a stateful upstream (a session-era server over stdio, or over HTTP with a session) gets
///   one connection per client session in front, so that what it keeps for its client (log
///   level, subscriptions, roots, its tools' memory) is that client's: see
///   [`UpstreamSessions`] and [`Proxy::upstream_sessions`]. A stateless one (2026-07-28, or
///   HTTP without sessions) is served to everyone through one shared connection.
#[derive(Clone)]
pub struct Proxy {
    /// The shared connection.
    link: Arc<Link>,
    /// How to open a connection again, for [`Proxy::connect`] and [`Proxy::spawn`].
    opener: Option<Arc<Opener>>,
    sessions: UpstreamSessions,
    max_sessions: usize,
    events: broadcast::Sender<crate::client::ServerNotification>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field(
                "upstream",
                &self
                    .link
                    .current()
                    .and_then(|c| c.server_info())
                    .map(|i| i.name),
            )
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A proxy to the server `client` is connected to. The upstream's asks (elicitation,
    /// sampling, roots) are answered by `client`'s own handlers; [`connect`](Self::connect)
    /// and [`spawn`](Self::spawn) pass them on to the clients in front instead.
    pub fn new(client: Client) -> Proxy {
        Proxy::made(client, None, None)
    }

    fn made(client: Client, opener: Option<Opener>, calls: Option<Arc<Calls>>) -> Proxy {
        let events = broadcast::channel(1024).0;
        let opener = opener.map(Arc::new);
        Proxy {
            link: Arc::new(Link::new(
                Some(client),
                opener.clone(),
                calls,
                events.clone(),
            )),
            opener,
            sessions: UpstreamSessions::Auto,
            max_sessions: DEFAULT_MAX_SESSIONS,
            events,
        }
    }

    /// Connects `builder` to the server at `url` (Streamable HTTP), passing the upstream's
    /// asks (`elicitation/create`, `sampling/createMessage`, `roots/list`) on to the client
    /// whose call is waiting for it, with that client's answer back. The capabilities are
    /// declared upstream (elicitation with URL mode, sampling, roots); an ask the client in
    /// front cannot take fails with the error a server's own ask would get. (Feature `http`.)
    ///
    /// The upstream is connected to again after it went away, and a stateful one gets a
    /// connection per client session in front (see [`Proxy`]).
    #[cfg(feature = "http")]
    pub async fn connect(builder: ClientBuilder, url: &str) -> Result<Proxy, ClientError> {
        Proxy::opened(Opener::connect(builder, url)).await
    }

    /// [`connect`](Self::connect) to a deprecated HTTP+SSE server (2024-11-05) at its SSE
    /// endpoint `url` (often `/sse`): connected to again after its stream ended, with a
    /// connection (a stream) per client session in front, as for a stateful server.
    /// (Feature `http`.)
    #[cfg(feature = "http")]
    pub async fn connect_sse(builder: ClientBuilder, url: &str) -> Result<Proxy, ClientError> {
        Proxy::opened(Opener::connect_sse(builder, url)).await
    }

    /// A proxy of the first connection `opener` makes, which it makes again when needed.
    #[cfg(feature = "http")]
    async fn opened(opener: Opener) -> Result<Proxy, ClientError> {
        let calls = Arc::new(Calls::default());
        let client = opener.open(&calls).await?;
        Ok(Proxy::made(client, Some(opener), Some(calls)))
    }

    /// [`connect`](Self::connect) to a stdio server started with `command`, started again
    /// (with the same program, arguments, environment changes and working directory) after it
    /// exited, and once per client session in front while it speaks the session era (see
    /// [`UpstreamSessions`]).
    pub async fn spawn(
        builder: ClientBuilder,
        command: tokio::process::Command,
    ) -> Result<Proxy, ClientError> {
        let opener = Opener::spawn(builder.clone(), &command);
        let calls = Arc::new(Calls::default());
        let client = forwarding(builder, &calls).spawn(command).await?;
        Ok(Proxy::made(client, Some(opener), Some(calls)))
    }

    /// Which upstream connection serves each client in front ([`UpstreamSessions::Auto`]
    /// unless set: one per client session when the upstream is stateful). Only a proxy that
    /// can open connections ([`connect`](Self::connect), [`connect_sse`](Self::connect_sse),
    /// [`spawn`](Self::spawn)) opens one per session.
    pub fn upstream_sessions(mut self, sessions: UpstreamSessions) -> Proxy {
        self.sessions = sessions;
        self
    }

    /// The most upstream sessions open at once for client sessions in front (16 unless set;
    /// at least 1), besides the shared connection (so, for a spawned server, at most this many
    /// processes plus one). Past it, a new client session takes the place of the one idle the longest
    /// (see [`UpstreamSessions::PerSession`]); it is refused, with an error saying so, only
    /// while every upstream session has a request running.
    pub fn max_upstream_sessions(mut self, max: usize) -> Proxy {
        self.max_sessions = max.max(1);
        self
    }

    /// The shared upstream connection: the one the proxy was made with, or the latest one
    /// opened after the upstream went away.
    pub fn client(&self) -> Arc<Client> {
        self.link
            .current()
            .expect("a proxy's shared link always has a connection")
    }

    /// A server builder for the upstream served alone: its `serverInfo` and `instructions`,
    /// every item under its own name. Add what this side needs (limits, middleware, the
    /// environment's settings with [`ServerBuilder::with_env`]), then build and serve it on any
    /// transport.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_runtime::client::Client;
    /// use mcp_runtime::compose::Proxy;
    /// let upstream = Client::builder()
    ///     .spawn(tokio::process::Command::new("./my-stdio-server"))
    ///     .await?;
    /// let server = Proxy::new(upstream).server().with_env()?.build()?;
    /// server.serve(mcp_runtime::Transport::http("127.0.0.1:8000")).await?;
    /// # Ok(()) }
    /// ```
    pub fn server(self) -> ServerBuilder {
        let mut builder = Server::builder();
        let client = self.client();
        if let Some(info) = client.server_info() {
            builder = builder.info(info);
        }
        if let Some(instructions) = client.instructions() {
            builder = builder.instructions(instructions);
        }
        builder.item_filter(|_| false).mount("", self)
    }
}

impl From<Proxy> for Mounted {
    fn from(proxy: Proxy) -> Mounted {
        Mounted::source(move |names: &Names| {
            let caps = proxy.client().server_capabilities();
            let offers = Offers {
                tools: caps.get("tools").is_some(),
                resources: caps.get("resources").is_some(),
                prompts: caps.get("prompts").is_some(),
                completions: caps.get("completions").is_some(),
                // The tasks extension (2026-07-28) or the `tasks` capability (2025-11-25).
                tasks: caps.pointer(TASKS_EXTENSION_POINTER).is_some()
                    || caps.get("tasks").is_some(),
                skills: caps.pointer(SKILLS_EXTENSION_POINTER).is_some(),
                skills_directory: caps
                    .pointer(SKILLS_EXTENSION_POINTER)
                    .and_then(|s| s.get("directoryRead"))
                    == Some(&Value::Bool(true)),
            };
            let upstreams = Upstreams::new(
                proxy.link,
                proxy.opener,
                proxy.sessions,
                proxy.max_sessions,
                proxy.events,
            );
            Arc::new(Upstream {
                upstreams: Arc::new(upstreams),
                names: names.clone(),
                offers,
                changes: OnceLock::new(),
                tasks: Arc::default(),
                tool_headers: Arc::default(),
            }) as Arc<dyn Source>
        })
    }
}

/// Brings the upstream's subscription to `uri` in line with what the subscribers in front of
/// `link` want now: subscribes when one wants it and the upstream was not told, unsubscribes
/// when none does and it was. Subscribing and unsubscribing both end here, one at a time per
/// link, so whichever runs last sees the last wish: an unsubscription cannot be overtaken by
/// the subscription sent before it. A 2026-07-28 upstream is subscribed with a listen stream
/// ([`listen_for`]), which [`unwish`] ends.
async fn reconcile(link: Arc<Link>, uri: String) {
    let mut told = link.told.lock().await;
    let wanted = link
        .subscribed
        .lock()
        .expect("subscribed lock")
        .contains_key(&uri);
    if wanted == told.contains(&uri) {
        return;
    }
    if wanted {
        let client = match link.client().await {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(%uri, error = %e.message, "could not subscribe upstream");
                return;
            }
        };
        if client.era() == ProtocolEra::Stateless {
            // A 2026-07-28 upstream tells of updates on a listen stream that asks for them.
            return listen_for(&link, &uri);
        }
        match client.subscribe(&uri).await {
            Ok(()) => {
                told.insert(uri);
            }
            Err(e) => tracing::warn!(%uri, error = %e, "the upstream refused a subscription"),
        }
    } else {
        told.remove(&uri);
        // With no connection now, the next one is not subscribed to it again.
        if let Some(client) = link.current()
            && let Err(e) = client.unsubscribe(&uri).await
        {
            tracing::debug!(%uri, error = %e, "the upstream refused an unsubscription");
        }
    }
}

/// Opens a listen stream for `uri`'s updates on `link`'s 2026-07-28 upstream, unless nobody
/// wants them any more: checked under the lock [`unwish`] takes first, so an unsubscription
/// either comes before (no stream) or finds the stream to end.
fn listen_for(link: &Arc<Link>, uri: &str) {
    let subscribed = link.subscribed.lock().expect("subscribed lock");
    if !subscribed.contains_key(uri) {
        return;
    }
    if let Some(stream) = keep_listening(link, json!({ "resourceSubscriptions": [uri] })) {
        let mut listening = link.listening.lock().expect("listening lock");
        if let Some(old) = listening.insert(uri.to_owned(), stream) {
            old.abort();
        }
    }
}

/// The subscriber `key` in front (`Subscriber::key`: a session's connection, or a listen
/// stream) no longer wants `uri`'s updates through `link`: when no other subscriber does, the
/// upstream is told (a session-era upstream unsubscribed,
/// a 2026-07-28 one's listen stream for it ended).
fn unwish(link: &Arc<Link>, key: usize, uri: &str) {
    {
        let mut subscribed = link.subscribed.lock().expect("subscribed lock");
        let Some(clients) = subscribed.get_mut(uri) else {
            return;
        };
        clients.remove(&key);
        if !clients.is_empty() {
            return; // another client in front still wants its updates
        }
        subscribed.remove(uri);
    }
    let listening = link.listening.lock().expect("listening lock").remove(uri);
    if let Some(stream) = listening {
        stream.abort(); // the listen stream ends, and with it the subscription
        return;
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(reconcile(link.clone(), uri.to_owned()));
    }
}

/// Once the client connection `parent` in front ends, drops whatever its subscriber `key`
/// still subscribed to through the shared `link`, as if it had unsubscribed: a session that ends
/// without unsubscribing (closed, expired) does not keep the upstream subscribed.
async fn forget_when_gone(
    parent: Arc<crate::server::connection::Connection>,
    link: std::sync::Weak<Link>,
    key: usize,
) {
    parent.closing.cancelled().await;
    let Some(link) = link.upgrade() else {
        return;
    };
    let uris: Vec<String> = link
        .subscribed
        .lock()
        .expect("subscribed lock")
        .iter()
        .filter(|(_, clients)| clients.contains(&key))
        .map(|(uri, _)| uri.clone())
        .collect();
    for uri in uris {
        unwish(&link, key, &uri);
    }
    // Until here: the key names this connection, and no other, while it lives.
    drop(parent);
}

/// Keeps a 2026-07-28 `subscriptions/listen` stream for `notifications` open on `link`'s
/// upstream for as long as the link lives (opened again, after a pause that grows to 30 s, when
/// it ends or fails): what it hears reaches [`Client::notifications`], where the proxy reads
/// it. The stream follows the link, not one connection: when the upstream dies and the link
/// connects again (a spawned server started again), the stream is opened on the new
/// connection, which is what makes the subscription again. Aborting the task it returns ends
/// the stream (the upstream forgets its subscriptions).
fn keep_listening(link: &Arc<Link>, notifications: Value) -> Option<tokio::task::AbortHandle> {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let link = Arc::downgrade(link);
    let task = runtime.spawn(async move {
        const FIRST: Duration = Duration::from_millis(250);
        let mut pause = FIRST;
        loop {
            let Some(upstream) = link.upgrade() else {
                return;
            };
            // The connection in use, or a new one when it died.
            let client = upstream.client().await;
            drop(upstream);
            match client {
                Err(e) => tracing::debug!(error = %e.message, "no upstream to listen to"),
                // Connected again at a session-era version: not a stream's job any more.
                Ok(client) if client.era() != ProtocolEra::Stateless => return,
                Ok(client) => match client.listen(notifications.clone()).await {
                    Ok(mut listen) => {
                        let since = tokio::time::Instant::now();
                        while listen.next().await.is_some() {}
                        if since.elapsed() > Duration::from_secs(30) {
                            pause = FIRST;
                        }
                    }
                    Err(ClientError::Closed) => return,
                    Err(e) => tracing::debug!(error = %e, "the upstream's listen stream failed"),
                },
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(30));
        }
    });
    Some(task.abort_handle())
}

/// The `_meta` of a request sent upstream on behalf of the client of `ctx`: a 2026-07-28
/// upstream logs only when the request asks, at the level that client wants (a session-era
/// upstream ignores the member), and judges what that client can do (refusing with -32021
/// what needs more, deciding task calls): its capabilities, from this request or from its
/// `initialize`, extensions included.
fn for_the_client_in_front(params: &mut Value, ctx: &Context, stateless_upstream: bool) {
    let level = ctx.wanted_log_level();
    let Value::Object(map) = params else { return };
    if level.is_none() && !stateless_upstream {
        return;
    }
    let Value::Object(meta) = map.entry("_meta").or_insert_with(|| json!({})) else {
        return;
    };
    if let Some(level) = level {
        meta.insert(
            "io.modelcontextprotocol/logLevel".into(),
            json!(level.as_str()),
        );
    }
    if stateless_upstream {
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            ctx.client_capabilities().clone(),
        );
    }
}

/// The [`Source`] of a [`Proxy`].
struct Upstream {
    upstreams: Arc<Upstreams>,
    names: Names,
    offers: Offers,
    /// The upstream's changes, read from its notifications by a task started on first use.
    changes: OnceLock<broadcast::Sender<Change>>,
    /// The tasks the upstream created (their `tasks/*` requests go to it).
    tasks: Arc<Mutex<TaskIds>>,
    /// The `x-mcp-header` arguments of the upstream's tools (those that have any), by their
    /// own names, as the latest complete listing gave them.
    tool_headers: Arc<Mutex<HashMap<String, Vec<HeaderParam>>>>,
}

/// Records the `x-mcp-header` arguments of the listed `tool`, if it has any (and they follow
/// the rules: a tool that breaks them is passed on, and its calls carry no such headers).
fn note_header_params(tool: &Value, into: &mut HashMap<String, Vec<HeaderParam>>) {
    let (Some(name), Some(schema)) = (
        tool.get("name").and_then(Value::as_str),
        tool.get("inputSchema"),
    ) else {
        return;
    };
    if let Ok(params) = crate::protocol::headers::header_params(schema)
        && !params.is_empty()
    {
        into.insert(name.to_owned(), params);
    }
}

/// An upstream failure as this side's client sees it: the upstream's own JSON-RPC error as it
/// sent it, anything else an internal error that names the upstream (and says that the next
/// request reconnects, when `link` does).
fn upstream_error(e: ClientError, link: &Link, client: &Arc<Client>) -> McpError {
    let reconnects = link.failed(client, &e);
    match e {
        ClientError::Rpc(e) => e,
        other if reconnects => McpError::internal(format!(
            "The upstream server failed: {other}; the next request connects to it again"
        )),
        other => McpError::internal(format!("The upstream server failed: {other}")),
    }
}

impl Upstream {
    /// The upstream's protocol era, as its first connection found it (every connection of a
    /// proxy reaches the same server).
    fn upstream_era(&self) -> ProtocolEra {
        self.upstreams
            .shared
            .current()
            .map_or(ProtocolEra::Session, |client| client.era())
    }
}

impl Source for Upstream {
    fn offers(&self) -> Offers {
        self.offers
    }

    fn list(
        &self,
        kind: Kind,
        version: ProtocolVersion,
        _caller: Option<Arc<Principal>>,
        parent: &Arc<crate::server::connection::Connection>,
    ) -> ListFuture {
        let (method, key, field) = match kind {
            Kind::Tool => ("tools/list", "tools", "name"),
            Kind::Resource => ("resources/list", "resources", "uri"),
            Kind::Template => (
                "resources/templates/list",
                "resourceTemplates",
                "uriTemplate",
            ),
            Kind::Prompt => ("prompts/list", "prompts", "name"),
        };
        let names = self.names.clone();
        let link = self.upstreams.link_for(parent, version);
        let known_headers = self.tool_headers.clone();
        Box::pin(async move {
            let link = link?;
            let client = link.client().await?;
            let mut out = Vec::new();
            let mut tool_headers = HashMap::new();
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_PAGES {
                let params = match &cursor {
                    Some(c) => json!({ "cursor": c }),
                    None => json!({}),
                };
                let mut page = client
                    .request(method, params)
                    .await
                    .map_err(|e| upstream_error(e, &link, &client))?;
                if let Some(Value::Array(items)) = page.get_mut(key).map(Value::take) {
                    // An upstream's item that is not an object is no item: left out.
                    for item in items.into_iter().filter(Value::is_object) {
                        if kind == Kind::Tool {
                            note_header_params(&item, &mut tool_headers);
                        }
                        let raw = serde_json::value::to_raw_value(&item)
                            .map_err(|e| McpError::internal(e.to_string()))?;
                        out.push(names.listing(&raw, field));
                    }
                }
                match page.get("nextCursor").and_then(Value::as_str) {
                    Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
                    _ => {
                        if kind == Kind::Tool {
                            // This side checks the `Mcp-Param-*` headers of its client's calls,
                            // and the upstream's client sends them upstream.
                            client.remember_tool_headers(tool_headers.clone());
                            *known_headers.lock().expect("headers lock") = tool_headers;
                        }
                        return Ok(out);
                    }
                }
            }
            Err(McpError::internal(format!(
                "The upstream server's {method} has more than {MAX_PAGES} pages"
            )))
        })
    }

    fn described(&self, _kind: Kind) -> Vec<Box<serde_json::value::RawValue>> {
        Vec::new()
    }

    fn knows(&self, _kind: Kind, _name: &str) -> bool {
        // The upstream decides (and says what it does not know).
        true
    }

    fn scopes_for(&self, _method: &str, _name: &str) -> Vec<&'static str> {
        // The upstream checks its own; this side's are its middleware's and its auth's.
        Vec::new()
    }

    fn forward(
        &self,
        _slot: usize,
        parent: &Arc<crate::server::connection::Connection>,
        scope: crate::server::era::Scope,
        mut req: crate::protocol::params::Request,
        _dispatch: Dispatch,
    ) -> crate::server::connection::Step {
        let method = req.method.to_string();
        let (mut params, raw) = params_json(&mut req);
        let link = match self.upstreams.link_for(parent, scope.version()) {
            Ok(link) => link,
            Err(e) => return crate::server::connection::Step::Reply(scope.err(&req.id, e)),
        };
        // Made with `connect`/`spawn`, the proxy stands for the clients in front: the upstream
        // hears their asks' answers, logs at their level, and (2026-07-28) judges their
        // capabilities; made with `new`, the upstream's client answers for itself.
        let forwards_asks = link.calls.is_some();
        let stateless_upstream = self.upstream_era() == ProtocolEra::Stateless;
        // A 2026-07-28 client in front of a 2026-07-28 upstream: the upstream's input rounds
        // pass as they are (its `inputRequests` under its own keys, all of a round at once,
        // and its `requestState`), and the client's `inputResponses` and `requestState` go
        // back the same way.
        //
        // The upstream binds its `requestState` and its tasks to whoever it sees, this proxy:
        // for an identified caller (an OAuth principal, or what binds a `requestState` to its
        // caller here, by default the `Authorization` header), the rounds stay this server's
        // own, bound to that caller, and its tasks are its own.
        let caller = parent
            .server
            .inner
            .caller(scope.headers.as_deref(), scope.principal.as_deref())
            .map(|c| crate::id::digest_hex(&c));
        let pass_rounds = forwards_asks
            && stateless_upstream
            && caller.is_none()
            && scope.version().era() == ProtocolEra::Stateless
            && matches!(&*method, "tools/call" | "prompts/get" | "resources/read");
        // The upstream's tasks are owned here as this server's own are.
        let owner = crate::server::tasks::owner(parent, &scope);
        if method.starts_with("tasks/") {
            let id = match &req.params.body {
                Body::Task(p) => Some(&p.task_id),
                Body::UpdateTask(p) => Some(&p.task_id),
                _ => None,
            };
            let tasks = self.tasks.lock().expect("tasks lock");
            if let Some(id) = id
                && !tasks.allows(id, &owner)
            {
                let e = McpError::invalid_params(format!("Unknown task: {id}"));
                return crate::server::connection::Step::Reply(scope.err(&req.id, e));
            }
        }
        if let (true, Value::Object(map)) = (pass_rounds, &mut params) {
            let (responses, state) = req.params.round();
            if let Some(responses) = responses {
                map.insert("inputResponses".into(), responses.clone());
            }
            if let Some(state) = state {
                map.insert("requestState".into(), state.clone());
            }
        }
        let tasks = self.tasks.clone();
        let rounds = !pass_rounds;
        let polls_task = method.starts_with("tasks/");
        run_forwarded(parent, scope, &req, rounds, move |ctx| -> CallFuture {
            Box::pin(async move {
                let client = link.client().await?;
                // Where the upstream's asks (and logs) during this call go.
                let _entered = link.calls.as_ref().map(|calls| calls.enter(ctx.clone()));
                if forwards_asks {
                    for_the_client_in_front(&mut params, &ctx, stateless_upstream);
                }
                let on_progress = {
                    let ctx = ctx.clone();
                    Arc::new(move |p: &Value| {
                        let Some(progress) = p.get("progress").and_then(Value::as_f64) else {
                            return;
                        };
                        let total = p.get("total").and_then(Value::as_f64);
                        let message = p.get("message").and_then(Value::as_str);
                        ctx.forward_progress(progress, total, message);
                    })
                };
                let call = client.request_with_progress(&method, params, raw, on_progress, rounds);
                let result = CALL
                    .scope(ctx, call)
                    .await
                    .map_err(|e| upstream_error(e, &link, &client))?;
                // A result that is not an object (not MCP's) passes as an empty one.
                let members = match result {
                    Received::Members(members) => members,
                    Received::Other(_) => Default::default(),
                };
                let result = Forwarded::new(members, polls_task);
                // A task the upstream created: its `tasks/*` requests are the upstream's.
                if let Some(id) = result.created_task() {
                    tasks.lock().expect("tasks lock").insert(&id, owner);
                }
                Ok(result)
            })
        })
    }

    fn header_params(&self, name: &str) -> Vec<HeaderParam> {
        let known = self.tool_headers.lock().expect("headers lock");
        known.get(name).cloned().unwrap_or_default()
    }

    fn owns_task(&self, id: &str) -> bool {
        self.tasks
            .lock()
            .expect("tasks lock")
            .known
            .contains_key(id)
    }

    fn subscribe(
        &self,
        parent: &Arc<crate::server::connection::Connection>,
        who: Subscriber,
        uri: &str,
    ) {
        // Through the client's session's own upstream connection, when it has one (opened
        // now if this is the session's first request that needs the upstream); a listen
        // stream's, as its requests, through the shared one.
        let link = self.upstreams.link_to_subscribe(parent, who);
        let key = who.key;
        let (first, new_client) = {
            let mut subscribed = link.subscribed.lock().expect("subscribed lock");
            let new_client = !subscribed.values().any(|clients| clients.contains(&key));
            let first = !subscribed.contains_key(uri);
            subscribed.entry(uri.to_owned()).or_default().insert(key);
            (first, new_client)
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // A session on the shared connection may end without unsubscribing. (A session's own
        // upstream connection is closed with the session; a listen stream unsubscribes as it
        // ends.)
        if new_client && !who.listen && Arc::ptr_eq(&link, &self.upstreams.shared) {
            runtime.spawn(forget_when_gone(parent.clone(), Arc::downgrade(&link), key));
        }
        if first {
            runtime.spawn(reconcile(link, uri.to_owned()));
        }
    }

    fn unsubscribe(
        &self,
        parent: &crate::server::connection::Connection,
        who: Subscriber,
        uri: &str,
    ) {
        unwish(&self.upstreams.link_of(parent, who), who.key, uri);
    }

    fn changes(&self, _parent: &Catalog) -> Option<broadcast::Receiver<Change>> {
        let tx = self.changes.get_or_init(|| {
            let tx = broadcast::channel(1024).0;
            let mut notifications = self.upstreams.events.subscribe();
            if let Some(client) = self.upstreams.shared.current()
                && client.era() == ProtocolEra::Stateless
            {
                // A 2026-07-28 upstream announces list changes only on a listen stream.
                let _ = keep_listening(
                    &self.upstreams.shared,
                    json!({
                        "toolsListChanged": true,
                        "promptsListChanged": true,
                        "resourcesListChanged": true,
                    }),
                );
            }
            let out = tx.clone();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    use tokio::sync::broadcast::error::RecvError;
                    loop {
                        let change = match notifications.recv().await {
                            Ok(n) => match n.method.as_str() {
                                "notifications/tools/list_changed" => Change::Tools,
                                "notifications/prompts/list_changed" => Change::Prompts,
                                "notifications/resources/list_changed" => Change::Resources,
                                "notifications/resources/updated" => {
                                    match n.params.get("uri").and_then(Value::as_str) {
                                        Some(uri) => Change::Updated(uri.into()),
                                        None => continue,
                                    }
                                }
                                _ => continue,
                            },
                            Err(RecvError::Lagged(_)) => Change::Everything,
                            Err(RecvError::Closed) => return,
                        };
                        // No bridge listening yet is not an error.
                        let _ = out.send(change);
                    }
                });
            }
            tx
        });
        Some(tx.subscribe())
    }
}
