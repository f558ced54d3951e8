use mcp_runtime::prelude::*;

#[tool(title = "One", title = "Two")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
