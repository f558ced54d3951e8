//! Run with: `cargo run -p example-fleet -- --http 127.0.0.1:8001` (one instance of a fleet;
//! deploy/README.md runs three behind nginx or HAProxy).
//!
//! One instance of a server meant to run several times behind a load balancer. What the
//! instances share comes from the environment, the same on every instance:
//!
//! - `MCP_REQUEST_STATE_KEYS`: the requestState keys (comma-separated hex, each at least 64
//!   digits; the first seals, all open), so a multi-round call may retry through any instance;
//! - `REDIS_URL` (e.g. `redis://127.0.0.1:6379`): the shared stores (sessions, SSE events,
//!   tasks, the change bus), and `MCP_FLEET` the key prefix of this fleet in it (default
//!   `fleet`);
//! - `MCP_ALLOWED_HOSTS`: the `Host` names the proxy forwards, when they are not loopback ones;
//!
//! and per instance `MCP_ROUTE_TOKEN`, which starts the session ids it mints (the route-token
//! `map` in deploy/nginx pins sessions on it), and `MCP_INSTANCE`, the name `whoami` answers
//! (else the route token). Every variable `run!()` reads is read here too
//! ([`ServerBuilder::with_env`](mcp_runtime::ServerBuilder::with_env),
//! [`HttpConfig::with_env`]).

use std::process::ExitCode;
use std::sync::Arc;
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
    ctx.catalog().tools_changed();
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

/// How long this instance may go without renewing its lease on a running task: short, so a
/// task whose instance died ends `failed` within seconds (the framework's default is 30 s).
const TASK_LEASE: Duration = Duration::from_secs(5);

async fn serve() -> Result<(), String> {
    let addr = listen_address()?;
    let name = std::env::var("MCP_INSTANCE")
        .or_else(|_| std::env::var("MCP_ROUTE_TOKEN"))
        .unwrap_or_else(|_| addr.clone());
    // MCP_REQUEST_STATE_KEYS / MCP_REQUEST_STATE_AUDIENCE: the same on every instance.
    let mut builder = Server::builder()
        .name("fleet")
        .version(env!("CARGO_PKG_VERSION"))
        .state(Instance(name))
        .state(Capacity(Semaphore::new(16)))
        .task_lease(TASK_LEASE)
        .with_env()
        .map_err(|e| e.to_string())?;
    // MCP_ALLOWED_HOSTS, MCP_ROUTE_TOKEN, MCP_DRAIN_DELAY, ...
    let mut config = HttpConfig::new(addr)
        // Behind the load balancer every client without credentials has the balancer's
        // address, so the per-client limit (128 by default) would cap them all together.
        .max_in_flight_per_client(4096)
        .with_env()
        .map_err(|e| e.to_string())?;
    if let Ok(url) = std::env::var("REDIS_URL") {
        let fleet = std::env::var("MCP_FLEET").unwrap_or_else(|_| "fleet".into());
        let redis = mcp_redis::Redis::connect(&url, &fleet)
            .await
            .map_err(|e| format!("REDIS_URL {url}: {e}"))?;
        builder = builder
            // A change announced on any instance reaches the listeners of every instance.
            .change_bus(mcp_redis::RedisChangeBus::new(&redis))
            // A task started through one instance is read and cancelled through any.
            .task_store(mcp_redis::RedisTaskStore::new(&redis));
        config = config
            // A legacy session whose instance is gone is restored by the next one...
            .session_store(Arc::new(mcp_redis::RedisSessionStore::new(&redis)))
            // ...and its SSE streams resume there with Last-Event-ID.
            .event_store(Arc::new(mcp_redis::RedisEventStore::new(&redis)));
    }
    let server = builder.build().map_err(|e| e.to_string())?;
    serve_http(server, config).await.map_err(|e| e.to_string())
}

// `pub(crate)`: integration/benches/fleet runs this same instance, compiled in (it re-executes itself).
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
