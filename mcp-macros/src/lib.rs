//! Attribute macros for [`mcp-runtime`](https://docs.rs/mcp-runtime). Depend on `mcp-runtime`
//! and use them from there (`use mcp_runtime::prelude::*;`): the generated code names the
//! runtime, not this crate.

mod attr;
mod expand;
mod fallback;
mod model;

use proc_macro::TokenStream;

/// Registers a function as an MCP tool. See the `mcp_runtime` crate docs for the full guide.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
///
/// /// Add two numbers.
/// #[tool(annotations(read_only, idempotent))]
/// async fn add(
///     /// The first addend.
///     a: i64,
///     /// The second addend.
///     #[arg(default = 1)]
///     b: i64,
/// ) -> i64 {
///     a + b
/// }
///
/// # fn main() {
/// let server = mcp_runtime::Server::builder().build().unwrap();
/// let add = server.tools().find(|t| t.name == "add").unwrap();
/// assert_eq!(add.description.as_deref(), Some("Add two numbers."));
/// assert_eq!(add.input_schema["properties"]["b"]["default"], 1);
/// assert_eq!(add.annotations.read_only_hint, Some(true));
/// # }
/// ```
///
/// Attribute arguments: `name = "…"`, `title = "…"`, `description = "…"` (default: the doc
/// comment), `annotations(title = "…", read_only, destructive = false, idempotent, open_world)`,
/// `icon(src = "…", mime_type = "…", sizes = ["48x48"], theme = "dark")` (repeatable),
/// `meta("key" = value, …)`, `crate = path` (when `mcp_runtime` is renamed).
///
/// Parameter attributes: doc comments (the argument's description), `#[arg(rename = "…")]`,
/// `#[arg(default)]` / `#[arg(default = expr)]`, `#[arg(description = "…")]`, and any
/// `#[serde(…)]` / `#[schemars(…)]` field attribute.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}
