//! Run with: `cargo run -p example-bridge -- serve --http 127.0.0.1:8000 -- npx -y
//! @modelcontextprotocol/server-everything` (a stdio server over Streamable HTTP), or
//! `cargo run -p example-bridge -- connect http://127.0.0.1:8000/mcp` (an HTTP server over
//! stdio, for clients that only launch commands), or `cargo run -p example-bridge -- gateway
//! --http 127.0.0.1:8000 mcp.json` (every server of an `mcpServers` file as one).
//!
//! A bridge is a [`Proxy`] served alone: the upstream's tools, resources, templates, prompts,
//! completion, progress, cancellation, subscriptions, change notifications and asks
//! (elicitation, sampling, roots, to the client whose call is waiting) pass through,
//! under the upstream's own `serverInfo` and `instructions`, in whichever protocol era each
//! side speaks (the upstream's is probed: 2026-07-28 when it serves it, the session era
//! otherwise). The HTTP side is this framework's Streamable HTTP transport with everything its
//! environment configures (`MCP_ALLOWED_HOSTS`/`MCP_ALLOWED_ORIGINS`, `MCP_AUTH_*`, CORS,
//! limits; see the README), and `--http 0.0.0.0:8000` listens beyond loopback.
//!
//! Upstream connections: an upstream that goes away (a server that exits, an HTTP server that
//! restarts) is connected to again on the next request, with a backoff between failed attempts.
//! A stateful upstream (a session-era server over stdio, or over HTTP with sessions) gets one
//! connection, for a command one process, per client session in front, each ended with its
//! session, at most 16 at once (`--max-upstream-sessions N`; past that, a new session takes the
//! place of the one idle the longest); `--upstream-sessions shared`
//! serves every client through one, `per-session` always opens one per session.
//!
//! Authorization (`connect`): when the remote server answers 401 (with its protected resource
//! metadata), the bridge runs the client's OAuth flow (`mcp_runtime::client::oauth`). By
//! default that is the authorization-code flow with a loopback redirect: the authorization URL
//! is printed on stderr (stdout carries the protocol) and opened in a browser (`xdg-open`, or
//! `open` on macOS); the tokens are kept in `$XDG_CONFIG_HOME/mcp-bridge/tokens.json`
//! (`~/.config/mcp-bridge/tokens.json`; mode 0600, one entry per server URL), so a client that
//! starts the bridge again does not log in again. `--client-credentials` uses the
//! client-credentials grant of a pre-registered client instead (no user); `--no-auth` sends no
//! token and fails on a 401. A server that asks for no authorization is never logged in to.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_runtime::client::oauth::{FileTokenStore, LoopbackRedirect, OAuthConfig};
use mcp_runtime::client::{
    Client, ClientBuilder, ClientError, ServerConfig, ServerTransport, ServersConfig,
};
use mcp_runtime::compose::{Proxy, UpstreamSessions};
use mcp_runtime::{Server, ServerBuilder, Transport};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
usage: mcp-bridge [UPSTREAM OPTIONS] serve --http ADDR -- COMMAND [ARGS...]
           serve a stdio MCP server (started with COMMAND) over Streamable HTTP at http://ADDR/mcp
       mcp-bridge connect URL [AUTHORIZATION OPTIONS] [--client-config]
           serve the MCP server at URL (Streamable HTTP) over stdio; with --client-config,
           print the mcpServers entry that runs this command (with its options) instead
       mcp-bridge gateway [--http ADDR] FILE
           serve every server of an mcpServers FILE as one, each under its name
           (tool `forecast` of server `weather` as `weather_forecast`), over stdio or HTTP
upstream options (before the command, or after it before `--`):
       --upstream-sessions auto|shared|per-session
           one upstream connection (process) per client session in front, or one shared;
           auto (the default): per session when the upstream keeps sessions (session era
           over stdio, or HTTP with Mcp-Session-Id)
       --max-upstream-sessions N
           the most upstream sessions open at once (default 16)
authorization options of connect (used when the server answers 401):
       (default) the OAuth authorization-code flow: the login URL is printed on stderr and
           opened in a browser; tokens are kept in $XDG_CONFIG_HOME/mcp-bridge/tokens.json
           (~/.config/mcp-bridge/tokens.json), so the next start needs no login
       --client-id ID, --client-secret SECRET
           a pre-registered client (else the bridge registers itself with the server)
       --client-credentials
           the client-credentials grant of --client-id/--client-secret (no user, no browser)
       --scope SCOPE
           the scopes to ask for (repeatable, or space-separated; default: the server's)
       --token-store FILE
           keep the tokens in FILE (created 0600)
       --no-browser
           only print the login URL
       --no-auth
           send no token: a server that asks for one is an error";

/// How the upstream connections are kept (the upstream options).
#[derive(Debug, Default, PartialEq)]
struct Upstream {
    sessions: Option<UpstreamSessions>,
    max_sessions: Option<usize>,
}

impl Upstream {
    fn apply(&self, mut proxy: Proxy) -> Proxy {
        if let Some(sessions) = self.sessions {
            proxy = proxy.upstream_sessions(sessions);
        }
        if let Some(max) = self.max_sessions {
            proxy = proxy.max_upstream_sessions(max);
        }
        proxy
    }
}

/// Takes the upstream options out of `args` (up to a `--`).
fn upstream_options(args: &mut Vec<String>) -> Result<Upstream, String> {
    let mut upstream = Upstream::default();
    let mut i = 0;
    while i < args.len() && args[i] != "--" {
        let flag = args[i].as_str();
        if flag != "--upstream-sessions" && flag != "--max-upstream-sessions" {
            i += 1;
            continue;
        }
        let value = args
            .get(i + 1)
            .filter(|v| *v != "--")
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value"))?;
        if flag == "--upstream-sessions" {
            upstream.sessions = Some(match value.as_str() {
                "auto" => UpstreamSessions::Auto,
                "shared" => UpstreamSessions::Shared,
                "per-session" => UpstreamSessions::PerSession,
                other => {
                    return Err(format!(
                        "--upstream-sessions: `{other}` is not auto, shared or per-session"
                    ));
                }
            });
        } else {
            upstream.max_sessions =
                Some(
                    value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--max-upstream-sessions: `{value}` is not a count")
                    })?,
                );
        }
        args.drain(i..i + 2);
    }
    Ok(upstream)
}

/// How `connect` authorizes with the remote server (its authorization options).
#[derive(Debug, Default, PartialEq)]
struct Authorization {
    /// `--no-auth`: no token, ever.
    none: bool,
    /// `--client-credentials`: the client-credentials grant, no user.
    client_credentials: bool,
    client_id: Option<String>,
    client_secret: Option<String>,
    scopes: Vec<String>,
    token_store: Option<PathBuf>,
    /// `--no-browser`: the login URL is printed only.
    no_browser: bool,
}

impl Authorization {
    /// Reads the options of `connect` (after `connect`): the URL, `--client-config`, and these.
    fn parse(args: &[String]) -> Result<(String, bool, Authorization), String> {
        let mut auth = Authorization::default();
        let (mut url, mut client_config) = (None, false);
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("connect: {arg} needs a value"))
            };
            match arg.as_str() {
                "--client-config" => client_config = true,
                "--no-auth" => auth.none = true,
                "--no-browser" => auth.no_browser = true,
                "--client-credentials" => auth.client_credentials = true,
                "--client-id" => auth.client_id = Some(value()?),
                "--client-secret" => auth.client_secret = Some(value()?),
                "--scope" => auth
                    .scopes
                    .extend(value()?.split_whitespace().map(str::to_owned)),
                "--token-store" => auth.token_store = Some(PathBuf::from(value()?)),
                flag if flag.starts_with("--") => {
                    return Err(format!("connect: unknown option {flag}"));
                }
                _ if url.is_some() => return Err("connect: give one URL".into()),
                _ => url = Some(arg.clone()),
            }
        }
        let url = url.ok_or("connect: give one URL")?;
        let given_any = auth.client_credentials
            || auth.client_id.is_some()
            || auth.client_secret.is_some()
            || !auth.scopes.is_empty()
            || auth.token_store.is_some()
            || auth.no_browser;
        if auth.none && given_any {
            return Err("connect: --no-auth takes no other authorization option".into());
        }
        if auth.client_credentials && (auth.client_id.is_none() || auth.client_secret.is_none()) {
            return Err(
                "connect: --client-credentials needs --client-id and --client-secret".into(),
            );
        }
        if auth.client_secret.is_some() && auth.client_id.is_none() {
            return Err("connect: --client-secret needs --client-id".into());
        }
        Ok((url, client_config, auth))
    }

    /// The options again, as command-line arguments (for `--client-config`).
    fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.none {
            args.push("--no-auth".to_owned());
        }
        if self.client_credentials {
            args.push("--client-credentials".to_owned());
        }
        for (flag, value) in [
            ("--client-id", &self.client_id),
            ("--client-secret", &self.client_secret),
        ] {
            if let Some(value) = value {
                args.extend([flag.to_owned(), value.clone()]);
            }
        }
        if !self.scopes.is_empty() {
            args.extend(["--scope".to_owned(), self.scopes.join(" ")]);
        }
        if let Some(path) = &self.token_store {
            // The client starts the bridge in a directory of its own.
            let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            args.extend(["--token-store".to_owned(), path.display().to_string()]);
        }
        if self.no_browser {
            args.push("--no-browser".to_owned());
        }
        args
    }

    /// The client's OAuth configuration (`None` with `--no-auth`), and whether a person may
    /// have to log in (then connecting may take as long as that).
    fn oauth(&self) -> Result<Option<(OAuthConfig, bool)>, Box<dyn std::error::Error>> {
        if self.none {
            return Ok(None);
        }
        let (mut config, interactive) = match (&self.client_id, &self.client_secret) {
            (Some(id), Some(secret)) if self.client_credentials => {
                (OAuthConfig::client_credentials(id, secret), false)
            }
            _ => {
                let no_browser = self.no_browser;
                let redirect = LoopbackRedirect::bind(move |url| login(url, no_browser))?;
                let mut config = OAuthConfig::authorization_code(redirect);
                if let Some(id) = &self.client_id {
                    config = config.client_id(id);
                }
                if let Some(secret) = &self.client_secret {
                    config = config.client_secret(secret);
                }
                (config, true)
            }
        };
        config = config.client_name("mcp-bridge");
        if !self.scopes.is_empty() {
            config = config.scopes(&self.scopes);
        }
        // A user's tokens are kept for the next start; a machine's (client credentials) only
        // when asked.
        let store = match &self.token_store {
            Some(path) => Some(path.clone()),
            None if interactive => default_token_store(),
            None => None,
        };
        if let Some(path) = store {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                private_dir(dir)?;
            }
            config = config.token_store(FileTokenStore::new(path));
        }
        Ok(Some((config, interactive)))
    }
}

/// `$XDG_CONFIG_HOME/mcp-bridge/tokens.json`, else `$HOME/.config/mcp-bridge/tokens.json`;
/// `None` (tokens in memory) without either.
fn default_token_store() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            let home = PathBuf::from(std::env::var_os("HOME")?);
            home.is_absolute().then(|| home.join(".config"))
        });
    if config.is_none() {
        eprintln!("mcp-bridge: no $XDG_CONFIG_HOME or $HOME: tokens are kept in memory only");
    }
    Some(config?.join("mcp-bridge").join("tokens.json"))
}

/// Makes `dir` (and its parents) when missing; a directory made here is its owner's only.
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// The login: the URL on stderr (stdout is the protocol), and in a browser when one opens.
fn login(url: &str, no_browser: bool) {
    eprintln!("mcp-bridge: the server asks for authorization; log in at: {url}");
    if no_browser {
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let child = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    // No browser is no error: the URL is on stderr. The opener is waited for (no zombie).
    if let Ok(mut child) = child {
        std::thread::spawn(move || child.wait());
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Bridge {
    /// A stdio server, served over HTTP.
    Serve { addr: String, command: Vec<String> },
    /// An HTTP server, served over stdio.
    Connect { url: String, auth: Authorization },
    /// The servers of an `mcpServers` file, mounted under their names.
    Gateway { addr: Option<String>, file: String },
    /// The `mcpServers` entry that runs `connect URL` (with its authorization options).
    ClientConfig { url: String, auth: Authorization },
}

/// The `mcpServers` entry a desktop client needs to run `mcp-bridge connect url` with `auth`,
/// named after the URL's host.
fn client_config(url: &str, auth: &Authorization) -> Result<String, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', ':', '?'])
        .next()
        .filter(|h| !h.is_empty())
        .unwrap_or("remote");
    let mut args = vec!["connect".to_owned(), url.to_owned()];
    args.extend(auth.args());
    let entry = serde_json::json!({
        "mcpServers": {
            host: {"command": exe, "args": args}
        }
    });
    Ok(serde_json::to_string_pretty(&entry)?)
}

fn parse(args: &[String]) -> Result<Bridge, String> {
    match args.first().map(String::as_str) {
        Some("serve") => {
            let split = args.iter().position(|a| a == "--");
            let (options, command) = match split {
                Some(i) => (&args[1..i], args[i + 1..].to_vec()),
                None => return Err("serve: give the server's command after `--`".into()),
            };
            let addr = match options {
                [flag, addr] if flag == "--http" => addr.clone(),
                _ => return Err("serve: give `--http ADDR` (e.g. 127.0.0.1:8000)".into()),
            };
            if command.is_empty() {
                return Err("serve: the server's command after `--` is empty".into());
            }
            Ok(Bridge::Serve { addr, command })
        }
        Some("connect") => {
            let (url, client_config, auth) = Authorization::parse(&args[1..])?;
            Ok(if client_config {
                Bridge::ClientConfig { url, auth }
            } else {
                Bridge::Connect { url, auth }
            })
        }
        Some("gateway") => match &args[1..] {
            [file] => Ok(Bridge::Gateway {
                addr: None,
                file: file.clone(),
            }),
            [flag, addr, file] if flag == "--http" => Ok(Bridge::Gateway {
                addr: Some(addr.clone()),
                file: file.clone(),
            }),
            _ => Err("gateway: give the mcpServers file (and `--http ADDR` before it)".into()),
        },
        Some("-h" | "--help") => Err(String::new()),
        _ => Err("give `serve` or `connect`".into()),
    }
}

/// A proxy to one server of an `mcpServers` file.
async fn proxy_to(
    server: &ServerConfig,
    client: ClientBuilder,
    upstream: &Upstream,
) -> Result<Proxy, ClientError> {
    if let Some(child) = server.transport.command() {
        return Ok(upstream.apply(Proxy::spawn(client, child).await?));
    }
    let client = server
        .transport
        .headers()
        .fold(client, |client, (name, value)| client.header(name, value));
    match &server.transport {
        ServerTransport::Http { url, .. } => Ok(upstream.apply(Proxy::connect(client, url).await?)),
        ServerTransport::Sse { url, .. } => {
            Ok(upstream.apply(Proxy::connect_sse(client, url).await?))
        }
        other => Err(ClientError::Protocol(format!(
            "unsupported transport {other:?}"
        ))),
    }
}

/// Every enabled server of `file`, each mounted under its name; a server that cannot be
/// reached is left out with a warning, as a host would.
async fn gateway(
    file: &str,
    client: ClientBuilder,
    upstream: &Upstream,
) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    let config = ServersConfig::read(file)?;
    let mut builder = Server::builder()
        .name("mcp-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .item_filter(|_| false);
    for server in config.enabled() {
        match proxy_to(server, client.clone(), upstream).await {
            Ok(proxy) => builder = builder.mount(&server.name, proxy),
            Err(e) => eprintln!("warning: leaving out {}: {e}", server.name),
        }
    }
    Ok(builder)
}

async fn run(bridge: Bridge, upstream: Upstream) -> Result<(), Box<dyn std::error::Error>> {
    // The upstream's asks (elicitation, sampling, roots) go to the client in front.
    let client = Client::builder().info("mcp-bridge", env!("CARGO_PKG_VERSION"));
    if let Bridge::ClientConfig { url, auth } = &bridge {
        println!("{}", client_config(url, auth)?);
        return Ok(());
    }
    if let Bridge::Gateway { addr, file } = bridge {
        let server = gateway(&file, client, &upstream)
            .await?
            .with_env()?
            .build()?;
        let transport = addr.map_or(Transport::Stdio, Transport::http);
        server.serve(transport).await?;
        return Ok(());
    }
    let (proxy, transport) = match bridge {
        Bridge::Serve { addr, command } => {
            let mut server = tokio::process::Command::new(&command[0]);
            server.args(&command[1..]);
            (Proxy::spawn(client, server).await?, Transport::http(addr))
        }
        Bridge::Connect { url, auth } => {
            let no_auth = auth.none;
            let client = match auth.oauth()? {
                // A person logging in takes longer than a connection: as long as the loopback
                // redirect waits (5 minutes), and a little more.
                Some((config, true)) => client
                    .oauth(config)
                    .connect_timeout(Duration::from_secs(330)),
                Some((config, false)) => client.oauth(config),
                None => client,
            };
            let proxy = Proxy::connect(client, &url).await.map_err(|e| match e {
                ClientError::Status { status: 401, .. } if no_auth => format!(
                    "{url} asks for authorization (HTTP 401) and --no-auth was given: \
                     leave it out to log in, or give --client-credentials"
                )
                .into(),
                e => Box::<dyn std::error::Error>::from(format!("connecting to {url}: {e}")),
            })?;
            (proxy, Transport::Stdio)
        }
        Bridge::Gateway { .. } | Bridge::ClientConfig { .. } => unreachable!("done above"),
    };
    let server = upstream.apply(proxy).server().with_env()?.build()?;
    server.serve(transport).await?;
    Ok(())
}

// `pub(crate)`: integration/benches/hop runs this same bridge, compiled in (it re-executes itself).
pub(crate) fn main() -> ExitCode {
    mcp_runtime::init_logging();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let bridge =
        match upstream_options(&mut args).and_then(|upstream| Ok((parse(&args)?, upstream))) {
            Ok(bridge) => bridge,
            Err(why) if why.is_empty() => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            Err(why) => {
                eprintln!("error: {why}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (bridge, upstream) = bridge;
    match runtime.block_on(run(bridge, upstream)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
