use mcp_runtime::prelude::*;

fn everything() -> Vec<Resource> {
    Vec::new()
}

#[resource("config://app", list = everything)]
fn config() -> String {
    String::new()
}

fn main() {}
