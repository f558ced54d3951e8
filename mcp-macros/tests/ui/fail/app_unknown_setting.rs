use mcp_runtime::prelude::*;

#[resource("ui://counter/app.html", ui(border = true))]
fn counter() -> &'static str {
    "<!doctype html>"
}

fn main() {}
