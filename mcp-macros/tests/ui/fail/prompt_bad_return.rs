use mcp_runtime::prelude::*;

struct Opaque;

#[prompt]
fn greet(who: String) -> Opaque {
    let _ = who;
    Opaque
}

fn main() {}
