use mcp_runtime::prelude::*;

#[tool(ui = "ui://counter/app.html", visibility = ["model", "user"])]
async fn show() -> String {
    String::new()
}

fn main() {}
