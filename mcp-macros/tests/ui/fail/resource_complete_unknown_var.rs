use mcp_runtime::prelude::*;

#[resource("users://{id}", complete(name = ids))]
fn user(id: u64) -> String {
    id.to_string()
}

fn ids(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

fn main() {}
