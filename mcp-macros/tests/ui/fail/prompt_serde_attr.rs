use mcp_runtime::prelude::*;

// Prompt arguments are parsed with `FromStr`: serde attributes would be silently dropped.
#[prompt]
fn greet(#[serde(alias = "name")] who: String) -> String {
    format!("Hello, {who}")
}

fn main() {}
