use mcp_runtime::prelude::*;

#[prompt]
fn greet((first, last): (String, String)) -> String {
    format!("Hello, {first} {last}")
}

fn main() {}
