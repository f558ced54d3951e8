use mcp_runtime::prelude::*;

#[tool(ui = "https://example.com/app.html")]
async fn show() -> String {
    String::new()
}

fn main() {}
