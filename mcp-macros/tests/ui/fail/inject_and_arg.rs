use mcp_runtime::prelude::*;

#[tool]
async fn both(#[inject] #[arg(rename = "c")] ctx: Context) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
