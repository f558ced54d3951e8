use mcp_runtime::prelude::*;

#[prompt]
fn greet(who: &str) -> String {
    format!("Hello, {who}")
}

fn main() {}
