use mcp_runtime::prelude::*;

#[resource("tickets://{id")]
fn ticket(id: u64) -> String {
    id.to_string()
}

fn main() {}
