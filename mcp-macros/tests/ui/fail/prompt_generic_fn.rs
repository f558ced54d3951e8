use mcp_runtime::prelude::*;

#[prompt]
fn generic<T: Default>(topic: String) -> String {
    topic
}

fn main() {}
