use mcp_runtime::prelude::*;

#[tool]
async fn pattern((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
