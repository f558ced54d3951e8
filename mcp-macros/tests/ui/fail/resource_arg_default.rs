use mcp_runtime::prelude::*;

#[resource("users://{id}")]
fn user(#[arg(default)] id: u64) -> String {
    id.to_string()
}

fn main() {}
