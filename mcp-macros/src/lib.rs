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
/// ```ignore
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
