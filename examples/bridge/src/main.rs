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

use std::process::ExitCode;

use mcp_runtime::client::{
    Client, ClientBuilder, ClientError, ServerConfig, ServerTransport, ServersConfig,
};
use mcp_runtime::compose::{Proxy, UpstreamSessions};
use mcp_runtime::{Server, ServerBuilder, Transport};

const USAGE: &str = "\
usage: mcp-bridge [UPSTREAM OPTIONS] serve --http ADDR -- COMMAND [ARGS...]
           serve a stdio MCP server (started with COMMAND) over Streamable HTTP at http://ADDR/mcp
       mcp-bridge connect URL [--client-config]
           serve the MCP server at URL (Streamable HTTP) over stdio; with --client-config,
           print the mcpServers entry that runs this command instead
       mcp-bridge gateway [--http ADDR] FILE
           serve every server of an mcpServers FILE as one, each under its name
           (tool `forecast` of server `weather` as `weather_forecast`), over stdio or HTTP
upstream options (before the command, or after it before `--`):
       --upstream-sessions auto|shared|per-session
           one upstream connection (process) per client session in front, or one shared;
           auto (the default): per session when the upstream keeps sessions (session era
           over stdio, or HTTP with Mcp-Session-Id)
       --max-upstream-sessions N
           the most upstream sessions open at once (default 16)";

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

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Bridge {
    /// A stdio server, served over HTTP.
    Serve { addr: String, command: Vec<String> },
    /// An HTTP server, served over stdio.
    Connect { url: String },
    /// The servers of an `mcpServers` file, mounted under their names.
    Gateway { addr: Option<String>, file: String },
    /// The `mcpServers` entry that runs `connect URL`.
    ClientConfig { url: String },
}

/// The `mcpServers` entry a desktop client needs to run `mcp-bridge connect url`, named after
/// the URL's host.
fn client_config(url: &str) -> Result<String, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', ':', '?'])
        .next()
        .filter(|h| !h.is_empty())
        .unwrap_or("remote");
    let entry = serde_json::json!({
        "mcpServers": {
            host: {"command": exe, "args": ["connect", url]}
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
        Some("connect") => match &args[1..] {
            [url] => Ok(Bridge::Connect { url: url.clone() }),
            [url, flag] | [flag, url] if flag == "--client-config" => {
                Ok(Bridge::ClientConfig { url: url.clone() })
            }
            _ => Err("connect: give one URL".into()),
        },
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
        ServerTransport::Sse { url, .. } => Ok(Proxy::new(client.connect_sse(url).await?)),
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
    if let Bridge::ClientConfig { url } = &bridge {
        println!("{}", client_config(url)?);
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
        Bridge::Connect { url } => (Proxy::connect(client, &url).await?, Transport::Stdio),
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
