use mcp_runtime::prelude::*;

#[tool]
async fn marked(#[arg(inject)] ctx: Context) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
