use mcp_runtime::prelude::*;

#[tool]
async fn météo() -> String {
    String::new()
}

fn main() {}
