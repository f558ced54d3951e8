use mcp_runtime::prelude::*;

// Injection without a marker is for the built-ins by name; an alias needs `#[inject]`.
type Ctx = Context;

#[tool]
async fn aliased(ctx: Ctx) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
