use mcp_runtime::prelude::*;

#[tool]
unsafe fn dangerous(a: i64) -> i64 {
    a
}

fn main() {}
