use mcp_runtime::prelude::*;

#[tool(name = "has space")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
