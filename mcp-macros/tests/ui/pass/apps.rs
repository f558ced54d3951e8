//! MCP Apps: every `ui(...)` setting, a file-backed page, linked tools with each visibility.
use mcp_runtime::prelude::*;

#[resource(
    "ui://counter/app.html",
    name = "counter",
    ui(
        csp(
            connect_domains = ["https://api.example.com", "wss://live.example.com"],
            resource_domains = "https://*.cdn.example.com",
            frame_domains = ["https://www.youtube.com"],
            base_uri_domains = ["https://cdn.example.com"]
        ),
        permissions(camera, microphone, geolocation, clipboard_write),
        domain = "a904794854a047f6.example-host.com",
        prefers_border
    )
)]
fn counter() -> std::io::Result<String> {
    std::fs::read_to_string("counter.html")
}

#[resource("ui://plain/app.html", mime_type = "text/html;profile=mcp-app")]
fn plain() -> &'static str {
    "<!doctype html>"
}

#[tool(ui = "ui://counter/app.html")]
async fn show(ctx: Context) -> String {
    format!("apps: {}", ctx.client_supports_apps())
}

#[tool(ui = "ui://counter/app.html", visibility = ["app"])]
async fn increment() -> u32 {
    1
}

#[tool(visibility = "model")]
fn summary() -> &'static str {
    "summary"
}

fn main() {
    let server = mcp_runtime::Server::builder().build().unwrap();
    let increment = server.tools().find(|t| t.name == "increment").unwrap();
    assert_eq!(increment.meta["ui"]["visibility"][0], "app");
}
