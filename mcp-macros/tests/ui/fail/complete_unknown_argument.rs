use mcp_runtime::prelude::*;

fn names(_: &CompletionRequest) -> Vec<String> {
    Vec::new()
}

#[prompt(complete(nmae = names))]
fn greet(name: String) -> String {
    name
}

fn main() {}
