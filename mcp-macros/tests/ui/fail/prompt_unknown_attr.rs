use mcp_runtime::prelude::*;

#[prompt(annotations(read_only))]
fn greet(name: String) -> String {
    name
}

fn main() {}
