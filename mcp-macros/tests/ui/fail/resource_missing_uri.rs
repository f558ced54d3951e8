use mcp_runtime::prelude::*;

#[resource(name = "config")]
fn config() -> String {
    String::new()
}

fn main() {}
