use mcp_runtime::prelude::*;

// A prompt argument that may be absent is an `Option`; `default` would be silently dropped.
#[prompt]
fn greet(#[arg(default = "world")] who: String) -> String {
    format!("Hello, {who}")
}

fn main() {}
