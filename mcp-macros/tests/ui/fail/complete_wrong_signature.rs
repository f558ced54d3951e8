use mcp_runtime::prelude::*;

fn names(prefix: String) -> Vec<String> {
    vec![prefix]
}

#[prompt(complete(name = names))]
fn greet(name: String) -> String {
    name
}

fn main() {}
