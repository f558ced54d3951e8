use mcp_runtime::prelude::*;

#[resource("ui://counter/app.html", ui(csp(connect_domains = ["https://api.example.com; script-src *"])))]
fn counter() -> &'static str {
    "<!doctype html>"
}

fn main() {}
