//! Composition: a server that answers for items it does not own statically.
//!
//! A server owns the `#[tool]`s, `#[resource]`s and `#[prompt]`s its [`Registry`] collected
//! at build. Everything else it serves comes from *mounts*: each is a namespace (a prefix) and
//! a [`Source`] that answers the item methods for it. The dispatcher stays one table: a request
//! that names an item (`tools/call`, `prompts/get`, `resources/read`, `completion/complete`)
//! is served by the server's own registry when it owns the name, else by the mount whose
//! prefix the name carries, with the prefix stripped; the list methods page one list made of
//! the server's own items followed by each mount's, in mount order. Both eras go through the
//! same path: era resolution happens before the routing, and the request keeps its `_meta`.
//!
//! Names follow FastMCP's `mount`:
//! - a tool or prompt `forecast` of the server mounted as `weather` is `weather_forecast` (the
//!   separator is `_` unless [`ServerBuilder::mount_separator`](crate::ServerBuilder::mount_separator)
//!   says otherwise);
//! - a resource URI keeps its scheme and gains the prefix as the first path segment:
//!   `weather://current` becomes `weather://weather/current`, `file:///etc/x` becomes
//!   `file://weather//etc/x`; templates likewise (`weather://{city}` →
//!   `weather://weather/{city}`). Resource `name`s are left as they are.
//!
//! Two sources exist. An in-process [`Server`] ([`Child`]): the parent's connection gets, on
//! first use, a child connection to the mounted server, sharing its session (client info,
//! log level), its sinks and its way back to the client, and the rewritten request is handed
//! to the child's own dispatcher, decoded as it is: no serialization between the two, and the
//! mounted server's middleware, scopes, enable/disable (its own [`Catalog`]), completion,
//! asks and cancellation keep working as if it were served alone. The other source is a
//! client connection to a server elsewhere (`compose::Proxy`), defined above this module
//! through the same trait.
//!
//! Change notifications: the parent subscribes to each mounted server's catalog and announces
//! its changes on its own, with URIs rewritten (`notifications/resources/updated` for
//! `weather://current` reaches the parent's subscribers as `weather://weather/current`), so
//! session-era clients, `subscriptions/listen` streams and change buses see one server.
//! Subscriptions are kept by the parent, under the mounted URIs.
//!
//! The mounted server is served as a copy presenting the parent's `serverInfo` (2026-07-28
//! results name it in `_meta`); everything else of it is shared.
//!
//! A source may also serve task-augmented calls (`tasks/*` of its tasks go to it, or of any
//! task when the server runs none of its own) and, mounted without a prefix, skills
//! (`skills/*`, `resources/directory/read`): a proxy's upstream does.
//!
//! Limits, by design for now: an in-process mounted server's tasks (task-augmented calls) and
//! skills are not served through the mount; a mounted server that shares the parent's catalog
//! handle (both built with [`catalog()`](crate::catalog())) announces its resource updates
//! under its own URIs.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use super::Server;
use super::connection::{Arrival, Connection, Step};
use super::envelope::RequestMeta;
use super::era::{Cache, Scope};
pub(crate) use super::forwarded::Forwarded;
use super::handler::{ListPage, cursor_of, run};
use crate::auth::Principal;
use crate::catalog::{Catalog, Change};
use crate::protocol::headers::HeaderParam;
use crate::protocol::params::{Body, Reference, Request};
use crate::protocol::{McpError, ProtocolVersion, Resource};
use crate::registry::{BuildError, Listed, Registry, page_of};
use crate::request::{Reply, ReplyKind};

/// Which list an item is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `tools/list`.
    Tool,
    /// `resources/list`.
    Resource,
    /// `resources/templates/list`.
    Template,
    /// `prompts/list`.
    Prompt,
}

/// What a source serves: decides the parent's capabilities and which methods it routes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offers {
    pub(crate) tools: bool,
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
    pub(crate) completions: bool,
    /// Task-augmented calls (`tasks/*` go to it when the server runs no tasks of its own).
    pub(crate) tasks: bool,
    /// Skills (SEP-2640; `skills/*` go to it when the server has none of its own): served
    /// only by a source mounted without a prefix (a proxy served alone), whose `skill://`
    /// URIs need no rewriting.
    pub(crate) skills: bool,
    /// With skills, `resources/directory/read` too.
    pub(crate) skills_directory: bool,
}

impl Offers {
    fn or(self, other: Offers) -> Offers {
        Offers {
            tools: self.tools || other.tools,
            resources: self.resources || other.resources,
            prompts: self.prompts || other.prompts,
            completions: self.completions || other.completions,
            tasks: self.tasks || other.tasks,
            skills: self.skills || other.skills,
            skills_directory: self.skills_directory || other.skills_directory,
        }
    }

    fn has(self, kind: Kind) -> bool {
        match kind {
            Kind::Tool => self.tools,
            Kind::Resource | Kind::Template => self.resources,
            Kind::Prompt => self.prompts,
        }
    }
}

/// How a request reaches a server's dispatcher (the dispatcher's `on_request_guarded`,
/// passed in so that this file does not import the dispatcher that calls it).
pub(crate) type Dispatch = fn(&Arc<Connection>, Request, Arrival) -> Step;

/// How a client connection is named where a source keeps something per connection in front:
/// its address, unique while it lives.
pub(crate) fn connection_key(conn: &Connection) -> usize {
    std::ptr::from_ref(conn) as usize
}

/// Who subscribes to a mounted resource, as [`Source::subscribe`] counts them: a session's
/// connection (`resources/subscribe`) or one 2026-07-28 listen stream, so that one stream's
/// end does not undo another's subscription on a connection that carries several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Subscriber {
    /// Unique among subscribers while this one lives: a connection's address, or an odd
    /// number (no `Connection`'s address is odd) for a listen stream.
    pub(crate) key: usize,
    /// A 2026-07-28 listen stream (no session: served through a shared connection).
    pub(crate) listen: bool,
}

impl Subscriber {
    /// The session of the client of `conn`.
    pub(crate) fn session(conn: &Connection) -> Subscriber {
        Subscriber {
            key: connection_key(conn),
            listen: false,
        }
    }

    /// A new listen stream.
    pub(crate) fn listen() -> Subscriber {
        static LISTENS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = LISTENS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Subscriber {
            key: (n << 1) | 1,
            listen: true,
        }
    }
}

/// A list of listings, as a source gives it.
pub(crate) type ListFuture =
    Pin<Box<dyn Future<Output = Result<Vec<Box<RawValue>>, McpError>> + Send>>;

/// What answers for one mounted namespace. Names it is given and gives back are its own
/// (unprefixed), except in listings, which carry the mounted names.
pub(crate) trait Source: Send + Sync + 'static {
    /// What it serves.
    fn offers(&self) -> Offers;
    /// Its items of `kind` as a client of `version` lists them, with their mounted names,
    /// without those `caller` may not use when its lists hide them; for the client of
    /// `parent`.
    fn list(
        &self,
        kind: Kind,
        version: ProtocolVersion,
        caller: Option<Arc<Principal>>,
        parent: &Arc<Connection>,
    ) -> ListFuture;
    /// What it lists of `kind` without running anything (no resource listers, no upstream),
    /// for a description of the server ([`Server::manifest`]), as a 2025-11-25 client lists it.
    fn described(&self, kind: Kind) -> Vec<Box<RawValue>>;
    /// Whether it serves the item `name` of `kind` (a tool or prompt name, a resource URI, a
    /// template's URI template).
    fn knows(&self, kind: Kind, name: &str) -> bool;
    /// The scopes a request needs (as `Registry::scopes_for`), `method` being `tools/call`,
    /// `prompts/get`, `resources/read`, `template` or `subscribe`.
    fn scopes_for(&self, method: &str, name: &str) -> Vec<&'static str>;
    /// Serves `req`, already rewritten to its own names, for the client of `parent` (`scope`
    /// is the request as the parent resolved it; `req` has its `_meta` back). `slot` is the
    /// mount's index (per-connection state of the source is kept under it); `dispatch` is the
    /// dispatcher (with middleware), for a server of this process.
    fn forward(
        &self,
        slot: usize,
        parent: &Arc<Connection>,
        scope: Scope,
        req: Request,
        dispatch: Dispatch,
    ) -> Step;
    /// The `x-mcp-header` arguments of its tool `name` (its own name), as far as it knows.
    fn header_params(&self, _name: &str) -> Vec<HeaderParam> {
        Vec::new()
    }
    /// Whether the task `id` is one of its own (a task it created and handed a client).
    fn owns_task(&self, _id: &str) -> bool {
        false
    }
    /// Whether `uri` (its own URI), named by a resource link or an embedded resource in one of
    /// its results, is one of its resources, so that the link is given its mounted URI. `false`
    /// unless it knows (a proxy does not know an upstream's resources without listing them).
    fn links_to_own(&self, _uri: &str) -> bool {
        false
    }
    /// The subscriber `who` of the client of `parent` subscribed to `uri` (its own URI)
    /// through the parent.
    fn subscribe(&self, _parent: &Arc<Connection>, _who: Subscriber, _uri: &str) {}
    /// The subscriber `who` of the client of `parent` unsubscribed from `uri`.
    fn unsubscribe(&self, _parent: &Connection, _who: Subscriber, _uri: &str) {}
    /// Its changes, to be announced by the parent (`None`: it announces none, or it shares
    /// `parent`'s catalog).
    fn changes(&self, parent: &Catalog) -> Option<broadcast::Receiver<Change>>;
}

/// How a mount's names are made from its source's.
#[derive(Clone, Debug)]
pub(crate) struct Names {
    pub(crate) prefix: String,
    pub(crate) separator: String,
}

impl Names {
    /// `forecast` → `weather_forecast` (unchanged without a prefix).
    pub(crate) fn name(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            return name.to_owned();
        }
        format!("{}{}{name}", self.prefix, self.separator)
    }

    /// `weather_forecast` → `forecast`.
    pub(crate) fn strip_name<'a>(&self, name: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            return Some(name);
        }
        name.strip_prefix(&*self.prefix)?
            .strip_prefix(&*self.separator)
            .filter(|rest| !rest.is_empty())
    }

    /// `weather://current` → `weather://weather/current`; a URI without `://` gets the
    /// prefix as a first segment (`x` → `weather/x`); unchanged without a prefix.
    pub(crate) fn uri(&self, uri: &str) -> String {
        if self.prefix.is_empty() {
            return uri.to_owned();
        }
        match uri.split_once("://") {
            Some((scheme, rest)) => format!("{scheme}://{}/{rest}", self.prefix),
            None => format!("{}/{uri}", self.prefix),
        }
    }

    /// `weather://weather/current` → `weather://current`.
    pub(crate) fn strip_uri(&self, uri: &str) -> Option<String> {
        if self.prefix.is_empty() {
            return Some(uri.to_owned());
        }
        match uri.split_once("://") {
            Some((scheme, rest)) => {
                let rest = rest.strip_prefix(&*self.prefix)?.strip_prefix('/')?;
                Some(format!("{scheme}://{rest}"))
            }
            None => Some(
                uri.strip_prefix(&*self.prefix)?
                    .strip_prefix('/')?
                    .to_owned(),
            ),
        }
    }

    /// The mounted form of a listing: its `field` (`name`, `uri`, `uriTemplate`) renamed.
    /// Our own listings are objects; an upstream's item that is not passes as it is.
    pub(crate) fn listing(&self, raw: &RawValue, field: &str) -> Box<RawValue> {
        let Ok(mut value) = serde_json::from_str::<Map<String, Value>>(raw.get()) else {
            return raw.to_owned();
        };
        if let Some(Value::String(own)) = value.get(field) {
            let mounted = if field == "name" {
                self.name(own)
            } else {
                self.uri(own)
            };
            value.insert(field.to_owned(), Value::String(mounted));
        }
        serde_json::value::to_raw_value(&value).expect("listings serialize")
    }
}

/// One mounted namespace.
pub(crate) struct Mount {
    pub(crate) names: Names,
    pub(crate) source: Arc<dyn Source>,
}

/// The mounts of a server, and the tasks that carry their changes to it.
#[derive(Default)]
pub(crate) struct Mounts {
    pub(crate) list: Vec<Mount>,
    /// What any of them serves.
    pub(crate) offers: Offers,
    /// The tasks announcing the mounts' changes on the server's catalog (started with the
    /// first session or listen stream; restarted if their runtime went away).
    bridges: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Dropped with the server: ends the bridge tasks.
    alive: Option<tokio::sync::watch::Sender<()>>,
}

impl Mounts {
    pub(crate) fn new(list: Vec<Mount>) -> Mounts {
        let offers = list.iter().fold(Offers::default(), |all, m| {
            let mut offers = m.source.offers();
            if !m.names.prefix.is_empty() {
                (offers.skills, offers.skills_directory) = (false, false);
            }
            all.or(offers)
        });
        Mounts {
            list,
            offers,
            bridges: Mutex::default(),
            alive: Some(tokio::sync::watch::channel(()).0),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The mount serving the tool or prompt `name`, and its name there.
    fn by_name<'a>(&self, kind: Kind, name: &'a str) -> Option<(usize, &'a str)> {
        self.list.iter().enumerate().find_map(|(i, m)| {
            let own = m.names.strip_name(name)?;
            m.source.knows(kind, own).then_some((i, own))
        })
    }

    /// The mount serving the resource (or template) `uri`, and its URI there.
    fn by_uri(&self, kind: Kind, uri: &str) -> Option<(usize, String)> {
        self.list.iter().enumerate().find_map(|(i, m)| {
            let own = m.names.strip_uri(uri)?;
            m.source.knows(kind, &own).then_some((i, own))
        })
    }

    /// The `x-mcp-header` arguments of the mounted tool `name` (none when no mount serves it):
    /// a 2026-07-28 `tools/call` over HTTP must carry them in `Mcp-Param-*` headers.
    pub(crate) fn header_params(&self, name: &str) -> Vec<HeaderParam> {
        match self.by_name(Kind::Tool, name) {
            Some((i, own)) => self.list[i].source.header_params(own),
            None => Vec::new(),
        }
    }

    /// Tells the mount serving `uri` that the subscriber `who` of the client of `conn`
    /// subscribed to it; `false` if none does.
    pub(crate) fn subscribe(&self, conn: &Arc<Connection>, who: Subscriber, uri: &str) -> bool {
        match self.by_uri(Kind::Resource, uri) {
            Some((i, own)) => {
                self.list[i].source.subscribe(conn, who, &own);
                true
            }
            None => false,
        }
    }

    /// Tells the mount serving `uri` that the subscriber `who` of the client of `conn`
    /// unsubscribed.
    pub(crate) fn unsubscribe(&self, conn: &Connection, who: Subscriber, uri: &str) {
        if let Some((i, own)) = self.by_uri(Kind::Resource, uri) {
            self.list[i].source.unsubscribe(conn, who, &own);
        }
    }

    /// The scopes a mounted item needs (see [`Source::scopes_for`]); none for a name no
    /// mount serves.
    pub(crate) fn scopes_for(&self, method: &str, name: &str) -> Vec<&'static str> {
        let found = match method {
            "tools/call" => self
                .by_name(Kind::Tool, name)
                .map(|(i, n)| (i, n.to_owned())),
            "prompts/get" => self
                .by_name(Kind::Prompt, name)
                .map(|(i, n)| (i, n.to_owned())),
            "template" => self.by_uri(Kind::Template, name),
            "resources/read" | "subscribe" => self.by_uri(Kind::Resource, name),
            _ => None,
        };
        match found {
            Some((i, own)) => self.list[i].source.scopes_for(method, &own),
            None => Vec::new(),
        }
    }

    /// Every scope a mounted item asks for.
    pub(crate) fn all_scopes(&self) -> Vec<&'static str> {
        let mut all = Vec::new();
        for m in &self.list {
            for s in m.source.scopes_for("*", "") {
                if !all.contains(&s) {
                    all.push(s);
                }
            }
        }
        all
    }

    /// Starts announcing the mounts' changes on `catalog` (once; again if the tasks ended
    /// with their runtime).
    pub(crate) fn bridge(&self, catalog: &Catalog) {
        if self.list.is_empty() {
            return;
        }
        let mut bridges = self.bridges.lock().expect("bridges lock");
        if !bridges.is_empty() && bridges.iter().all(|t| !t.is_finished()) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(alive) = &self.alive else { return };
        bridges.iter().for_each(tokio::task::JoinHandle::abort);
        bridges.clear();
        for m in &self.list {
            let Some(mut changes) = m.source.changes(catalog) else {
                continue;
            };
            let (catalog, names) = (catalog.clone(), m.names.clone());
            let mut alive = alive.subscribe();
            bridges.push(runtime.spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    let change = tokio::select! {
                        change = changes.recv() => change,
                        _ = alive.changed() => return,
                    };
                    match change {
                        Ok(Change::Tools) => catalog.tools_changed(),
                        Ok(Change::Prompts) => catalog.prompts_changed(),
                        Ok(Change::Resources) => catalog.resources_changed(),
                        Ok(Change::Updated(uri)) => catalog.resource_updated(names.uri(&uri)),
                        // A mounted server's tasks are not served through the mount.
                        Ok(Change::Task { .. }) => {}
                        Ok(Change::Everything) | Err(RecvError::Lagged(_)) => {
                            catalog.tools_changed();
                            catalog.prompts_changed();
                            catalog.resources_changed();
                        }
                        Err(RecvError::Closed) => return,
                    }
                }
            }));
        }
    }
}

impl Drop for Mounts {
    fn drop(&mut self) {
        // Ends the bridges (their `alive` receivers see the sender go).
        self.alive.take();
    }
}

/// A server to [`mount`](crate::ServerBuilder::mount) into another: a [`Server`] of this
/// process (`From<Server>`).
pub struct Mounted(Pending);

enum Pending {
    Server(Server),
    Source(MakeSource),
}

/// Makes a source once its names are known.
type MakeSource = Box<dyn FnOnce(&Names) -> Arc<dyn Source> + Send>;

/// The resource listers of templates that list their instances.
type Listers = Vec<fn() -> Vec<Resource>>;

impl From<Server> for Mounted {
    fn from(server: Server) -> Mounted {
        Mounted(Pending::Server(server))
    }
}

impl Mounted {
    /// A source made once its names are known.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn source(make: impl FnOnce(&Names) -> Arc<dyn Source> + Send + 'static) -> Self {
        Mounted(Pending::Source(Box::new(make)))
    }
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Pending::Server(server) => f.debug_tuple("Mounted").field(server).finish(),
            Pending::Source(_) => f.write_str("Mounted(..)"),
        }
    }
}

/// The mounts of a builder, checked: a prefix (and the separator) of tool-name characters, no
/// prefix twice.
pub(super) fn build(
    mounts: Vec<(String, Mounted)>,
    separator: &str,
    info_raw: &RawValue,
) -> Result<Mounts, BuildError> {
    let name_chars = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    };
    let mut list: Vec<Mount> = Vec::with_capacity(mounts.len());
    for (prefix, mounted) in mounts {
        let problem = if !name_chars(&prefix) || prefix.len() > 64 {
            Some("a prefix is up to 64 of A-Z a-z 0-9 _ - . (empty: no prefix)".to_owned())
        } else if separator.is_empty() || !name_chars(separator) {
            Some(format!(
                "the separator {separator:?} must be 1 or more of A-Z a-z 0-9 _ - ."
            ))
        } else if list.iter().any(|m| m.names.prefix == prefix) {
            Some("this prefix is mounted twice".to_owned())
        } else {
            None
        };
        if let Some(reason) = problem {
            return Err(BuildError::InvalidMount { prefix, reason });
        }
        let names = Names {
            prefix,
            separator: separator.to_owned(),
        };
        let source: Arc<dyn Source> = match mounted.0 {
            Pending::Server(server) => {
                Arc::new(Child::new(server.presented_as(info_raw), names.clone()))
            }
            Pending::Source(make) => make(&names),
        };
        list.push(Mount { names, source });
    }
    Ok(Mounts::new(list))
}

/// The future of a call answered elsewhere.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Result<Forwarded, McpError>> + Send>>;

/// Runs a call answered elsewhere as a request of `parent`: cancellable (its future is dropped
/// when the client cancels), within the connection's limits and timeout, its result shaped
/// for the request's era ([`Forwarded`]). With `rounds`, a 2026-07-28 call may ask the client
/// (what the upstream asks) through an input round of this server; without, the input rounds
/// are the upstream's, passed on as they are (`inputResponses` and `requestState` are then
/// not this server's to read).
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn run_forwarded(
    parent: &Arc<Connection>,
    mut scope: Scope,
    req: &Request,
    rounds: bool,
    call: impl FnOnce(crate::request::Context) -> CallFuture,
) -> Step {
    if rounds && let Err(e) = super::input::open_round(&parent.server.inner, &mut scope, req, true)
    {
        return Step::Reply(scope.err(&req.id, e));
    }
    let (what, cache) = match &*req.method {
        "tools/call" => ("tools/call", Cache::No),
        "prompts/get" => ("prompts/get", Cache::No),
        "resources/read" => ("resources/read", Cache::Data),
        "completion/complete" => ("completion/complete", Cache::No),
        // Skills describe the server, as its own skills' lists do.
        "skills/list" | "skills/get" | "resources/directory/read" => ("skills", Cache::Listing),
        _ => ("forwarded", Cache::No),
    };
    run(parent, scope, &req.id, what, cache, call)
}

/// The params of `req` as JSON, for a server elsewhere: without what belongs to this hop
/// (`_meta`, 2026-07-28 `inputResponses` and `requestState`). A tool's arguments are taken out
/// of `req` as the text they came as (`raw`: they pass on unbuilt).
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) fn params_json(req: &mut Request) -> (Value, Option<(&'static str, Box<RawValue>)>) {
    let mut raw = None;
    let value = match &mut req.params.body {
        Body::CallTool(p) => {
            raw = p.arguments.take().map(|text| ("arguments", text));
            // This hop's `_meta` is not built only to be dropped.
            let meta = p.meta.take();
            let value = serde_json::to_value(&*p);
            p.meta = meta;
            value
        }
        Body::GetPrompt(p) => serde_json::to_value(p),
        Body::Uri(p) => serde_json::to_value(p),
        Body::Complete(p) => serde_json::to_value(p),
        Body::Task(p) => serde_json::to_value(p),
        Body::List(p) => serde_json::to_value(p),
        Body::Directory(p) => serde_json::to_value(p),
        // A task's answers are the request itself, not this hop's.
        Body::UpdateTask(p) => serde_json::to_value(p).map(|mut v| {
            if let Value::Object(map) = &mut v {
                map.remove("_meta");
            }
            v
        }),
        _ => Ok(Value::Object(Map::new())),
    };
    let mut value = value.unwrap_or_else(|_| Value::Object(Map::new()));
    if let (false, Value::Object(map)) =
        (matches!(req.params.body, Body::UpdateTask(_)), &mut value)
    {
        for hop in ["_meta", "inputResponses", "requestState"] {
            map.remove(hop);
        }
    }
    (value, raw)
}

/// Which mount serves the item a request names, when the server does not own it: the mount's
/// index and the item's name (or URI) there. `None`: the server's own handler answers,
/// "unknown" included.
pub(super) fn route(conn: &Connection, req: &Request) -> Option<(usize, String)> {
    let inner = &conn.server.inner;
    let (registry, mounts) = (&inner.registry, &inner.mounts);
    match &req.params.body {
        Body::CallTool(p) if registry.tool(&p.name).is_none() => mounts
            .by_name(Kind::Tool, &p.name)
            .map(|(i, own)| (i, own.to_owned())),
        Body::GetPrompt(p) if registry.prompt(&p.name).is_none() => mounts
            .by_name(Kind::Prompt, &p.name)
            .map(|(i, own)| (i, own.to_owned())),
        Body::Uri(p) if req.method == "resources/read" && !owns_resource(conn, &p.uri) => {
            mounts.by_uri(Kind::Resource, &p.uri)
        }
        Body::Complete(p) => match &p.reference {
            Reference::Prompt { name } if registry.prompt(name).is_none() => mounts
                .by_name(Kind::Prompt, name)
                .map(|(i, own)| (i, own.to_owned())),
            Reference::Resource { uri }
                if !registry.templates.items.iter().any(|t| t.def.uri == uri)
                    && registry.static_resource(uri).is_none() =>
            {
                mounts.by_uri(Kind::Template, uri)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Which mount serves a `tasks/*` request: the one that created the task, else, when the
/// server runs no tasks of its own, the first mount that runs tasks (which then says whether
/// it knows the task). `None`: the server's own handler answers.
pub(super) fn route_task(conn: &Connection, req: &Request) -> Option<(usize, String)> {
    let inner = &conn.server.inner;
    let id = match &req.params.body {
        Body::Task(p) => &p.task_id,
        Body::UpdateTask(p) => &p.task_id,
        _ => return None,
    };
    let mounts = &inner.mounts.list;
    let slot = mounts
        .iter()
        .position(|m| m.source.owns_task(id))
        .or_else(|| {
            if inner.registry.has_task_tools() {
                return None;
            }
            mounts.iter().position(|m| m.source.offers().tasks)
        })?;
    Some((slot, id.clone()))
}

/// Which mount serves `skills/list`, `skills/get` and `resources/directory/read`, on a server
/// with no skills of its own: the first mounted without a prefix that serves skills, with the
/// skill's URI (`skills/get`).
pub(super) fn route_skills(conn: &Connection, req: &Request) -> Option<(usize, String)> {
    let slot = conn.server.inner.mounts.list.iter().position(|m| {
        let offers = m.source.offers();
        m.names.prefix.is_empty()
            && offers.skills
            && (offers.skills_directory || req.method != "resources/directory/read")
    })?;
    let uri = match &req.params.body {
        Body::Uri(p) => p.uri.clone(),
        _ => String::new(),
    };
    Some((slot, uri))
}

/// Hands `req` to the mount at `slot` (found by [`route`]) under the item's name there,
/// with its `_meta` back (the mount's dispatcher reads it again).
pub(super) fn forward(
    conn: &Arc<Connection>,
    scope: Scope,
    mut req: Request,
    meta: Option<RequestMeta>,
    (slot, renamed): (usize, String),
    dispatch: Dispatch,
) -> Step {
    let mounts = &conn.server.inner.mounts;
    match &mut req.params.body {
        Body::CallTool(p) => p.name = renamed,
        Body::GetPrompt(p) => p.name = renamed,
        Body::Uri(p) => p.uri = renamed,
        Body::Complete(p) => match &mut p.reference {
            Reference::Prompt { name } => *name = renamed,
            Reference::Resource { uri } => *uri = renamed,
        },
        _ => {}
    }
    req.params.meta = meta.map(Box::new);
    let read = req.method == "resources/read";
    let linking = matches!(&*req.method, "tools/call" | "prompts/get");
    let mount = &mounts.list[slot];
    let step = mount.source.forward(slot, conn, scope, req, dispatch);
    if mount.names.prefix.is_empty() || !(read || linking) {
        return step;
    }
    // The contents read, and the resources a result links to or embeds, name the URIs the
    // client knows: the mounted ones.
    let names = mount.names.clone();
    let source = mount.source.clone();
    let rename = move |reply: Reply| {
        if read {
            mounted_contents(reply, &names)
        } else {
            mounted_links(reply, &names, &*source)
        }
    };
    match step {
        Step::Reply(reply) => Step::Reply(rename(reply)),
        Step::Run(pending) => Step::Run(Box::pin(async move { pending.await.map(rename) })),
        Step::Nothing => Step::Nothing,
    }
}

/// A `tools/call` or `prompts/get` response whose resource links and embedded resources that
/// name the mount's own resources name them by their mounted URIs (a client reads them
/// through the parent); other URIs (`https://…`, another server's) stay as they are.
fn mounted_links(reply: Reply, names: &Names, source: &dyn Source) -> Reply {
    const URI: &[u8] = b"\"uri\"";
    if reply.kind != ReplyKind::Result || !reply.bytes.windows(URI.len()).any(|w| w == URI) {
        return reply;
    }
    let Ok(mut response) = serde_json::from_slice::<Value>(&reply.bytes) else {
        return reply;
    };
    let Some(Value::Object(result)) = response.get_mut("result") else {
        return reply;
    };
    // A tool's `content`, or each prompt message's `content` (one block, or a list).
    let mut blocks: Vec<&mut Value> = Vec::new();
    for (key, value) in result.iter_mut() {
        match (key.as_str(), value) {
            ("content", Value::Array(content)) => blocks.extend(content.iter_mut()),
            ("messages", Value::Array(messages)) => {
                for message in messages {
                    match message.get_mut("content") {
                        Some(Value::Array(content)) => blocks.extend(content.iter_mut()),
                        Some(block) => blocks.push(block),
                        None => {}
                    }
                }
            }
            _ => {}
        }
    }
    let mut renamed = false;
    for block in blocks {
        let embedded = match block.get("type").and_then(Value::as_str) {
            Some("resource_link") => false,
            Some("resource") => true,
            _ => continue,
        };
        let uri = if embedded {
            block.get_mut("resource").and_then(|r| r.get_mut("uri"))
        } else {
            block.get_mut("uri")
        };
        if let Some(Value::String(uri)) = uri
            && source.links_to_own(uri)
        {
            *uri = names.uri(uri);
            renamed = true;
        }
    }
    if !renamed {
        return reply;
    }
    match serde_json::to_vec(&response) {
        Ok(bytes) => Reply { bytes, ..reply },
        Err(_) => reply,
    }
}

/// A `resources/read` response with each content's `uri` under its mounted name.
fn mounted_contents(reply: Reply, names: &Names) -> Reply {
    if reply.kind != ReplyKind::Result {
        return reply;
    }
    let Ok(mut response) = serde_json::from_slice::<Value>(&reply.bytes) else {
        return reply;
    };
    let Some(contents) = response
        .pointer_mut("/result/contents")
        .and_then(Value::as_array_mut)
    else {
        return reply;
    };
    for content in contents {
        if let Some(Value::String(uri)) = content.get_mut("uri") {
            *uri = names.uri(uri);
        }
    }
    match serde_json::to_vec(&response) {
        Ok(bytes) => Reply { bytes, ..reply },
        Err(_) => reply,
    }
}

/// Whether the server's own resources or templates (or skills) serve `uri`.
fn owns_resource(conn: &Connection, uri: &str) -> bool {
    let inner = &conn.server.inner;
    let registry = &inner.registry;
    registry.static_resource(uri).is_some()
        || registry
            .templates
            .items
            .iter()
            .any(|t| t.enabled(&inner.catalog) && t.template.matches(uri).is_some())
        || (inner.skills.is_some() && uri.starts_with("skill://"))
}

/// A list method of a server with mounts: its own items, then each mount's, paged as one
/// list (a cursor is stale once anything in the list changed).
pub(super) fn list(conn: &Arc<Connection>, scope: Scope, req: Request, kind: Kind) -> Step {
    let cursor = match cursor_of(&req) {
        Ok(c) => c,
        Err(e) => return Step::Reply(scope.err(&req.id, e)),
    };
    let inner = &conn.server.inner;
    let version = scope.version();
    let caller = scope.principal.clone();
    let own = own_listings(conn.server.clone(), kind, version, caller.clone());
    let parent = conn.clone();
    let sources: Vec<Arc<dyn Source>> = inner
        .mounts
        .list
        .iter()
        .filter(|m| m.source.offers().has(kind))
        .map(|m| m.source.clone())
        .collect();
    let page_size = inner.limits.page_size;
    let (key, what, cache) = match kind {
        Kind::Tool => ("tools", "tools/list", Cache::Listing),
        Kind::Resource => ("resources", "resources/list", Cache::Data),
        Kind::Template => (
            "resourceTemplates",
            "resources/templates/list",
            Cache::Listing,
        ),
        Kind::Prompt => ("prompts", "prompts/list", Cache::Listing),
    };
    run(conn, scope, &req.id, what, cache, move |_ctx| {
        Box::pin(async move {
            let mut all = own.await?;
            // A source that fails (an upstream gone) leaves its items out of a list that has
            // others, with a warning; a list that has nothing else is its error.
            let alone = all.is_empty() && sources.len() == 1;
            for (i, source) in sources.iter().enumerate() {
                match source.list(kind, version, caller.clone(), &parent).await {
                    Ok(items) => all.extend(items),
                    Err(e) if alone => return Err(e),
                    Err(e) => {
                        tracing::warn!(mount = i, error = %e, "{what}: leaving out a mount that failed")
                    }
                }
            }
            let fingerprint = {
                use std::hash::{Hash, Hasher};
                let mut hasher = std::hash::DefaultHasher::new();
                all.iter().for_each(|l| l.get().hash(&mut hasher));
                hasher.finish()
            };
            let (items, next_cursor) = page_of(&all, fingerprint, cursor.as_deref(), page_size)
                .ok_or_else(|| McpError::invalid_params("Invalid cursor"))?;
            Ok(ListPage {
                key,
                items: items.to_vec(),
                next_cursor,
            })
        })
    })
}

/// Whether `caller` may see an item needing `scopes` in its lists.
fn visible(caller: Option<&Principal>, scopes: &[&str]) -> bool {
    caller
        .filter(|p| p.hides_unauthorized())
        .is_none_or(|p| p.missing(scopes).is_empty())
}

/// The listings of a server's own enabled items of `kind`, as `caller` sees them, under
/// `rename` (identity for the server's own lists, the mount's names for a mounted server).
fn listings_of(
    server: Server,
    kind: Kind,
    version: ProtocolVersion,
    caller: Option<Arc<Principal>>,
    rename: Option<Arc<Prefixed>>,
) -> ListFuture {
    let (mut out, listers) = listed(&server, kind, version, caller.as_deref(), rename.as_deref());
    if listers.is_empty() {
        return Box::pin(std::future::ready(Ok(out)));
    }
    // Templates that list their instances typically query a store: on the blocking pool, as
    // for a server served alone.
    Box::pin(async move {
        let listed = tokio::task::spawn_blocking(move || {
            listers.iter().flat_map(|list| list()).collect::<Vec<_>>()
        })
        .await
        .map_err(|_| McpError::internal("listing resources failed"))?;
        for mut resource in listed {
            if let Some(r) = &rename {
                resource.uri = r.names.uri(&resource.uri);
            }
            out.push(
                serde_json::value::to_raw_value(&resource)
                    .map_err(|e| McpError::internal(e.to_string()))?,
            );
        }
        Ok(out)
    })
}

/// What [`listings_of`] lists without running anything: the listings of `kind`, and the
/// listers of the templates that list their instances (for `Kind::Resource`).
fn listed(
    server: &Server,
    kind: Kind,
    version: ProtocolVersion,
    caller: Option<&Principal>,
    rename: Option<&Prefixed>,
) -> (Vec<Box<RawValue>>, Listers) {
    let inner = &server.inner;
    let (registry, catalog) = (&inner.registry, &inner.catalog);
    let shown = |item: &dyn ListedItem| item.on(catalog) && visible(caller, item.needs());
    let mut out: Vec<Box<RawValue>> = Vec::new();
    match kind {
        Kind::Tool => {
            for (i, t) in registry.tools.items.iter().enumerate() {
                if shown(t) {
                    let slot = t.listing_index(version);
                    out.push(match &rename {
                        Some(r) => r.tools[i][slot].clone(),
                        None => t.listing[slot].clone(),
                    });
                }
            }
        }
        Kind::Template => {
            for (i, t) in registry.templates.items.iter().enumerate() {
                if shown(t) {
                    out.push(match &rename {
                        Some(r) => r.templates[i].clone(),
                        None => t.listing.clone(),
                    });
                }
            }
        }
        Kind::Prompt => {
            for (i, p) in registry.prompts.items.iter().enumerate() {
                if shown(p) {
                    out.push(match &rename {
                        Some(r) => r.prompts[i].clone(),
                        None => p.listing.clone(),
                    });
                }
            }
        }
        Kind::Resource => {
            for (i, r) in registry.resources.items.iter().enumerate() {
                if shown(r) {
                    out.push(match &rename {
                        Some(p) => p.resources[i].clone(),
                        None => r.listing.clone(),
                    });
                }
            }
            if rename.is_none()
                && let Some(skills) = &inner.skills
            {
                out.extend(skills.manifests().iter().cloned());
            }
            let listers = registry
                .templates
                .items
                .iter()
                .filter(|t| shown(*t))
                .filter_map(|t| t.def.list)
                .collect();
            return (out, listers);
        }
    }
    (out, Vec::new())
}

fn own_listings(
    server: Server,
    kind: Kind,
    version: ProtocolVersion,
    caller: Option<Arc<Principal>>,
) -> ListFuture {
    listings_of(server, kind, version, caller, None)
}

/// A registered item as lists see it.
trait ListedItem {
    fn on(&self, catalog: &Catalog) -> bool;
    fn needs(&self) -> &'static [&'static str];
}

impl<T: Listed> ListedItem for T {
    fn on(&self, catalog: &Catalog) -> bool {
        self.enabled(catalog)
    }
    fn needs(&self) -> &'static [&'static str] {
        self.scopes()
    }
}

/// A mounted server's listings under their mounted names, made once at build, in its
/// registry's order.
struct Prefixed {
    names: Names,
    tools: Vec<[Box<RawValue>; 3]>,
    resources: Vec<Box<RawValue>>,
    templates: Vec<Box<RawValue>>,
    prompts: Vec<Box<RawValue>>,
}

/// An in-process [`Server`] mounted into another.
pub(crate) struct Child {
    server: Server,
    prefixed: Arc<Prefixed>,
}

impl Child {
    pub(crate) fn new(server: Server, names: Names) -> Child {
        let registry = &server.inner.registry;
        let prefixed = Prefixed {
            tools: registry
                .tools
                .items
                .iter()
                .map(|t| t.listing.each_ref().map(|l| names.listing(l, "name")))
                .collect(),
            resources: registry
                .resources
                .items
                .iter()
                .map(|r| names.listing(&r.listing, "uri"))
                .collect(),
            templates: registry
                .templates
                .items
                .iter()
                .map(|t| names.listing(&t.listing, "uriTemplate"))
                .collect(),
            prompts: registry
                .prompts
                .items
                .iter()
                .map(|p| names.listing(&p.listing, "name"))
                .collect(),
            names,
        };
        Child {
            server,
            prefixed: Arc::new(prefixed),
        }
    }

    fn registry(&self) -> &Registry {
        &self.server.inner.registry
    }
}

impl Source for Child {
    fn offers(&self) -> Offers {
        let registry = self.registry();
        Offers {
            tools: !registry.tools.items.is_empty(),
            resources: registry.has_resources(),
            prompts: !registry.prompts.items.is_empty(),
            completions: registry.has_completions(),
            tasks: false,
            skills: false,
            skills_directory: false,
        }
    }

    fn list(
        &self,
        kind: Kind,
        version: ProtocolVersion,
        caller: Option<Arc<Principal>>,
        _parent: &Arc<Connection>,
    ) -> ListFuture {
        listings_of(
            self.server.clone(),
            kind,
            version,
            caller,
            Some(self.prefixed.clone()),
        )
    }

    fn described(&self, kind: Kind) -> Vec<Box<RawValue>> {
        let version = ProtocolVersion::V2025_11_25;
        listed(&self.server, kind, version, None, Some(&self.prefixed)).0
    }

    fn links_to_own(&self, uri: &str) -> bool {
        self.knows(Kind::Resource, uri)
    }

    fn knows(&self, kind: Kind, name: &str) -> bool {
        let registry = self.registry();
        let catalog = &self.server.inner.catalog;
        match kind {
            Kind::Tool => registry.tool(name).is_some_and(|t| t.enabled(catalog)),
            Kind::Prompt => registry.prompt(name).is_some_and(|p| p.enabled(catalog)),
            Kind::Resource => match registry.static_resource(name) {
                Some(r) => r.enabled(catalog),
                None => registry
                    .templates
                    .items
                    .iter()
                    .any(|t| t.enabled(catalog) && t.template.matches(name).is_some()),
            },
            Kind::Template => {
                registry
                    .templates
                    .items
                    .iter()
                    .any(|t| t.def.uri == name && t.enabled(catalog))
                    || registry
                        .static_resource(name)
                        .is_some_and(|r| r.enabled(catalog))
            }
        }
    }

    fn header_params(&self, name: &str) -> Vec<HeaderParam> {
        self.registry()
            .tool(name)
            .map(|t| t.header_params.clone())
            .unwrap_or_default()
    }

    fn scopes_for(&self, method: &str, name: &str) -> Vec<&'static str> {
        let registry = self.registry();
        let catalog = &self.server.inner.catalog;
        match method {
            "subscribe" => registry.scopes_covered(catalog, name),
            "*" => registry.all_scopes(),
            _ => registry.scopes_for(catalog, method, name).to_vec(),
        }
    }

    fn forward(
        &self,
        slot: usize,
        parent: &Arc<Connection>,
        scope: Scope,
        req: Request,
        dispatch: Dispatch,
    ) -> Step {
        let arrival = Arrival {
            sink: scope.sink,
            headers: scope.headers,
            closer: scope.closer,
            principal: scope.principal,
            peer: scope.peer,
        };
        dispatch(&parent.child(slot, &self.server), req, arrival)
    }

    fn changes(&self, parent: &Catalog) -> Option<broadcast::Receiver<Change>> {
        let own = &self.server.inner.catalog;
        (!own.same_as(parent)).then(|| own.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn names_and_uris_gain_and_lose_the_prefix_the_fastmcp_way() {
        let names = Names {
            prefix: "weather".into(),
            separator: "_".into(),
        };
        assert_eq!(names.name("forecast"), "weather_forecast");
        assert_eq!(names.strip_name("weather_forecast"), Some("forecast"));
        assert_eq!(names.strip_name("weather_"), None);
        assert_eq!(names.strip_name("weatherforecast"), None);
        assert_eq!(names.uri("weather://current"), "weather://weather/current");
        assert_eq!(names.uri("file:///etc/x"), "file://weather//etc/x");
        assert_eq!(names.uri("data://{city}/now"), "data://weather/{city}/now");
        for uri in ["weather://current", "file:///etc/x", "data://a/b?c"] {
            assert_eq!(names.strip_uri(&names.uri(uri)).as_deref(), Some(uri));
        }
        assert_eq!(names.strip_uri("weather://current"), None);
        assert_eq!(names.strip_uri("weather://weatherx/current"), None);
        let none = Names {
            prefix: String::new(),
            separator: "_".into(),
        };
        assert_eq!(none.name("forecast"), "forecast");
        assert_eq!(none.strip_name("forecast"), Some("forecast"));
        assert_eq!(none.uri("file:///x"), "file:///x");
    }

    #[test]
    fn a_listing_that_is_not_an_object_passes_as_it_is() {
        let names = Names {
            prefix: "up".into(),
            separator: "_".into(),
        };
        let raw =
            serde_json::value::to_raw_value(&serde_json::json!({"name": "add", "x": 1})).unwrap();
        assert_eq!(
            names.listing(&raw, "name").get(),
            r#"{"name":"up_add","x":1}"#
        );
        for odd in ["[1,2]", "\"add\"", "null", "{\"name\": 3}"] {
            let raw = serde_json::value::RawValue::from_string(odd.to_owned()).unwrap();
            let out = names.listing(&raw, "name");
            let same: serde_json::Value = serde_json::from_str(out.get()).unwrap();
            assert_eq!(
                same,
                serde_json::from_str::<serde_json::Value>(odd).unwrap()
            );
        }
    }
}
