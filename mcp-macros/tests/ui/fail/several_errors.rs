use mcp_runtime::prelude::*;

// Every problem is reported at once, each at its own span.
#[tool(bogus)]
async fn many((a, b): (i64, i64), c: &str) -> i64 {
    let _ = c;
    a + b
}

fn main() {}
