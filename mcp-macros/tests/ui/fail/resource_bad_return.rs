use mcp_runtime::prelude::*;

struct Opaque;

#[resource("config://app")]
fn config() -> Opaque {
    Opaque
}

fn main() {}
