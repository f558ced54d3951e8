//! [`ServerBuilder`]: identity, tool selection and limits.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use super::capabilities::Declared;
use super::{CacheScope, Limits, Server, ServerInner};
use crate::protocol::Implementation;
use crate::registry::{BuildError, ItemInfo, Registry, ToolInfo};
use crate::request_state::seal::Sealer;

type ToolFilter = Box<dyn Fn(&ToolInfo) -> bool + Send + Sync>;
type ItemFilter = Box<dyn Fn(&ItemInfo) -> bool + Send + Sync>;

/// Configures a [`Server`]. [`run!`](crate::run) uses it with the package's name and version.
///
/// Every setting is a by-value method named after the setting, with no prefix
/// (`.max_message_bytes(n)`, as tokio's, hyper's and reqwest's builders do); a setting here
/// holds on every transport (stdio and HTTP both honour
/// [`max_message_bytes`](Self::max_message_bytes) and [`shutdown_grace`](Self::shutdown_grace)),
/// while one that only a transport has lives on that transport's config (`HttpConfig`);
/// [`with_env`](Self::with_env) reads the `MCP_*` variables over them.
///
/// ```standalone_crate
/// let server = mcp_runtime::Server::builder()
///     .name("weather")
///     .version("1.2.0")
///     .instructions("Ask for forecasts by city name.")
///     .tool_filter(|tool| !tool.name.starts_with("debug_"))
///     .build()
///     .expect("valid registrations");
/// assert_eq!(server.info().name, "weather");
/// ```
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    filter: ToolFilter,
    items: ItemFilter,
    mounts: Vec<(String, super::mount::Mounted)>,
    mount_separator: String,
    limits: Limits,
    states: crate::request::StateMap,
    state_keys: Option<Vec<Vec<u8>>>,
    state_audience: Option<String>,
    state_guard: Option<Arc<dyn crate::request_state::RequestStateGuard>>,
    state_ttl: Duration,
    state_caller: Option<super::StateCaller>,
    catalog: Option<crate::catalog::Catalog>,
    change_bus: Option<Arc<dyn crate::catalog::ChangeBus>>,
    task_store: Option<Arc<dyn crate::task::TaskStore>>,
    tasks: crate::task::TaskConfig,
    skills_dir: Option<std::path::PathBuf>,
    middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
    extensions: Vec<(String, serde_json::Value)>,
    card_name: Option<String>,
    repository: Option<String>,
}

impl ServerBuilder {
    pub(crate) fn new() -> Self {
        ServerBuilder {
            info: Implementation {
                name: "mcp-server".into(),
                version: "0.0.0".into(),
                title: None,
                description: None,
                website_url: None,
                icons: Vec::new(),
            },
            instructions: None,
            filter: Box::new(|_| true),
            items: Box::new(|_| true),
            mounts: Vec::new(),
            mount_separator: "_".into(),
            limits: Limits::default(),
            states: Default::default(),
            state_keys: None,
            state_audience: None,
            state_guard: None,
            state_ttl: Duration::from_secs(600),
            state_caller: None,
            catalog: None,
            change_bus: None,
            task_store: None,
            tasks: Default::default(),
            skills_dir: None,
            middleware: Vec::new(),
            extensions: Vec::new(),
            card_name: None,
            repository: None,
        }
    }

    /// The whole `serverInfo` (a proxy takes its upstream's).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// The server's programmatic name (`serverInfo.name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// The server's version (`serverInfo.version`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// A display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// A description of the server (`serverInfo.description`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// A home page (`serverInfo.websiteUrl`).
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// The source repository's URL (`https://github.com/acme/weather`): the server card's
    /// `repository`, and, on GitHub, its name's namespace (`io.github.acme`) unless
    /// [`card_name`](Self::card_name) is set. `run!()` sets it from Cargo's `repository`.
    pub fn repository(mut self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.repository = (!url.trim().is_empty()).then_some(url);
        self
    }

    /// The server card's name (SEP-2127), reverse-DNS: `com.example/weather`. Default: derived
    /// from the [`repository`](Self::repository) (`io.github.<owner>/<name>`) or the
    /// [`website_url`](Self::website_url)'s host (`com.example/<name>`), with the server's
    /// `name`; without either the server has no card. A name that is not `namespace/name` of
    /// letters, digits, `.`, `-` (and `_` after the `/`) fails the
    /// [`build`](Self::build) with [`BuildError::InvalidCardName`](crate::BuildError::InvalidCardName).
    pub fn card_name(mut self, name: impl Into<String>) -> Self {
        self.card_name = Some(name.into());
        self
    }

    /// Instructions for the model on how to use this server.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Registers shared state, injected into handlers that take a [`State<T>`](crate::State)
    /// parameter. One value per type.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// How long a request may run before it is cancelled and answered with an error (default:
    /// no limit). A tool that must run longer can still finish what it started only if it
    /// ignores `ctx.cancelled()`: its result is not sent.
    pub fn request_timeout(mut self, limit: Duration) -> Self {
        self.limits.request_timeout = Some(limit);
        self
    }

    /// How long a session-era client may take to answer an ask (`ctx.elicit`, `ctx.sample`,
    /// `ctx.roots`) before it fails with an error (default 5 minutes: a person may be typing).
    pub fn client_request_timeout(mut self, limit: Duration) -> Self {
        self.limits.client_request_timeout = limit;
        self
    }

    /// The key that protects 2026-07-28 `requestState` (HMAC-SHA-256; at least 32 random
    /// bytes): [`request_state_keys`](Self::request_state_keys) with one key.
    pub fn request_state_key(self, key: impl AsRef<[u8]>) -> Self {
        self.request_state_keys([key])
    }

    /// The key ring that protects 2026-07-28 `requestState` (HMAC-SHA-256): the first key
    /// seals, every key opens. Each key must be at least 32 random bytes, and the ring not
    /// empty ([`build`](Self::build) fails otherwise). Replaces any ring set before;
    /// [`run!`](crate::run) takes the ring from `MCP_REQUEST_STATE_KEYS` too (comma-separated
    /// hex), which then wins.
    ///
    /// By default each process draws a random key, so a retry must reach the process that
    /// issued the state: every instance behind a load balancer must hold the same ring (an HTTP
    /// server on an address other than loopback warns at start-up when it has none). Each
    /// state names its key by an id derived from the key, so instances agree on ids without
    /// configuration. To rotate in rolling restarts, go from `[old]` to `[old, new]` on every
    /// instance (each can open what the others will seal), then to `[new, old]`, then to
    /// `[new]` once the states sealed with `old` have expired
    /// ([`request_state_ttl`](Self::request_state_ttl)). Going straight to `[new, old]` would
    /// have the restarted instances seal states that the others cannot open yet. A state
    /// sealed with a key no longer held is refused with -32602, and the client starts the
    /// request again.
    ///
    /// ```standalone_crate
    /// let (new, old) = ([7u8; 32], [9u8; 32]); // read them from your secret store
    /// let server = mcp_runtime::Server::builder()
    ///     .name("weather")
    ///     .request_state_keys([new, old])
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// let err = mcp_runtime::Server::builder()
    ///     .request_state_keys([&new[..], b"short"])
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("at least 32"), "{err}");
    /// ```
    pub fn request_state_keys<K: AsRef<[u8]>>(mut self, keys: impl IntoIterator<Item = K>) -> Self {
        self.state_keys = Some(keys.into_iter().map(|k| k.as_ref().to_vec()).collect());
        self
    }

    /// Who 2026-07-28 `requestState` is for: a state is refused (-32602) by a server with
    /// another audience, even one holding the same keys. Default: the server's
    /// [`name`](Self::name), the same on every instance of a fleet (never an instance or host
    /// name, which would break rounds that land on another instance). Set it when fleets share
    /// keys but must not accept each other's states, or when instances of one fleet have
    /// different names. [`run!`](crate::run) reads `MCP_REQUEST_STATE_AUDIENCE` too.
    pub fn request_state_audience(mut self, audience: impl Into<String>) -> Self {
        self.state_audience = Some(audience.into());
        self
    }

    /// Makes every 2026-07-28 `requestState` single-use: each state carries a random nonce,
    /// and `guard` records it before the retry that carries it runs. A state presented again
    /// is refused (-32602); if the guard fails or does not answer within 5 s the request fails
    /// (-32603) rather than run unchecked. The price is one guard lookup per retry and a retry
    /// that cannot be repeated (a client whose response was lost starts the request again).
    ///
    /// Without a guard (the default) a state may be presented again until it expires, and no
    /// request touches a store. [`MemoryStateGuard`](crate::request_state::MemoryStateGuard) serves one
    /// instance; a fleet needs a shared one, such as `mcp_redis::RedisStateGuard`.
    pub fn request_state_guard(
        mut self,
        guard: impl crate::request_state::RequestStateGuard,
    ) -> Self {
        self.state_guard = Some(Arc::new(guard));
        self
    }

    /// Serves what `catalog` enables, and announces changes through it: pass
    /// [`mcp_runtime::catalog()`](crate::catalog()) to share the process-wide handle, as
    /// [`run!`](crate::run) does. By default the server has a handle of its own.
    pub fn catalog(mut self, catalog: crate::catalog::Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// The 0.1 name of [`catalog`](Self::catalog).
    #[doc(hidden)]
    #[deprecated(note = "renamed to `catalog`")]
    pub fn changes(self, catalog: crate::catalog::Catalog) -> Self {
        self.catalog(catalog)
    }

    /// Carries changes between the instances of a fleet through `bus` (for instance
    /// `mcp_redis::RedisChangeBus`): a tools list change announced on one instance reaches
    /// the `subscriptions/listen` streams and session-era clients of every instance. Attached
    /// to the server's [`Catalog`](crate::catalog::Catalog) handle at [`build`](Self::build), which fails
    /// with [`BuildError::ChangeBusAttached`] if that handle has one already.
    pub fn change_bus(mut self, bus: impl crate::catalog::ChangeBus) -> Self {
        self.change_bus = Some(Arc::new(bus));
        self
    }

    /// Who the caller of an HTTP request is, from its headers. A 2026-07-28 `requestState`
    /// and a session (`Mcp-Session-Id`, an HTTP+SSE `sessionId`) are bound to the caller that
    /// got them, so another caller cannot replay the state or use the session (it is 404 to
    /// them, as an unknown one). By default: the `Authorization` header as sent, which breaks a
    /// multi-round call or a session if the token changes (a refresh); return a stable
    /// identity instead (the token's subject), or `None` to bind to nobody.
    pub fn request_state_caller(
        mut self,
        caller: impl Fn(&http::HeaderMap) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.state_caller = Some(Arc::new(caller));
        self
    }

    /// How long an issued `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Serves only the registered tools `keep` returns `true` for.
    pub fn tool_filter(mut self, keep: impl Fn(&ToolInfo) -> bool + Send + Sync + 'static) -> Self {
        self.filter = Box::new(keep);
        self
    }

    /// Serves only the registered tools, resources, resource templates and prompts `keep`
    /// returns `true` for (tools must pass [`tool_filter`](Self::tool_filter) too).
    ///
    /// Every `#[tool]`, `#[resource]` and `#[prompt]` of the program is registered in one
    /// place; this is how one program builds several servers from its items, each from its
    /// own files or names, to serve apart or to [`mount`](Self::mount) into one:
    ///
    /// ```standalone_crate
    /// use mcp_runtime::Server;
    /// // Everything defined in a `weather` module (its file), and everything else.
    /// let weather = Server::builder()
    ///     .name("weather")
    ///     .item_filter(|item| item.location.0.contains("weather"))
    ///     .build()?;
    /// let main = Server::builder()
    ///     .item_filter(|item| !item.location.0.contains("weather"))
    ///     .mount("weather", weather)
    ///     .build()?;
    /// # drop(main);
    /// # Ok::<(), mcp_runtime::BuildError>(())
    /// ```
    pub fn item_filter(mut self, keep: impl Fn(&ItemInfo) -> bool + Send + Sync + 'static) -> Self {
        self.items = Box::new(keep);
        self
    }

    /// Serves `server`'s tools, resources, templates and prompts as this server's, under
    /// `prefix`: a tool or prompt `forecast` as `weather_forecast` (see
    /// [`mount_separator`](Self::mount_separator)), a resource `weather://current` as
    /// `weather://weather/current` (the prefix becomes the URI's first segment, its scheme
    /// stays), as FastMCP's `mount` names them.
    ///
    /// The mounted server runs in this process with no serialization between the two: a
    /// request for one of its items is handed to its own dispatcher with the prefix
    /// stripped, so its middleware, scopes, enable/disable (its own
    /// [`Catalog`](crate::catalog::Catalog)), completion, asks, progress and cancellation work
    /// as when it is served alone, in both protocol eras. Its list changes and resource
    /// updates reach this server's clients under the mounted names. This server's own items
    /// come first when a name is both; mounts are tried in the order they were added.
    ///
    /// A prefix that is empty, holds characters a tool name cannot have, or is mounted twice
    /// fails the [`build`](Self::build) with [`BuildError::InvalidMount`].
    ///
    /// Not served through a mount (yet): a mounted server's skills and task-augmented calls.
    pub fn mount(
        mut self,
        prefix: impl Into<String>,
        server: impl Into<super::mount::Mounted>,
    ) -> Self {
        self.mounts.push((prefix.into(), server.into()));
        self
    }

    /// What joins a [`mount`](Self::mount) prefix and the name of a mounted tool or prompt
    /// (default `_`: `weather_forecast`). It must be characters a tool name may hold
    /// (`A-Z a-z 0-9 _ - .`).
    pub fn mount_separator(mut self, separator: impl Into<String>) -> Self {
        self.mount_separator = separator.into();
        self
    }

    /// Items per page of `tools/list` (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.limits.page_size = n.max(1);
        self
    }

    /// How long 2026-07-28 clients may cache discovery and the lists of tools, resource
    /// templates and prompts (`ttlMs`; default 60 s). These change only with the program.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.limits.cache_ttl = ttl;
        self
    }

    /// How long 2026-07-28 clients may cache resource data: `resources/read` and
    /// `resources/list` (`ttlMs`; default 0, so a client always sees current data). Raise it
    /// when your resources change rarely.
    pub fn resource_cache_ttl(mut self, ttl: Duration) -> Self {
        self.limits.resource_cache_ttl = ttl;
        self
    }

    /// Who may reuse cached results (2026-07-28 `cacheScope`; default [`CacheScope::Private`]).
    pub fn cache_scope(mut self, scope: CacheScope) -> Self {
        self.limits.cache_scope = scope;
        self
    }

    /// Requests one connection may have running at once (default 1024); more are refused with
    /// an error rather than queued without bound.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.limits.max_in_flight = n.max(1);
        self
    }

    /// `subscriptions/listen` streams one connection may have open at once (default 1024; on
    /// HTTP all 2026-07-28 clients share one count). They do not count as requests in flight.
    pub fn max_listens(mut self, n: usize) -> Self {
        self.limits.max_listens = n.max(1);
        self
    }

    /// Resources one session may subscribe to (default 1024); more are refused with -32602.
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.limits.max_subscriptions = n.max(1);
        self
    }

    /// The largest message accepted, in bytes (default 4 MiB, at least 1 KiB), on every
    /// transport: on stdio a longer line is dropped and answered with -32600; over HTTP a
    /// larger request body gets 413 (a batch is one message, one body).
    pub fn max_message_bytes(mut self, n: usize) -> Self {
        self.limits.max_message_bytes = n.max(1024);
        self
    }

    /// How long running requests may finish once the server stops (default 5 s), on every
    /// transport: on stdio after stdin closes or a SIGINT/SIGTERM, after which what still runs
    /// is cancelled; over HTTP (`serve_http`) after the listener closes, which follows the
    /// drain delay (`HttpConfig::drain_delay`), after which connections still open are closed.
    /// An `McpService` mounted in an app leaves this wait to its host.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.limits.shutdown_grace = grace;
        self
    }

    /// Where [task](crate::task) records are kept (default: a [`MemoryTaskStore`] in this
    /// process).
    ///
    /// [`MemoryTaskStore`]: crate::task::MemoryTaskStore
    pub fn task_store(mut self, store: impl crate::task::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// How long a task is kept from its creation when its client asks for no TTL (default 1
    /// hour), and the longest TTL a client may ask for (default 24 hours). After its TTL a task
    /// is removed, and cancelled if it still runs.
    pub fn task_ttl(mut self, default: Duration, max: Duration) -> Self {
        self.tasks.max_ttl = max.max(Duration::from_secs(1));
        self.tasks.default_ttl = default.clamp(Duration::from_secs(1), self.tasks.max_ttl);
        self
    }

    /// The poll interval suggested to task clients (default 500 ms).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.tasks.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long the instance running a task may go without renewing its lease on it (default
    /// 30 s; at least 300 ms). It renews every third of this while the work runs. With a task
    /// store shared by several instances, a task whose instance stopped (killed, crashed) ends
    /// `failed` ("The instance running this task stopped") once its lease lapses, and a
    /// `tasks/cancel` made through another instance stops the work within a third of it.
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.tasks.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// At most `per_client` task records per client (default 64) and `total` in all (default
    /// 10,000), finished or not: a finished task is kept until its TTL for its client to read.
    /// A client is its verified principal, else its address, across all of its sessions (on
    /// stdio, its session); behind a reverse proxy every client has the proxy's address, so
    /// raise `per_client` there or verify tokens. Before a call is refused (-32603 "too many
    /// tasks"), finished records make room, the one that finished first going first: the
    /// client's own at `per_client`, anyone's at `total`; only unfinished tasks are never
    /// removed. A session's finished tasks are removed when it ends (`DELETE`, or idle expiry
    /// without a shared session store). See [`StoreLimits`](crate::task::StoreLimits).
    pub fn max_tasks(mut self, per_client: usize, total: usize) -> Self {
        self.tasks.limits = crate::task::StoreLimits {
            max_per_owner: per_client.max(1),
            max_total: total.max(1),
        };
        self
    }

    /// Serves the agent skills in `dir` (the `io.modelcontextprotocol/skills` extension,
    /// SEP-2640): each folder holding a `SKILL.md` is a skill named after the folder, and its
    /// files are resources under `skill://<folder path>/<file path>`, listed by `skills/list`,
    /// described by `skills/get`, read with `resources/read` and browsed with
    /// `resources/directory/read`.
    ///
    /// The directory is scanned once, by [`build`](Self::build): an invalid skill (a `name`
    /// that breaks the naming rules or differs from its folder, no frontmatter, more than 512
    /// files or 16 MiB, a link leading outside `dir`) fails the build with
    /// [`BuildError::InvalidSkill`]. A file edited after that is refused on read (its digest no
    /// longer matches the listing) until the server restarts. [`run!`](crate::run) reads the
    /// directory from `--skills-dir DIR` or `MCP_SKILLS_DIR` too. Needs the `skills` feature
    /// (the frontmatter is YAML); without it the build fails with an `InvalidSkill` that names
    /// the feature.
    ///
    /// ```standalone_crate
    /// # #[cfg(feature = "skills")] {
    /// let dir = std::env::temp_dir().join(format!("skills-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(dir.join("git-workflow")).unwrap();
    /// std::fs::write(
    ///     dir.join("git-workflow/SKILL.md"),
    ///     "---\nname: git-workflow\ndescription: Follow our Git conventions\n---\n# Git\n",
    /// )
    /// .unwrap();
    /// let server = mcp_runtime::Server::builder().skills_dir(&dir).build().unwrap();
    /// # drop(server);
    /// std::fs::write(dir.join("git-workflow/SKILL.md"), "---\nname: Git\n---\n").unwrap();
    /// let err = mcp_runtime::Server::builder().skills_dir(&dir).build().unwrap_err();
    /// assert!(err.to_string().contains("naming rules"), "{err}");
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # }
    /// ```
    pub fn skills_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.skills_dir = Some(dir.into());
        self
    }

    /// Declares an extension (SEP-2133) this server supports: `id` (`{vendor-prefix}/{name}`,
    /// e.g. `io.modelcontextprotocol/ui` or `com.example/search`) with its settings object
    /// (`{}` for none), under `capabilities.extensions` in the `initialize` result (every
    /// session-era version, 2025-11-25 clients included) and in `server/discover`. Declaring
    /// the same id again replaces its settings.
    ///
    /// Extensions are off unless declared: the declaration is the opt-in. The framework
    /// declares the extensions it implements itself (tasks when a tool is a task, skills with
    /// [`skills_dir`](Self::skills_dir), MCP Apps when an [app](crate::apps) is registered);
    /// its settings for those win. What the client declared
    /// is [`Context::client_extension`](crate::Context::client_extension). An `id` without a
    /// prefix and a name, or settings that are not a JSON object, fail the
    /// [`build`](Self::build) with [`BuildError::InvalidExtension`](crate::BuildError::InvalidExtension).
    ///
    /// ```standalone_crate
    /// use serde_json::json;
    /// let server = mcp_runtime::Server::builder()
    ///     .extension("com.example/search", json!({"maxResults": 50}))
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        let id = id.into();
        match self.extensions.iter_mut().find(|(known, _)| *known == id) {
            Some((_, old)) => *old = settings,
            None => self.extensions.push((id, settings)),
        }
        self
    }

    /// [`extension`](Self::extension) for each `(id, settings)` pair, in order; one argument, so
    /// `run!(extensions = [...])` can declare them.
    ///
    /// ```standalone_crate
    /// use serde_json::json;
    /// let server = mcp_runtime::Server::builder()
    ///     .extensions([("com.example/search", json!({})), ("com.example/export", json!({}))])
    ///     .build()
    ///     .unwrap();
    /// # drop(server);
    /// ```
    pub fn extensions<I, S>(self, extensions: I) -> Self
    where
        I: IntoIterator<Item = (S, serde_json::Value)>,
        S: Into<String>,
    {
        extensions
            .into_iter()
            .fold(self, |builder, (id, settings)| {
                builder.extension(id, settings)
            })
    }

    /// Adds a [middleware](crate::middleware) layer around every request; the first added is
    /// the outermost.
    pub fn middleware(mut self, layer: impl crate::middleware::Middleware) -> Self {
        self.middleware.push(Arc::new(layer));
        self
    }

    /// Applies what the environment configures of a server, over what the code set:
    /// `MCP_REQUEST_STATE_KEYS` (comma-separated hex keys, each at least 64 hex digits; the
    /// first seals 2026-07-28 `requestState`, all open it: see
    /// [`request_state_keys`](Self::request_state_keys)), `MCP_REQUEST_STATE_AUDIENCE` (the
    /// fleet's name in it, see [`request_state_audience`](Self::request_state_audience)) and
    /// `MCP_SERVER_CARD_NAME` ([`card_name`](Self::card_name)).
    ///
    /// `run!()` calls this; a program with its own `main` calls it before
    /// [`build`](Self::build):
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let server = mcp_runtime::Server::builder().with_env()?.build()?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// A variable that is set but unusable (not hex, too short a key, empty), with a message
    /// that names the variable and never echoes a key.
    pub fn with_env(self) -> std::io::Result<Self> {
        let mut builder = request_state_from_env(
            self,
            std::env::var_os("MCP_REQUEST_STATE_KEYS"),
            std::env::var_os("MCP_REQUEST_STATE_AUDIENCE"),
        )
        .map_err(crate::env::invalid)?;
        if let Some(name) = crate::env::var("MCP_SERVER_CARD_NAME")? {
            let name = name.trim();
            if let Some(why) = super::card::name_problem(name) {
                return Err(crate::env::invalid(format!("MCP_SERVER_CARD_NAME: {why}")));
            }
            builder = builder.card_name(name);
        }
        Ok(builder)
    }

    /// Collects the registered tools and checks them (duplicate or invalid names are errors).
    pub fn build(self) -> Result<Server, BuildError> {
        if let Some(keys) = &self.state_keys {
            if keys.is_empty() {
                return Err(BuildError::NoRequestStateKeys);
            }
            if let Some((index, key)) = keys.iter().enumerate().find(|(_, k)| k.len() < 32) {
                return Err(BuildError::WeakRequestStateKey {
                    index,
                    len: key.len(),
                });
            }
        }
        if self.state_audience.as_ref().is_some_and(|a| a.is_empty()) {
            return Err(BuildError::EmptyRequestStateAudience);
        }
        for (id, settings) in &self.extensions {
            if let Some(reason) = super::capabilities::extension_problem(id, settings) {
                return Err(BuildError::InvalidExtension {
                    id: id.clone(),
                    reason,
                });
            }
        }
        if let Some(reason) = self
            .card_name
            .as_deref()
            .and_then(super::card::name_problem)
        {
            return Err(BuildError::InvalidCardName { reason });
        }
        let info_raw = serde_json::value::to_raw_value(&self.info).expect("serverInfo serializes");
        let mounts = super::mount::build(self.mounts, &self.mount_separator, &info_raw)?;
        let registry = Registry::collect(&*self.filter, &*self.items)?;
        let skills = match &self.skills_dir {
            Some(dir) => Some(Arc::new(crate::skills::SkillCatalog::scan(dir)?)),
            None => None,
        };
        let Declared {
            capabilities,
            stateless_capabilities,
            tasks_capabilities,
        } = Declared::of(&registry, mounts.offers, skills.is_some(), &self.extensions);
        let store = self
            .task_store
            .unwrap_or_else(|| Arc::new(crate::task::MemoryTaskStore::new()));
        // The audience defaults to the server's name: the same on every instance of a fleet.
        let audience = self
            .state_audience
            .unwrap_or_else(|| self.info.name.clone());
        let sealer = match &self.state_keys {
            Some(keys) => Sealer::new(keys, audience, self.state_ttl, self.state_guard),
            None => Sealer::random(audience, self.state_ttl, self.state_guard),
        };
        // Last: a build that fails leaves the handle without the bus.
        let catalog = self.catalog.unwrap_or_default();
        if let Some(bus) = self.change_bus {
            catalog
                .attach_shared_bus(bus)
                .map_err(|_| BuildError::ChangeBusAttached)?;
        }
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                info_raw,
                instructions: self.instructions,
                registry: Arc::new(registry),
                capabilities,
                stateless_capabilities,
                tasks_capabilities,
                tasks: crate::task::Tasks::new(
                    store,
                    self.tasks,
                    Some(crate::server::tasks::announcer(catalog.clone())),
                ),
                middleware: self.middleware.into(),
                limits: self.limits,
                states: Arc::new(self.states),
                catalog,
                state_caller: self.state_caller,
                forwarder: Default::default(),
                sealer: Arc::new(sealer),
                skills,
                card_name: self.card_name,
                repository: self.repository,
                mounts: Arc::new(mounts),
            }),
        })
    }
}

/// `MCP_REQUEST_STATE_KEYS` and `MCP_REQUEST_STATE_AUDIENCE`, when set, configure the
/// `requestState` key ring and audience. A value that is set but unusable is an error naming
/// the variable: falling back to a random key would break every multi-round request that
/// crosses instances, with nothing in the logs to say why.
fn request_state_from_env(
    mut builder: ServerBuilder,
    keys: Option<OsString>,
    audience: Option<OsString>,
) -> Result<ServerBuilder, String> {
    if let Some(raw) = keys {
        let raw = raw
            .to_str()
            .ok_or("MCP_REQUEST_STATE_KEYS: not valid UTF-8 (use comma-separated hex keys)")?;
        let keys = parse_state_keys(raw).map_err(|e| format!("MCP_REQUEST_STATE_KEYS: {e}"))?;
        builder = builder.request_state_keys(keys);
    }
    if let Some(raw) = audience {
        let audience = raw
            .to_str()
            .map(str::trim)
            .ok_or("MCP_REQUEST_STATE_AUDIENCE: not valid UTF-8")?;
        if audience.is_empty() {
            return Err("MCP_REQUEST_STATE_AUDIENCE: set but empty (name the fleet, or unset it for the server's name)".into());
        }
        builder = builder.request_state_audience(audience);
    }
    Ok(builder)
}

/// `MCP_REQUEST_STATE_KEYS`: comma-separated keys, each at least 64 hex digits (32 bytes), the
/// first sealing. Errors say which key is wrong and how, never what it is (keys are secret).
fn parse_state_keys(raw: &str) -> Result<Vec<Vec<u8>>, String> {
    let entries: Vec<&str> = raw.split(',').map(str::trim).collect();
    if entries.iter().all(|e| e.is_empty()) {
        return Err("set but empty (give comma-separated hex keys, or unset it)".into());
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, hex)| {
            let n = i + 1;
            if hex.is_empty() {
                return Err(format!("key {n} is empty (a stray comma?)"));
            }
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("key {n} is not hexadecimal"));
            }
            if hex.len() < 64 {
                return Err(format!(
                    "key {n} has {} hex digits; each key needs at least 64 (32 random bytes, e.g. from `openssl rand -hex 32`)",
                    hex.len()
                ));
            }
            base16ct::mixed::decode_vec(hex)
                .map_err(|_| format!("key {n} has an odd number of hex digits"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::Server;

    #[test]
    fn request_state_keys_from_the_environment_are_checked() {
        let k1 = "00".repeat(32);
        let k2 = "Ab".repeat(40);
        assert_eq!(
            parse_state_keys(&format!(" {k1} ,{k2}")).unwrap(),
            [vec![0u8; 32], vec![0xab; 40]]
        );
        let secret = "5e".repeat(31);
        for (raw, says) in [
            (String::new(), "set but empty"),
            (" , ".to_owned(), "set but empty"),
            (format!("{k1},,{k2}"), "key 2 is empty"),
            (
                format!("{k1},{secret}"),
                "key 2 has 62 hex digits; each key needs at least 64",
            ),
            (format!("{}g", "0".repeat(64)), "key 1 is not hexadecimal"),
            (format!("0x{}", "0".repeat(64)), "key 1 is not hexadecimal"),
            ("0".repeat(65), "key 1 has an odd number of hex digits"),
        ] {
            let e = parse_state_keys(&raw).unwrap_err();
            assert!(e.contains(says), "{raw:?}: {e}");
            assert!(!e.contains(&secret), "an error must not echo a key: {e}");
        }
    }

    #[test]
    fn request_state_settings_name_their_variable() {
        let env = |keys: Option<&str>, audience: Option<&str>| {
            request_state_from_env(
                Server::builder(),
                keys.map(OsString::from),
                audience.map(OsString::from),
            )
            .map(|b| b.build())
        };
        let ok = "11".repeat(32);
        assert!(matches!(env(None, None), Ok(Ok(_))));
        assert!(matches!(env(Some(&ok), Some("fleet")), Ok(Ok(_))));
        let e = env(Some("abc"), None).err().unwrap();
        assert!(e.starts_with("MCP_REQUEST_STATE_KEYS: "), "{e}");
        let e = env(Some(&ok), Some("  ")).err().unwrap();
        assert!(e.starts_with("MCP_REQUEST_STATE_AUDIENCE: "), "{e}");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt as _;
            let bad = OsString::from_vec(vec![0xff; 64]);
            let e = request_state_from_env(Server::builder(), Some(bad), None)
                .err()
                .unwrap();
            assert!(e.starts_with("MCP_REQUEST_STATE_KEYS: "), "{e}");
        }
    }
}
