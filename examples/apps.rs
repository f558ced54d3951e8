//! MCP Apps (SEP-1865): a counter whose page the host renders next to the tool's result, with
//! a button that calls an app-only tool through the host.
//!
//! Run with: `cargo run --example apps -- --http 127.0.0.1:8000`, then add
//! `http://127.0.0.1:8000/mcp` to a host that renders MCP Apps and ask it to show the counter.
//!
//! The page is `examples/apps.html`, embedded with `include_str!`; with `APPS_COUNTER_HTML`
//! set, the file it names is served instead, read at each `resources/read` (edit the page
//! without rebuilding; the browser test serves a page built on the ext-apps `App` API this way).

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::prelude::*;

static COUNT: AtomicU64 = AtomicU64::new(0);

/// The counter's page.
#[resource("ui://counter/app.html", name = "counter", ui(prefers_border = true))]
fn counter_page() -> std::io::Result<String> {
    match std::env::var_os("APPS_COUNTER_HTML") {
        Some(path) => std::fs::read_to_string(path),
        None => Ok(include_str!("apps.html").to_owned()),
    }
}

/// Show the counter.
#[tool(ui = "ui://counter/app.html", annotations(read_only))]
async fn show_counter(ctx: Context) -> String {
    let n = COUNT.load(Ordering::Relaxed);
    // A client without apps shows only this text, so it says everything.
    if ctx.client_supports_apps() {
        format!("Counter: {n} (the app below has a button to add one)")
    } else {
        format!("Counter: {n}")
    }
}

/// Add `by` to the counter. The app's button calls it; the model never sees it.
#[tool(ui = "ui://counter/app.html", visibility = ["app"])]
async fn increment(
    /// How much to add.
    #[arg(default = 1)]
    by: u64,
) -> String {
    let n = COUNT.fetch_add(by, Ordering::Relaxed) + by;
    format!("Counter: {n}")
}

fn main() {
    mcp_runtime::run!();
}
