//! The server: its identity and configuration ([`ServerBuilder`]), the dispatcher, and the two
//! protocol eras as thin adapters around it.

mod builder;
mod capabilities;
pub(crate) mod card;
mod completion;
pub(crate) mod connection;
pub(crate) mod dispatch;
pub(crate) mod envelope;
pub(crate) mod era;
mod forwarded;
mod handler;
mod input;
mod layers;
mod manifest;
pub(crate) mod mount;
mod prompts;
mod resources;
mod skills;
mod subscriptions;
mod task_call;
pub(crate) mod tasks;
mod tools;
mod trace;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use builder::ServerBuilder;
#[cfg(feature = "http")]
pub(crate) use input::warn_if_request_state_key_is_ephemeral;
pub use mount::Mounted;
pub(crate) use subscriptions::reopen_standalone;

use crate::protocol::Implementation;
use crate::registry::Registry;

/// Who may reuse a cacheable result (2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client may reuse it, across users.
    Public,
    /// Only the requesting user's client may reuse it.
    Private,
}

/// A configured MCP server: its identity, its registered tools and its limits.
///
/// Build one with [`Server::builder`] (or let [`run!`](crate::run) do it), then serve it over a
/// transport. Cloning is cheap.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    /// `serverInfo` serialized once, for every stateless result's `_meta`.
    pub(crate) info_raw: Box<RawValue>,
    pub(crate) instructions: Option<String>,
    pub(crate) registry: Arc<Registry>,
    pub(crate) capabilities: Value,
    /// What `server/discover` declares: the capabilities and the 2026-07-28 extensions.
    pub(crate) stateless_capabilities: Value,
    /// What `initialize` declares to a 2025-11-25 client: the capabilities and `tasks`.
    pub(crate) tasks_capabilities: Value,
    /// The tasks of this server.
    pub(crate) tasks: Arc<crate::task::Tasks>,
    /// The middleware chain, outermost first (empty: requests go straight to the dispatcher).
    pub(crate) middleware: Arc<[Arc<dyn crate::middleware::Middleware>]>,
    pub(crate) limits: Limits,
    pub(crate) states: Arc<crate::request::StateMap>,
    /// Which items are disabled, and where changes are announced.
    pub(crate) catalog: crate::catalog::Catalog,
    /// Passes announced changes to the session-era connections.
    pub(crate) forwarder: Arc<subscriptions::Forwarder>,
    /// Identifies the caller a `requestState` is bound to (default: `Authorization`).
    pub(crate) state_caller: Option<StateCaller>,
    /// Seals 2026-07-28 `requestState`.
    pub(crate) sealer: Arc<crate::request_state::seal::Sealer>,
    /// The skills served from [`ServerBuilder::skills_dir`], scanned at build.
    pub(crate) skills: Option<Arc<crate::skills::SkillCatalog>>,
    /// The server card's name, when configured ([`ServerBuilder::card_name`]).
    pub(crate) card_name: Option<String>,
    /// The source repository's URL ([`ServerBuilder::repository`]).
    pub(crate) repository: Option<String>,
    /// The servers mounted into this one ([`ServerBuilder::mount`]).
    pub(crate) mounts: Arc<mount::Mounts>,
}

/// How a server identifies the caller of a request from its HTTP headers.
pub(crate) type StateCaller = Arc<dyn Fn(&http::HeaderMap) -> Option<String> + Send + Sync>;

/// Limits and tunables; the defaults live in one place, [`Limits::default`].
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    pub(crate) page_size: usize,
    pub(crate) cache_ttl: Duration,
    pub(crate) resource_cache_ttl: Duration,
    pub(crate) cache_scope: CacheScope,
    pub(crate) max_in_flight: usize,
    pub(crate) max_message_bytes: usize,
    pub(crate) shutdown_grace: Duration,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) client_request_timeout: Duration,
    pub(crate) max_listens: usize,
    pub(crate) max_subscriptions: usize,
    /// The longest resource URI a request may name (`resources/read`, subscriptions): longer
    /// ones are -32602 before any template is tried.
    pub(crate) max_uri_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            page_size: 100,
            cache_ttl: Duration::from_secs(60),
            resource_cache_ttl: Duration::ZERO,
            cache_scope: CacheScope::Private,
            max_in_flight: 1024,
            max_message_bytes: 4 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(5),
            request_timeout: None,
            client_request_timeout: Duration::from_secs(300),
            max_listens: 1024,
            max_subscriptions: 1024,
            max_uri_bytes: 64 * 1024,
        }
    }
}

impl Server {
    /// A builder with every registered tool and no name yet.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    /// The server's `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The tools this server serves, as `tools/list` describes them, in its order.
    pub fn tools(&self) -> impl Iterator<Item = &crate::protocol::Tool> + '_ {
        self.inner.registry.tools.items.iter().map(|t| &t.tool)
    }

    /// The server's [`Catalog`](crate::catalog::Catalog): enables or disables its tools,
    /// resources and prompts, and announces changes to its clients.
    pub fn catalog(&self) -> &crate::catalog::Catalog {
        &self.inner.catalog
    }

    /// The 0.1 name of [`catalog`](Self::catalog).
    #[doc(hidden)]
    #[deprecated(note = "renamed to `catalog()`")]
    pub fn changes(&self) -> &crate::catalog::Catalog {
        self.catalog()
    }

    /// The names of the tools this server serves, in `tools/list` order.
    pub fn tool_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.inner.registry.tools.items.iter().map(|t| t.def.name)
    }

    /// The instructions the server gives clients (`initialize` and `server/discover`), if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// A description of this server for registries, catalogs and humans, as `--describe` prints
    /// it: its `serverInfo` fields (`name`, `version`, `title`, …) at the top, as in an MCP
    /// registry `server.json`, then `instructions`, `capabilities`, and the `tools`,
    /// `resources`, `resourceTemplates` and `prompts` that are enabled, as a 2025-11-25 client
    /// lists them (tools with `inputSchema`, `outputSchema`, `annotations`, and
    /// `execution.taskSupport` for task tools).
    ///
    /// Resources that templates list at run time are left out (listing them can mean querying
    /// a store); their templates are in `resourceTemplates`.
    ///
    /// ```
    /// let server = mcp_runtime::Server::builder().name("weather").version("1.2.0").build()?;
    /// let manifest = server.manifest();
    /// assert_eq!(manifest["name"], "weather");
    /// assert_eq!(manifest["version"], "1.2.0");
    /// assert!(manifest["tools"].is_array());
    /// # Ok::<(), mcp_runtime::BuildError>(())
    /// ```
    pub fn manifest(&self) -> Value {
        manifest::of(self)
    }

    /// The server card (SEP-2127) an HTTP server serves at `<mcp-url>/server-card`, as if
    /// reachable at `url` (its `remotes` entry, when given) serving every protocol version;
    /// `None` when the server has no reverse-DNS name (see
    /// [`ServerBuilder::card_name`](crate::ServerBuilder::card_name)).
    ///
    /// ```
    /// let server = mcp_runtime::Server::builder()
    ///     .name("weather")
    ///     .version("1.2.0")
    ///     .repository("https://github.com/acme/weather")
    ///     .build()?;
    /// let card = server.server_card(Some("https://weather.acme.dev/mcp")).unwrap();
    /// assert_eq!(card["name"], "io.github.acme/weather");
    /// assert_eq!(card["remotes"][0]["type"], "streamable-http");
    /// # Ok::<(), mcp_runtime::BuildError>(())
    /// ```
    pub fn server_card(&self, url: Option<&str>) -> Option<Value> {
        card::of(self, url, &crate::protocol::ProtocolVersion::ALL)
    }
}

impl Server {
    /// This server as mounted into one whose `serverInfo` is `info_raw`: the same server (its
    /// registry, catalog, middleware, tasks), whose 2026-07-28 results carry the parent's
    /// `serverInfo`, as the client expects of every result it gets from the parent.
    pub(crate) fn presented_as(&self, info_raw: &RawValue) -> Server {
        let i = &self.inner;
        Server {
            inner: Arc::new(ServerInner {
                info: i.info.clone(),
                info_raw: info_raw.to_owned(),
                instructions: i.instructions.clone(),
                registry: i.registry.clone(),
                capabilities: i.capabilities.clone(),
                stateless_capabilities: i.stateless_capabilities.clone(),
                tasks_capabilities: i.tasks_capabilities.clone(),
                tasks: i.tasks.clone(),
                middleware: i.middleware.clone(),
                limits: i.limits.clone(),
                states: i.states.clone(),
                catalog: i.catalog.clone(),
                forwarder: Default::default(),
                state_caller: i.state_caller.clone(),
                sealer: i.sealer.clone(),
                skills: i.skills.clone(),
                card_name: i.card_name.clone(),
                repository: i.repository.clone(),
                mounts: i.mounts.clone(),
            }),
        }
    }
}

impl ServerInner {
    /// Whether it serves tools: its own, or a mounted server's.
    pub(crate) fn serves_tools(&self) -> bool {
        !self.registry.tools.items.is_empty() || self.mounts.offers.tools
    }

    /// Whether it serves resources or templates: its own, or a mounted server's.
    pub(crate) fn serves_resources(&self) -> bool {
        self.registry.has_resources() || self.mounts.offers.resources
    }

    /// Whether it serves prompts: its own, or a mounted server's.
    pub(crate) fn serves_prompts(&self) -> bool {
        !self.registry.prompts.items.is_empty() || self.mounts.offers.prompts
    }

    /// Whether it completes arguments: its own, or a mounted server's.
    pub(crate) fn serves_completions(&self) -> bool {
        self.registry.has_completions() || self.mounts.offers.completions
    }

    /// The scopes a request's target needs (`Registry::scopes_for`, `subscribe` as
    /// `Registry::scopes_covered`), a mounted server's included.
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn scopes_for(&self, lookup: &str, target: &str) -> Vec<&'static str> {
        let mut needed = match lookup {
            "subscribe" => self.registry.scopes_covered(&self.catalog, target),
            _ => self
                .registry
                .scopes_for(&self.catalog, lookup, target)
                .to_vec(),
        };
        if !self.mounts.is_empty() {
            for scope in self.mounts.scopes_for(lookup, target) {
                if !needed.contains(&scope) {
                    needed.push(scope);
                }
            }
        }
        needed
    }

    /// Every scope some primitive asks for, mounted servers' included.
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn all_scopes(&self) -> Vec<&'static str> {
        let mut all = self.registry.all_scopes();
        for scope in self.mounts.all_scopes() {
            if !all.contains(&scope) {
                all.push(scope);
            }
        }
        all
    }

    /// Who is asking: the verified principal's issuer and subject when the request carries
    /// one, else from the HTTP request's headers what `request_state_caller` returns, by
    /// default the `Authorization` header (its bytes, readable or not). It binds a
    /// 2026-07-28 `requestState`, an HTTP session and tasks to their caller.
    pub(crate) fn caller(
        &self,
        headers: Option<&http::HeaderMap>,
        principal: Option<&crate::auth::Principal>,
    ) -> Option<Vec<u8>> {
        if let Some(p) = principal {
            return Some(p.caller_key());
        }
        let headers = headers?;
        match &self.state_caller {
            Some(caller) => caller(headers).map(String::into_bytes),
            None => headers
                .get(http::header::AUTHORIZATION)
                .map(|v| v.as_bytes().to_vec()),
        }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.tool_names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
