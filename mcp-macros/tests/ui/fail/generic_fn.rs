use mcp_runtime::prelude::*;

#[tool]
async fn generic<T: Default>(n: i64) -> i64 {
    let _ = T::default();
    n
}

fn main() {}
