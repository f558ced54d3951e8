use mcp_runtime::prelude::*;

#[resource("config://app", ui(prefers_border))]
fn config() -> String {
    String::new()
}

fn main() {}
