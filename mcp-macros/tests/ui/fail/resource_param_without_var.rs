use mcp_runtime::prelude::*;

#[resource("tickets://{id}")]
fn ticket(id: u64, verbose: bool) -> String {
    format!("{id} {verbose}")
}

fn main() {}
