use mcp_runtime::prelude::*;

#[resource("ui://counter/app.html", mime_type = "text/html")]
fn counter() -> &'static str {
    "<!doctype html>"
}

fn main() {}
