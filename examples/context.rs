//! `Context` in action: progress and logs, cancellation, asking the user (elicitation), the
//! client's model (sampling) and its roots, change notifications and tools switched on and off
//! at run time. The same code serves every protocol version.
//!
//! ```text
//! cargo run --example context                  # stdio
//! cargo run --example context -- --http 127.0.0.1:8000
//! ```

use std::sync::Mutex;
use std::time::Duration;

use mcp_runtime::catalog::ItemKind;
use mcp_runtime::prelude::*;

/// Pizza sizes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    /// Small (25 cm)
    Small,
    /// Medium (30 cm)
    Medium,
    /// Large (35 cm)
    Large,
}

/// Toppings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Topping {
    Mushrooms,
    Olives,
    Peppers,
}

/// The order form the user fills in.
#[derive(Debug, Deserialize, JsonSchema)]
struct Order {
    /// Size of the pizza.
    size: Size,
    /// How many pizzas.
    #[schemars(range(min = 1, max = 10))]
    quantity: u32,
    /// Extra toppings.
    #[serde(default)]
    toppings: Vec<Topping>,
    /// Where to send the receipt.
    #[schemars(email)]
    email: Option<String>,
}

/// Order a pizza: asks the user for the details.
#[tool]
async fn order_pizza(ctx: Context) -> Result<String, McpError> {
    Ok(match ctx.elicit::<Order>("What would you like?").await? {
        Elicitation::Accept(order) => {
            let toppings: Vec<String> = order
                .toppings
                .iter()
                .map(|t| format!("{t:?}").to_lowercase())
                .collect();
            format!(
                "Ordered {} {:?} pizza(s){}{}.",
                order.quantity,
                order.size,
                if toppings.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", toppings.join(", "))
                },
                order
                    .email
                    .map(|e| format!("; receipt to {e}"))
                    .unwrap_or_default(),
            )
        }
        Elicitation::Decline => "Order declined.".into(),
        Elicitation::Cancel => "Order cancelled.".into(),
    })
}

/// A name to greet.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// Greet the user, asking for their name when it is not given (and the client can ask).
#[tool]
async fn greet(
    ctx: Context,
    /// Who to greet (asked for when left out).
    name: Option<String>,
) -> Result<String, McpError> {
    let name = match name {
        Some(name) => name,
        None => match ctx.elicit::<Name>("What is your name?").await {
            Ok(Elicitation::Accept(n)) => n.name,
            Ok(_) => "stranger".into(),
            // The client cannot show forms: carry on without.
            Err(e) if e.is_missing_capability() => "stranger".into(),
            Err(e) => return Err(e),
        },
    };
    Ok(format!("Hello, {name}!"))
}

/// Summarize a text with the client's model.
#[tool]
async fn summarize(
    ctx: Context,
    /// The text to summarize.
    text: String,
) -> Result<String, McpError> {
    let request = Sampling::prompt(format!("Summarize in one sentence:\n\n{text}"), 200)
        .system_prompt("You are concise.")
        .temperature(0.2);
    let answer = ctx.sample(request).await?;
    Ok(format!(
        "Summary ({}): {}",
        answer.model,
        answer.text().unwrap_or_default()
    ))
}

/// The client's roots: the folders the user works in.
#[tool]
async fn list_roots(ctx: Context) -> Result<String, McpError> {
    let roots = ctx.roots().await?;
    let lines: Vec<String> = roots
        .iter()
        .map(|r| match &r.name {
            Some(name) => format!("{name}: {}", r.uri),
            None => r.uri.clone(),
        })
        .collect();
    Ok(format!("{} root(s)\n{}", roots.len(), lines.join("\n")))
}

/// Count to `n`, slowly, with progress and logs; stops early when cancelled.
#[tool]
async fn count(
    ctx: Context,
    /// Where to stop (at most 1000).
    n: u32,
) -> String {
    let n = n.min(1000);
    ctx.info(format!("counting to {n}"));
    for i in 1..=n {
        tokio::select! {
            _ = ctx.cancelled() => return format!("stopped at {i}"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        ctx.progress(
            f64::from(i),
            Some(f64::from(n)),
            Some(&format!("{i} of {n}")),
        );
        ctx.debug(format!("reached {i}"));
    }
    format!("counted to {n}")
}

/// The notes pinned to the board.
#[derive(Default)]
struct Board(Mutex<Vec<String>>);

/// The notes board. Subscribe to hear when it changes.
#[resource("notes://board", mime_type = "text/plain")]
fn board(board: State<Board>) -> String {
    board.0.lock().expect("board lock").join("\n")
}

/// Pin a note to the board (subscribers of notes://board are told).
#[tool]
fn pin_note(
    ctx: Context,
    board: State<Board>,
    /// The note.
    text: String,
) -> String {
    let count = {
        let mut notes = board.0.lock().expect("board lock");
        notes.push(text);
        notes.len()
    };
    ctx.catalog().resource_updated("notes://board");
    format!("{count} note(s) on the board")
}

/// Switch the `beta_feature` tool on or off (clients are told the tool list changed).
#[tool]
fn set_beta(
    ctx: Context,
    /// `true` to switch `beta_feature` on, `false` to switch it off.
    enabled: bool,
) -> String {
    let catalog = ctx.catalog();
    let changed = if enabled {
        catalog.enable(ItemKind::Tool, "beta_feature")
    } else {
        catalog.disable(ItemKind::Tool, "beta_feature")
    };
    format!(
        "beta_feature is {}{}",
        if enabled { "on" } else { "off" },
        if changed { "" } else { " (no change)" }
    )
}

/// An experimental tool, off until `set_beta` switches it on.
#[tool]
fn beta_feature() -> &'static str {
    "You found the beta feature."
}

fn main() {
    mcp_runtime::catalog().disable(ItemKind::Tool, "beta_feature");
    mcp_runtime::run!(state = Board::default());
}
