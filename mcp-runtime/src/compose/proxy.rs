//! [`Proxy`]: a server elsewhere, reached through a [`Client`], served as this process's own.

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::lifecycle::{DEFAULT_MAX_SESSIONS, Link, Opener, UpstreamSessions, Upstreams};
use crate::auth::Principal;
use crate::catalog::{Catalog, Change};
use crate::client::{Client, ClientBuilder, ClientError, ElicitRequest, ElicitResult};
use crate::protocol::asks::{ElicitAction, Root, SampledMessage};
use crate::protocol::{McpError, ProtocolVersion};
use crate::request::Context;
use crate::server::mount::{
    CallFuture, Dispatch, Kind, ListFuture, Mounted, Names, Offers, Source, params_json,
    run_forwarded,
};
use crate::server::{Server, ServerBuilder};

/// The most pages of one upstream list read for one downstream list.
const MAX_PAGES: usize = 1000;

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
/// it), resource subscriptions and the upstream's list-changed and resource-updated
/// notifications; with [`Proxy::server`], its `serverInfo`, `instructions` and capabilities.
///
/// The upstream's requests to the client (elicitation, sampling, roots) go to the client whose
/// call is waiting for the upstream, and its answers back, when the proxy was made with
/// [`Proxy::connect`] or [`Proxy::spawn`] (with [`Proxy::new`] the [`Client`]'s own handlers
/// answer them). A 2026-07-28 client in front answers through an input round: its call is
/// then run again with the answer, and so is the upstream call, which must be repeatable. A
/// session-era upstream names no call in its asks: each goes to the latest call still waiting
/// (on its connection: with one upstream session per client session, that client's).
///
/// The upstream's log messages (`notifications/message`) go, likewise, to the client of the
/// latest call still waiting (and are dropped when none is).
///
/// Not forwarded yet: task-augmented calls.
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

tokio::task_local! {
    /// The call a proxied request serves, while it waits for the upstream (a 2026-07-28
    /// upstream's asks are answered in this task).
    static CALL: Context;
}

/// The calls a proxy is serving, most recent last: a session-era upstream's ask arrives on
/// no task of a call, and goes to the most recent call still waiting.
#[derive(Default)]
pub(super) struct Calls {
    live: Mutex<Vec<(u64, Context)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Calls {
    /// Registers `ctx` until the returned guard drops.
    fn enter(self: &Arc<Self>, ctx: Context) -> CallGuard {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.live.lock().expect("calls lock").push((id, ctx));
        CallGuard {
            calls: self.clone(),
            id,
        }
    }

    /// The call an upstream ask belongs to: the one whose task asks, else the latest.
    fn current(&self) -> Option<Context> {
        CALL.try_with(Context::clone).ok().or_else(|| {
            let live = self.live.lock().expect("calls lock");
            live.last().map(|(_, ctx)| ctx.clone())
        })
    }

    /// Asks the client of the current call what the upstream asked.
    async fn ask(&self, method: &str, params: Value) -> Result<Value, McpError> {
        let ctx = self.current().ok_or_else(|| {
            McpError::internal(format!(
                "Cannot forward `{method}`: no call of this proxy's clients is waiting for the upstream"
            ))
        })?;
        ctx.ask_forwarded(method, params).await
    }
}

struct CallGuard {
    calls: Arc<Calls>,
    id: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let mut live = self.calls.live.lock().expect("calls lock");
        live.retain(|(id, _)| *id != self.id);
    }
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
        let opener = Opener::connect(builder, url);
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
    /// can open connections ([`connect`](Self::connect), [`spawn`](Self::spawn)) opens one
    /// per session.
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
            }) as Arc<dyn Source>
        })
    }
}

/// `builder` with handlers that pass the upstream's asks on to the current call's client.
pub(super) fn forwarding(builder: ClientBuilder, calls: &Arc<Calls>) -> ClientBuilder {
    let (elicit, sample, roots, logs) =
        (calls.clone(), calls.clone(), calls.clone(), calls.clone());
    builder
        .url_elicitation(true)
        .on_notification(move |n| {
            // The upstream's log messages go to the client of the latest call still waiting
            // (with its level filter); none waiting, they are dropped.
            if n.method != "notifications/message" {
                return;
            }
            let Some(ctx) = logs.current() else { return };
            let level = n
                .params
                .get("level")
                .and_then(Value::as_str)
                .unwrap_or("info");
            let Ok(level) = crate::protocol::LogLevel::parse(level) else {
                return;
            };
            let logger = n.params.get("logger").and_then(Value::as_str);
            ctx.log_as(level, logger, n.params.get("data").unwrap_or(&Value::Null));
        })
        .on_elicitation(move |req: ElicitRequest| {
            let calls = elicit.clone();
            async move {
                let answer = calls.ask("elicitation/create", req.raw).await?;
                let action = match answer.get("action").and_then(Value::as_str) {
                    Some("accept") => ElicitAction::Accept,
                    Some("decline") => ElicitAction::Decline,
                    _ => ElicitAction::Cancel,
                };
                Ok(ElicitResult {
                    action,
                    content: answer.get("content").cloned(),
                })
            }
        })
        .on_sampling(move |params: Value| {
            let calls = sample.clone();
            async move {
                let answer = calls.ask("sampling/createMessage", params).await?;
                serde_json::from_value::<SampledMessage>(answer).map_err(|e| {
                    McpError::internal(format!("The client's sampling answer is malformed: {e}"))
                })
            }
        })
        .on_roots(move || {
            let calls = roots.clone();
            async move {
                let answer = calls.ask("roots/list", json!({})).await?;
                serde_json::from_value::<Vec<Root>>(answer["roots"].clone()).map_err(|e| {
                    McpError::internal(format!("The client's roots are malformed: {e}"))
                })
            }
        })
}

/// The [`Source`] of a [`Proxy`].
struct Upstream {
    upstreams: Arc<Upstreams>,
    names: Names,
    offers: Offers,
    /// The upstream's changes, read from its notifications by a task started on first use.
    changes: OnceLock<broadcast::Sender<Change>>,
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
        Box::pin(async move {
            let link = link?;
            let client = link.client().await?;
            let mut out = Vec::new();
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
                        let raw = serde_json::value::to_raw_value(&item)
                            .map_err(|e| McpError::internal(e.to_string()))?;
                        out.push(names.listing(&raw, field));
                    }
                }
                match page.get("nextCursor").and_then(Value::as_str) {
                    Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
                    _ => return Ok(out),
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
        req: crate::protocol::params::Request,
        _dispatch: Dispatch,
    ) -> crate::server::connection::Step {
        let method = req.method.to_string();
        let mut params = params_json(&req);
        let link = match self.upstreams.link_for(parent, scope.version()) {
            Ok(link) => link,
            Err(e) => return crate::server::connection::Step::Reply(scope.err(&req.id, e)),
        };
        let forwards_logs = link.calls.is_some();
        run_forwarded(parent, scope, &req, move |ctx| -> CallFuture {
            Box::pin(async move {
                let client = link.client().await?;
                // Where the upstream's asks (and logs) during this call go.
                let _entered = link.calls.as_ref().map(|calls| calls.enter(ctx.clone()));
                // A 2026-07-28 upstream logs only when the request asks: at the level the
                // client in front wants (a session-era upstream ignores the member).
                if let (true, Some(level), Value::Object(map)) =
                    (forwards_logs, ctx.wanted_log_level(), &mut params)
                {
                    let meta = map.entry("_meta").or_insert_with(|| json!({}));
                    if let Value::Object(meta) = meta {
                        meta.insert(
                            "io.modelcontextprotocol/logLevel".into(),
                            json!(level.as_str()),
                        );
                    }
                }
                let on_progress = {
                    let ctx = ctx.clone();
                    Arc::new(move |p: &Value| {
                        let Some(progress) = p.get("progress").and_then(Value::as_f64) else {
                            return;
                        };
                        let total = p.get("total").and_then(Value::as_f64);
                        ctx.forward_progress(
                            progress,
                            total,
                            p.get("message").and_then(Value::as_str),
                        );
                    })
                };
                let call = client.request_with_progress(&method, params, on_progress);
                CALL.scope(ctx, call)
                    .await
                    .map_err(|e| upstream_error(e, &link, &client))
            })
        })
    }

    fn subscribe(&self, parent: &crate::server::connection::Connection, uri: &str) {
        // Through the client's session's own upstream connection, when it has one.
        let link = self.upstreams.link_of(parent);
        if !link
            .subscribed
            .lock()
            .expect("subscribed lock")
            .insert(uri.to_owned())
        {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let uri = uri.to_owned();
        runtime.spawn(async move {
            let client = match link.client().await {
                Ok(client) => client,
                Err(e) => {
                    tracing::warn!(%uri, error = %e.message, "could not subscribe upstream");
                    return;
                }
            };
            if let Err(e) = client.subscribe(&uri).await {
                tracing::warn!(%uri, error = %e, "the upstream refused a subscription");
            }
        });
    }

    fn changes(&self, _parent: &Catalog) -> Option<broadcast::Receiver<Change>> {
        let tx = self.changes.get_or_init(|| {
            let tx = broadcast::channel(1024).0;
            let mut notifications = self.upstreams.events.subscribe();
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
