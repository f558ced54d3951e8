use mcp_runtime::prelude::*;

struct Opaque;

// A `Result` of a type that is not a tool result: one error, at the whole return type.
#[tool]
async fn returns_opaque() -> Result<Opaque, String> {
    Ok(Opaque)
}

fn main() {}
