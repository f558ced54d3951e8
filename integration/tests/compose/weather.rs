//! The weather server of `compose.rs`: its items are told apart from the main server's by
//! this file's name (`ServerBuilder::item_filter`).

use mcp_runtime::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `slow` runs; `slow` waits for its cancellation.
pub static SLOW_STARTED: AtomicBool = AtomicBool::new(false);
/// Set once `slow` saw its cancellation.
pub static SLOW_CANCELLED: AtomicBool = AtomicBool::new(false);

/// The forecast for a city.
#[tool(scopes = ["weather:read"])]
pub async fn forecast(city: String, ctx: Context) -> String {
    ctx.info(format!("looking up {city}"));
    ctx.progress(1.0, Some(1.0), Some("looked it up"));
    format!("sunny in {city}")
}

/// Asks who is asking, then greets them.
#[tool]
pub async fn greet(ctx: Context) -> Result<String, McpError> {
    #[derive(Deserialize, JsonSchema)]
    struct Name {
        name: String,
    }
    Ok(match ctx.elicit::<Name>("Who are you?").await? {
        Elicitation::Accept(n) => format!("hello {}", n.name),
        _ => "hello stranger".into(),
    })
}

/// Waits until cancelled.
#[tool]
pub async fn slow(ctx: Context) -> String {
    SLOW_STARTED.store(true, Ordering::SeqCst);
    ctx.cancelled().await;
    SLOW_CANCELLED.store(true, Ordering::SeqCst);
    "cancelled".into()
}

/// The current weather.
#[resource("weather://current")]
pub fn current() -> &'static str {
    "mild"
}

/// The weather in a city now.
#[resource("weather://{city}/now", complete(city = cities))]
pub fn city_now(city: String) -> String {
    format!("{city}: mild")
}

/// Whether to take an umbrella.
#[prompt(complete(city = cities))]
pub fn umbrella(city: String) -> String {
    format!("Do I need an umbrella in {city}?")
}

fn cities(req: &CompletionRequest) -> Vec<String> {
    ["paris", "porto", "oslo"]
        .into_iter()
        .filter(|c| c.starts_with(&req.value))
        .map(str::to_owned)
        .collect()
}
