use mcp_runtime::prelude::*;

struct Opaque;

#[tool]
async fn returns_opaque() -> Opaque {
    Opaque
}

fn main() {}
