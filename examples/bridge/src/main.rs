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

use std::process::ExitCode;

use mcp_runtime::client::{
    Client, ClientBuilder, ClientError, ServerConfig, ServerTransport, ServersConfig,
};
use mcp_runtime::compose::Proxy;
use mcp_runtime::{Server, ServerBuilder, Transport};

const USAGE: &str = "\
usage: mcp-bridge serve --http ADDR -- COMMAND [ARGS...]
           serve a stdio MCP server (started with COMMAND) over Streamable HTTP at http://ADDR/mcp
       mcp-bridge connect URL [--client-config]
           serve the MCP server at URL (Streamable HTTP) over stdio; with --client-config,
           print the mcpServers entry that runs this command instead
       mcp-bridge gateway [--http ADDR] FILE
           serve every server of an mcpServers FILE as one, each under its name
           (tool `forecast` of server `weather` as `weather_forecast`), over stdio or HTTP";

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
async fn proxy_to(server: &ServerConfig, client: ClientBuilder) -> Result<Proxy, ClientError> {
    if let Some(child) = server.transport.command() {
        return Proxy::spawn(client, child).await;
    }
    let client = server
        .transport
        .headers()
        .fold(client, |client, (name, value)| client.header(name, value));
    match &server.transport {
        ServerTransport::Http { url, .. } => Proxy::connect(client, url).await,
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
) -> Result<ServerBuilder, Box<dyn std::error::Error>> {
    let config = ServersConfig::read(file)?;
    let mut builder = Server::builder()
        .name("mcp-gateway")
        .version(env!("CARGO_PKG_VERSION"))
        .item_filter(|_| false);
    for server in config.enabled() {
        match proxy_to(server, client.clone()).await {
            Ok(proxy) => builder = builder.mount(&server.name, proxy),
            Err(e) => eprintln!("warning: leaving out {}: {e}", server.name),
        }
    }
    Ok(builder)
}

async fn run(bridge: Bridge) -> Result<(), Box<dyn std::error::Error>> {
    // The upstream's asks (elicitation, sampling, roots) go to the client in front.
    let client = Client::builder().info("mcp-bridge", env!("CARGO_PKG_VERSION"));
    if let Bridge::ClientConfig { url } = &bridge {
        println!("{}", client_config(url)?);
        return Ok(());
    }
    if let Bridge::Gateway { addr, file } = bridge {
        let server = gateway(&file, client).await?.with_env()?.build()?;
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
    let server = proxy.server().with_env()?.build()?;
    server.serve(transport).await?;
    Ok(())
}

// `pub(crate)`: integration/benches/hop runs this same bridge, compiled in (it re-executes itself).
pub(crate) fn main() -> ExitCode {
    mcp_runtime::init_logging();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bridge = match parse(&args) {
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
    match runtime.block_on(run(bridge)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
