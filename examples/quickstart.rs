//! Run with: `cargo run --example quickstart` (stdio), then connect any MCP client.
//!
//! A small server that shows the shapes a tool can take: plain arguments, a struct argument, an
//! optional argument, an enum, a structured result and a tool error.

use mcp_runtime::prelude::*;

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

/// A point on the plane.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Point {
    /// Horizontal position.
    x: f64,
    /// Vertical position.
    y: f64,
}

/// The distance between two points and its midpoint.
#[derive(Debug, Serialize, JsonSchema)]
struct Measurement {
    /// Euclidean distance.
    distance: f64,
    /// The point halfway between.
    midpoint: Point,
}

/// Measure the distance between two points.
#[tool(title = "Measure distance", annotations(read_only))]
fn measure(
    /// Where to start.
    from: Point,
    /// Where to end.
    to: Point,
) -> Measurement {
    let (dx, dy) = (to.x - from.x, to.y - from.y);
    Measurement {
        distance: (dx * dx + dy * dy).sqrt(),
        midpoint: Point {
            x: (from.x + to.x) / 2.0,
            y: (from.y + to.y) / 2.0,
        },
    }
}

/// How to greet.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Tone {
    /// Short and polite.
    Formal,
    /// Warm.
    Friendly,
}

/// Greet someone.
#[tool]
async fn greet(
    /// Who to greet.
    name: String,
    /// The tone of the greeting (friendly if left out).
    tone: Option<Tone>,
    /// How many exclamation marks.
    #[arg(default = 1)]
    excitement: u8,
) -> String {
    let bang = "!".repeat(excitement.into());
    match tone.unwrap_or(Tone::Friendly) {
        Tone::Formal => format!("Good day, {name}{bang}"),
        Tone::Friendly => format!("Hi {name}{bang}"),
    }
}

/// Divide `dividend` by `divisor`; dividing by zero is an error the model can read.
#[tool(annotations(read_only))]
async fn divide(
    /// The number to divide.
    dividend: f64,
    /// The number to divide by (not zero).
    divisor: f64,
) -> Result<f64, String> {
    if divisor == 0.0 {
        return Err("cannot divide by zero".into());
    }
    Ok(dividend / divisor)
}

/// Wait for a while (to try cancellation), reporting how long it waited.
#[tool]
async fn sleep(
    /// Milliseconds to wait (at most 60000).
    ms: u32,
    ctx: Context,
) -> Result<String, String> {
    let ms = ms.min(60_000);
    tokio::select! {
        _ = tokio::time::sleep(std::time::Duration::from_millis(ms.into())) => Ok(format!("slept {ms} ms")),
        _ = ctx.cancelled() => Err("cancelled".into()),
    }
}

fn main() {
    mcp_runtime::run!();
}
