use mcp_runtime::prelude::*;

#[tool(nmae = "add")]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
