use mcp_runtime::prelude::*;

#[tool]
async fn with_args(#[inject(optional)] ctx: Context) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
