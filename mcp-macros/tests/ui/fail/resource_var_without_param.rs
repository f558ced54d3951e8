use mcp_runtime::prelude::*;

#[resource("tickets://{id}/comments/{comment}")]
fn comment(id: u64) -> String {
    id.to_string()
}

fn main() {}
