//! Attribute macros for [`mcp-runtime`](https://docs.rs/mcp-runtime). Depend on `mcp-runtime`
//! and use them from there (`use mcp_runtime::prelude::*;`): the generated code names the
//! runtime, not this crate.

mod attr;
mod errors;
mod expand;
mod fallback;
mod model;
mod uri_template;
mod valid;

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
/// `meta("key" = value, …)`, `task = "optional"` / `task = "required"` (calls may or must run
/// as tasks, see `mcp_runtime::task`), `ui = "ui://…"` (the MCP App that shows its results)
/// and `visibility = ["model", "app"]` (who may call it; see `mcp_runtime::apps`),
/// `crate = path` (when `mcp_runtime` is renamed).
///
/// Parameter attributes: doc comments (the argument's description), `#[arg(rename = "…")]`,
/// `#[arg(default)]` / `#[arg(default = expr)]`, `#[arg(description = "…")]`, and any
/// `#[serde(…)]` / `#[schemars(…)]` field attribute.
///
/// Injected parameters are supplied by the server, not the client, and are left out of the
/// schema: `Context`, `State<T>` and `Principal` (or `&` of one), written by those names, need
/// nothing; any other type that implements `FromContext` is marked `#[inject]`, and so is an
/// alias of a built-in (`type Ctx = Context;`), which the macro cannot see through. An `Err` from
/// `FromContext::from_context` rejects the request with that error. The same rules hold for
/// `#[resource]` and `#[prompt]`.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::FromContext;
///
/// /// The caller, named by the `x-caller` header (anonymous without one).
/// struct Caller(String);
///
/// impl FromContext for Caller {
///     fn from_context(ctx: &Context) -> Result<Self, McpError> {
///         let name = ctx.headers().and_then(|h| h.get("x-caller")?.to_str().ok());
///         Ok(Caller(name.unwrap_or("anonymous").to_owned()))
///     }
/// }
///
/// /// Greet the caller.
/// #[tool]
/// async fn hello(#[inject] caller: Caller, greeting: String) -> String {
///     format!("{greeting}, {}", caller.0)
/// }
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}

/// Registers a function as an MCP resource (a URI with no variables) or resource template (an
/// RFC 6570 template: each variable binds to the parameter of the same name, parsed with
/// `FromStr`; `Option` parameters for optional query variables).
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
///
/// /// The application's configuration.
/// #[resource("config://app", mime_type = "application/json")]
/// fn config() -> String {
///     r#"{"theme": "dark"}"#.into()
/// }
///
/// /// A user's profile; unknown users are "resource not found".
/// #[resource("users://{id}/profile", complete(id = user_ids))]
/// async fn profile(id: u64) -> Option<String> {
///     (id == 1).then(|| "Ann".to_owned())
/// }
///
/// fn user_ids(request: &CompletionRequest) -> Vec<String> {
///     ["1", "12", "2"].iter().filter(|v| v.starts_with(&request.value)).map(|v| v.to_string()).collect()
/// }
/// # fn main() {}
/// ```
///
/// Arguments: the URI first, then `name`, `title`, `description` (default: the doc comment),
/// `mime_type`, `size`, `annotations(audience = ["user"], priority = 0.5, last_modified = "…")`,
/// `icon(...)`, `meta(...)`, `list = path` (a `fn() -> Vec<Resource>` listing a template's
/// resources in `resources/list`), `complete(var = path)` (a `fn(&CompletionRequest) ->
/// Vec<String>`), `crate = path`. Parameters take `#[arg(rename = "…")]` (the variable's name)
/// and `#[inject]` (see [`macro@tool`]).
///
/// A URI starting with `ui://` is an MCP App (SEP-1865): served as `text/html;profile=mcp-app`,
/// with `ui(csp(connect_domains = [...], resource_domains = [...], frame_domains = [...],
/// base_uri_domains = [...]), permissions(camera, microphone, geolocation, clipboard_write),
/// domain = "…", prefers_border = true)` for its `_meta.ui` (see `mcp_runtime::apps`).
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::resource(args.into(), input.into()).into()
}

/// Registers a function as an MCP prompt. Its parameters are the prompt's arguments (strings,
/// parsed with `FromStr`; `Option` ones are optional), described by their doc comments.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
///
/// /// Review a piece of code.
/// #[prompt(title = "Code review")]
/// fn review(
///     /// The code to review.
///     code: String,
///     /// How strict to be, 1 to 5.
///     strictness: Option<u8>,
/// ) -> Vec<PromptMessage> {
///     let level = strictness.unwrap_or(3);
///     vec![PromptMessage::user(format!("Review this code with strictness {level}:\n{code}"))]
/// }
/// # fn main() {}
/// ```
///
/// Arguments: `name`, `title`, `description`, `icon(...)`, `meta(...)`, `complete(arg = path)`,
/// `crate = path`. Parameters take doc comments, `#[arg(rename = "…", description = "…")]` and
/// `#[inject]` (see [`macro@tool`]); the JSON-only `#[arg(default)]`, `#[serde]` and `#[schemars]`
/// are errors here (an argument that may be absent is an `Option`). Returns: `String` (one user message), `PromptMessage`, `Vec<PromptMessage>` or
/// `GetPromptResult`, or a `Result` of one.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::prompt(args.into(), input.into()).into()
}
