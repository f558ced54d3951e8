//! MCP Apps (SEP-1865, the `io.modelcontextprotocol/ui` extension, stable 2026-01-26):
//! interactive HTML that a host renders in a sandboxed iframe next to a tool's result.
//!
//! An app is a resource whose URI starts with `ui://`: `#[resource("ui://…")]` serves it as
//! [`MIME_TYPE`] (`text/html;profile=mcp-app`), and `ui(...)` adds the settings the host reads
//! from its `_meta.ui` (in `resources/list` and on every content item of `resources/read`):
//!
//! - `csp(connect_domains = [...], resource_domains = [...], frame_domains = [...],
//!   base_uri_domains = [...])`: the origins the page may reach (fetch and WebSockets;
//!   scripts, styles, images, fonts and media; nested iframes; `<base>`). Without them the host
//!   allows none: the page is self-contained.
//! - `permissions(camera, microphone, geolocation, clipboard_write)`: browser features the page
//!   asks for (the host may refuse; feature-detect in the page).
//! - `domain = "…"`: a dedicated sandbox origin, in the host's format.
//! - `prefers_border = true | false`: whether the host draws a border and background.
//!
//! A tool names the app that shows its results with `#[tool(ui = "ui://…")]` (the tool's
//! `_meta.ui.resourceUri`, and the deprecated flat `_meta["ui/resourceUri"]` that hosts from
//! before the stable spec read), and who may call it with `visibility = ["model", "app"]` (the
//! default when omitted), `["model"]` or `["app"]` (called by the app's buttons, kept out of the
//! model's tool list). The link is checked when the server is built: a tool whose `ui` names no
//! registered resource fails [`build`](crate::ServerBuilder::build) with
//! [`BuildError::MissingAppResource`](crate::BuildError::MissingAppResource).
//!
//! ```standalone_crate
//! use mcp_runtime::prelude::*;
//!
//! /// The counter's page (an embedded asset here; a fn returning
//! /// `std::io::Result<String>` from `std::fs::read_to_string` serves a file).
//! #[resource("ui://counter/app.html", ui(csp(connect_domains = ["https://api.example.com"]), prefers_border = true))]
//! fn counter_app() -> &'static str {
//!     "<!doctype html><title>Counter</title><button>+1</button>"
//! }
//!
//! /// Show the counter.
//! #[tool(ui = "ui://counter/app.html")]
//! async fn show_counter(ctx: Context) -> String {
//!     // The same text reaches a client without apps: the result must stand on its own.
//!     if ctx.client_supports_apps() { "Counter: 0 (see the app)".into() } else { "Counter: 0".into() }
//! }
//!
//! /// Add one; only the app's button calls this.
//! #[tool(ui = "ui://counter/app.html", visibility = ["app"])]
//! async fn increment() -> u32 {
//!     1
//! }
//! # fn main() {
//! let server = mcp_runtime::Server::builder().build().unwrap();
//! let tool = server.tools().find(|t| t.name == "increment").unwrap();
//! assert_eq!(tool.meta["ui"]["visibility"][0], "app");
//! # }
//! ```
//!
//! # The extension and the client
//!
//! A server with any app declares the extension in its capabilities (`extensions`,
//! `{"mimeTypes": ["text/html;profile=mcp-app"]}`), in the `initialize` result of every
//! session-era version and in 2026-07-28 `server/discover`: nothing to configure.
//! [`Context::client_supports_apps`](crate::Context::client_supports_apps) says whether the
//! client declared it with that MIME type; a tool linked to an app still returns text that
//! stands on its own, since a client without apps shows only that.
//!
//! # Visibility is the host's to enforce
//!
//! The spec puts it there: the host keeps app-only tools out of the model's list and refuses
//! an app's call of a tool without `"app"`. The server cannot tell the two callers apart (both
//! calls come from the host, on one connection), so it lists every tool with its visibility
//! and serves every call; a client that does not render apps sees app-only tools as ordinary
//! tools. Keep authorization in the tool (scopes, checks on its arguments), as for any tool.

mod def;

pub use crate::protocol::apps::{EXTENSION, MIME_TYPE};
#[doc(hidden)]
pub use def::{UiResourceDef, UiToolDef};

use crate::protocol::ResourceContents;

/// The deprecated flat `_meta` key of a tool's app, still set for hosts that read only it.
pub(crate) const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// Gives each content item of an app's read its `_meta.ui` (`ui`), unless the fn set its own.
pub(crate) fn decorate(contents: &mut [ResourceContents], ui: &serde_json::Value) {
    for item in contents {
        item.meta_mut().entry("ui").or_insert_with(|| ui.clone());
    }
}
