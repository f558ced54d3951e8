use mcp_runtime::prelude::*;

#[tool]
async fn borrowed(name: &str) -> String {
    name.to_owned()
}

fn main() {}
