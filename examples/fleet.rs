//! Run with: `cargo run --example fleet -- --http 127.0.0.1:8001` (one instance of a fleet;
//! deploy/README.md runs three behind nginx or HAProxy).
//!
//! One instance of a server meant to run several times behind a load balancer. What the
//! instances share comes from the environment, the same on every instance:
//!
//! - `MCP_REQUEST_STATE_KEYS`: the requestState key (hex, at least 64 hex digits; the first of
//!   a comma-separated list), so a multi-round call may retry through any instance;
//! - `REDIS_URL` (e.g. `redis://127.0.0.1:6379`): the shared store, and `MCP_FLEET` the key
//!   prefix of this fleet in it (default `fleet`);
//! - `MCP_ALLOWED_HOSTS`: the `Host` names the proxy forwards, when they are not loopback ones.
//!
//! and per instance `MCP_INSTANCE`, the name `whoami` answers (else `MCP_ROUTE_TOKEN`).

use std::process::ExitCode;
use std::time::Duration;

use mcp_runtime::Server;
use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, serve_http};
use tokio::sync::Semaphore;

/// Add two numbers.
#[tool(annotations(read_only, idempotent, open_world = false))]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// This instance's name.
struct Instance(String);

/// Which instance answered (to see how a load balancer spreads calls).
#[tool(annotations(read_only, open_world = false))]
fn whoami(instance: State<Instance>) -> String {
    instance.0.clone()
}

/// How much work an instance takes at once: a fixed capacity, as a database pool would be.
struct Capacity(Semaphore);

/// Work for `ms` milliseconds (at most 60 s), in one of the instance's 16 slots: calls past
/// them wait. Runs as a task when the client asks for one.
#[tool(task = "optional", annotations(read_only, open_world = false))]
async fn slow(
    /// How long the work takes, in milliseconds.
    ms: u32,
    capacity: State<Capacity>,
    instance: State<Instance>,
    ctx: Context,
) -> Result<String, String> {
    let _slot = capacity.0.acquire().await.map_err(|e| e.to_string())?;
    let ms = ms.min(60_000);
    let done = format!("worked {ms} ms on {}", instance.0);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms.into())) => Ok(done),
        _ = ctx.cancelled() => Err("cancelled".into()),
    }
}

/// Announce that the tool list changed (with `REDIS_URL`, every instance's listeners hear it).
#[tool]
fn bump_tools(ctx: Context) -> &'static str {
    ctx.changes().tools_changed();
    "announced"
}

/// The first question of `survey`.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// The second question.
#[derive(Deserialize, JsonSchema)]
struct Colour {
    /// Your favourite colour.
    colour: String,
}

/// The third question.
#[derive(Deserialize, JsonSchema)]
struct Number {
    /// Your lucky number.
    number: i64,
}

/// Ask three questions, one after the other. In the 2026-07-28 era each answer is a new
/// request, which the load balancer may send to any instance.
#[tool]
async fn survey(instance: State<Instance>, ctx: Context) -> Result<String, McpError> {
    let Some(name) = ctx.elicit::<Name>("Name?").await?.accepted() else {
        return Ok("declined".into());
    };
    let Some(colour) = ctx.elicit::<Colour>("Colour?").await?.accepted() else {
        return Ok("declined".into());
    };
    let Some(number) = ctx.elicit::<Number>("Lucky number?").await?.accepted() else {
        return Ok("declined".into());
    };
    Ok(format!(
        "{} likes {} and {} (finished on {})",
        name.name, colour.colour, number.number, instance.0
    ))
}

/// `--http ADDR` (else `MCP_TRANSPORT`, else 127.0.0.1:8000).
fn listen_address() -> Result<String, String> {
    let mut args = std::env::args().skip(1);
    let mut addr = std::env::var("MCP_TRANSPORT").unwrap_or_else(|_| "127.0.0.1:8000".into());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => addr = args.next().ok_or("--http needs an address")?,
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: fleet --http ADDR"
                ));
            }
        }
    }
    Ok(addr)
}

/// The first key of `MCP_REQUEST_STATE_KEYS` (hex), if set.
fn request_state_key() -> Result<Option<Vec<u8>>, String> {
    let Ok(keys) = std::env::var("MCP_REQUEST_STATE_KEYS") else {
        return Ok(None);
    };
    let first = keys.split(',').next().unwrap_or_default().trim();
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let key: Option<Vec<u8>> = first
        .as_bytes()
        .chunks(2)
        .map(|pair| Some((digit(pair[0])? << 4) | digit(*pair.get(1)?)?))
        .collect();
    match key {
        Some(key) if key.len() >= 32 => Ok(Some(key)),
        _ => Err("MCP_REQUEST_STATE_KEYS: each key is at least 64 hex digits".into()),
    }
}

async fn serve() -> Result<(), String> {
    let addr = listen_address()?;
    let name = std::env::var("MCP_INSTANCE")
        .or_else(|_| std::env::var("MCP_ROUTE_TOKEN"))
        .unwrap_or_else(|_| addr.clone());
    let mut builder = Server::builder()
        .name("fleet")
        .version(env!("CARGO_PKG_VERSION"))
        .state(Instance(name))
        .state(Capacity(Semaphore::new(16)));
    if let Some(key) = request_state_key()? {
        builder = builder.request_state_key(key);
    }
    let mut config = HttpConfig::new(addr);
    if let Ok(hosts) = std::env::var("MCP_ALLOWED_HOSTS") {
        config = config.with_allowed_hosts(hosts.split(',').map(str::trim).map(String::from));
    }
    if let Ok(url) = std::env::var("REDIS_URL") {
        let fleet = std::env::var("MCP_FLEET").unwrap_or_else(|_| "fleet".into());
        let redis = mcp_redis::Redis::connect(&url, &fleet)
            .await
            .map_err(|e| format!("REDIS_URL {url}: {e}"))?;
        // A change announced on any instance reaches the listeners of every instance.
        builder = builder.change_bus(mcp_redis::RedisChangeBus::new(&redis));
    }
    let server = builder.build().map_err(|e| e.to_string())?;
    serve_http(server, config).await.map_err(|e| e.to_string())
}

// `pub(crate)`: benches/fleet runs this same instance, compiled in (it re-executes itself).
#[tokio::main]
pub(crate) async fn main() -> ExitCode {
    mcp_runtime::init_logging();
    match serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
