use mcp_runtime::prelude::*;

struct Caller;

#[tool]
async fn whoami(#[inject] caller: Caller) -> String {
    let _ = caller;
    String::new()
}

fn main() {}
