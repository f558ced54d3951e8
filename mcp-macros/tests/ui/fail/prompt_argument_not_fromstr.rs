use mcp_runtime::prelude::*;

struct Opaque;

#[prompt]
fn greet(who: Opaque) -> String {
    let _ = who;
    String::new()
}

fn main() {}
