use mcp_runtime::prelude::*;

#[tool]
async fn add(#[arg(defualt = 1)] a: i64) -> i64 {
    a
}

fn main() {}
