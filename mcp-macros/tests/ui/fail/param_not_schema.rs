use mcp_runtime::prelude::*;

struct Opaque;

#[tool]
async fn takes_opaque(value: Opaque) -> String {
    let _ = value;
    String::new()
}

fn main() {}
