//! Run with: `cargo run -p example-bridge -- serve --http 127.0.0.1:8000 -- npx -y
//! @modelcontextprotocol/server-everything` (a stdio server over Streamable HTTP), or
//! `cargo run -p example-bridge -- connect http://127.0.0.1:8000/mcp` (an HTTP server over
//! stdio, for clients that only launch commands).
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

use mcp_runtime::Transport;
use mcp_runtime::client::Client;
use mcp_runtime::compose::Proxy;

const USAGE: &str = "\
usage: mcp-bridge serve --http ADDR -- COMMAND [ARGS...]
           serve a stdio MCP server (started with COMMAND) over Streamable HTTP at http://ADDR/mcp
       mcp-bridge connect URL
           serve the MCP server at URL (Streamable HTTP) over stdio";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Bridge {
    /// A stdio server, served over HTTP.
    Serve { addr: String, command: Vec<String> },
    /// An HTTP server, served over stdio.
    Connect { url: String },
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
            _ => Err("connect: give one URL".into()),
        },
        Some("-h" | "--help") => Err(String::new()),
        _ => Err("give `serve` or `connect`".into()),
    }
}

async fn run(bridge: Bridge) -> Result<(), Box<dyn std::error::Error>> {
    // The upstream's asks (elicitation, sampling, roots) go to the client in front.
    let client = Client::builder().info("mcp-bridge", env!("CARGO_PKG_VERSION"));
    let (proxy, transport) = match bridge {
        Bridge::Serve { addr, command } => {
            let mut server = tokio::process::Command::new(&command[0]);
            server.args(&command[1..]);
            (Proxy::spawn(client, server).await?, Transport::http(addr))
        }
        Bridge::Connect { url } => (Proxy::connect(client, &url).await?, Transport::Stdio),
    };
    let server = proxy.server().with_env()?.build()?;
    server.serve(transport).await?;
    Ok(())
}

fn main() -> ExitCode {
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
