use mcp_runtime::prelude::*;

#[tool(annotations(readonly))]
async fn add(a: i64) -> i64 {
    a
}

fn main() {}
