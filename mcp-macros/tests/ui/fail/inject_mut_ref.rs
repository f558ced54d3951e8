use mcp_runtime::prelude::*;

#[tool]
async fn mutable(#[inject] ctx: &mut Context) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
