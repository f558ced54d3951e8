//! Every attribute form and parameter kind `#[tool]` accepts.
extern crate mcp_runtime as mcp;

use mcp::prelude::*;

type IoResult<T> = Result<T, std::io::Error>;

#[derive(Deserialize, JsonSchema)]
struct Filter {
    tag: String,
}

/// Everything at once.
#[tool(
    name = "every_form",
    title = "Every form",
    description = "Overrides the doc comment.",
    annotations(title = "Annotated", read_only, destructive = false, idempotent = true, open_world = false),
    icon = "https://example.com/a.png",
    icon(src = "data:image/png;base64,AA==", mime_type = "image/png", sizes = ["48x48", "any"], theme = "dark"),
    icon(src = "https://example.com/b.svg", sizes = "any"),
    meta(owner = "team-a", "io.example/priority" = 3, ratio = 0.5, beta = true),
    crate = mcp
)]
async fn every_form(
    ctx: Context,
    /// Doc on a parameter.
    #[arg(rename = "filterBy", description = "Override.")]
    filter: Option<Filter>,
    #[arg(default)] verbose: bool,
    #[arg(default = 3)] mut retries: u8,
    #[serde(alias = "lim")] limit: Option<u32>,
    r#type: String,
) -> IoResult<Vec<Content>> {
    retries += 1;
    let _ = (ctx.request_id(), filter, verbose, limit, r#type, retries);
    Ok(vec![Content::text("ok")])
}

#[tool(crate = mcp)]
fn sync_with_ref_context(ctx: &Context, n: i64) -> Json<i64> {
    let _ = ctx.protocol_version();
    Json(n)
}

#[tool(crate = mcp)]
async fn unit() {}

#[tool(crate = ::mcp_runtime)]
async fn returns_raw() -> CallToolResult {
    CallToolResult::success(vec![])
}

/// `run!` works through a renamed dependency and takes a transport in code.
#[allow(dead_code)]
fn serve_in_code() {
    mcp::run!("127.0.0.1:8000");
}

fn main() {
    let server = mcp::Server::builder().build().unwrap();
    let names: Vec<_> = server.tool_names().collect();
    assert_eq!(names, ["every_form", "returns_raw", "sync_with_ref_context", "unit"]);
    let _ = every_form;
    let _ = sync_with_ref_context;
}
