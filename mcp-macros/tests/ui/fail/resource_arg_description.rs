use mcp_runtime::prelude::*;

#[resource("users://{id}")]
fn user(#[arg(description = "The user's id.")] id: u64) -> String {
    id.to_string()
}

fn main() {}
