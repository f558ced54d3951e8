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

/// `run!` works through a renamed dependency and takes a transport and states in code.
#[allow(dead_code)]
fn serve_in_code() {
    mcp::run!("127.0.0.1:8000");
}

#[allow(dead_code)]
fn serve_with_state() {
    mcp::run!(state = 5u32, state = String::from("x"));
}

#[allow(dead_code)]
fn serve_with_transport_and_state() {
    mcp::run!("stdio", state = 5u32);
}

/// A tool taking shared state.
#[tool(crate = mcp)]
async fn stateful(n: mcp::State<u32>) -> u32 {
    *n
}

fn main() {
    let server = mcp::Server::builder().build().unwrap();
    let names: Vec<_> = server.tool_names().collect();
    assert_eq!(
        names,
        // Source order (file, then line).
        ["every_form", "sync_with_ref_context", "unit", "returns_raw", "stateful", "echo", "ctx", "old_tool", "labelled", "elicits", "consult"]
    );
    let _ = every_form;
    let _ = sync_with_ref_context;
}

mod naming {
    use mcp::prelude::*;

    /// A parameter named like its fn, and one named like the adapter's locals.
    #[tool(crate = mcp)]
    pub async fn echo(echo: String, __mcp_context: Option<u8>) -> String {
        let _ = __mcp_context;
        echo
    }

    /// The same in a sync tool, with `Context` under the fn's name.
    #[tool(crate = mcp)]
    pub fn ctx(ctx: mcp::Context) -> String {
        ctx.request_id().to_string()
    }

    #[deprecated(note = "still served")]
    #[tool(crate = mcp)]
    pub async fn old_tool() {}

    #[tool(crate = mcp)]
    #[cfg(any())]
    pub async fn compiled_out() {}

    /// A user type that happens to be called `Context`, marked as an argument.
    #[derive(Deserialize, JsonSchema)]
    pub struct Context {
        pub label: String,
    }

    #[tool(crate = mcp)]
    pub async fn labelled(#[arg(description = "Not injected.")] context: Context) -> String {
        context.label
    }
}

mod resources_and_prompts {
    use mcp::prelude::*;

    fn ids(_: &CompletionRequest) -> Vec<String> {
        Vec::new()
    }

    fn all() -> Vec<Resource> {
        Vec::new()
    }

    /// Every resource argument.
    #[resource(
        "docs://{section}/{+path}{?rev}",
        name = "doc",
        title = "A document",
        description = "Overrides the doc comment.",
        mime_type = "text/markdown",
        annotations(audience = ["user", "assistant"], priority = 0.8, last_modified = "2026-11-30T00:00:00Z"),
        icon = "https://example.com/doc.png",
        meta(owner = "docs"),
        list = all,
        complete(section = ids, path = ids),
        crate = mcp
    )]
    pub async fn doc(ctx: Context, section: String, path: String, rev: Option<u32>) -> Result<String, NotFound> {
        let _ = (ctx, section, path, rev);
        Err(NotFound)
    }

    #[resource("size://fixed", size = 4, crate = mcp)]
    pub fn fixed() -> Vec<u8> {
        vec![1, 2, 3, 4]
    }

    /// Every prompt argument.
    #[prompt(name = "review", title = "Review", icon = "https://example.com/r.png", meta(kind = "review"), complete(code = ids), crate = mcp)]
    pub fn review_code(
        /// The code.
        code: String,
        #[arg(rename = "maxLines", description = "Limit.")] max_lines: Option<usize>,
        ctx: &mcp::Context,
    ) -> Vec<PromptMessage> {
        let _ = (ctx, max_lines);
        vec![PromptMessage::user(code)]
    }

    /// A form the tool elicits, checked at start-up.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Answer {
        pub yes: bool,
    }

    /// Elicits forms: a named one (checked at start-up), one declared in the body and an
    /// inferred one (both checked when asked), and a schema given by a fn.
    #[tool(input_schema = raw_schema, crate = mcp)]
    pub async fn elicits(ctx: mcp::Context) -> Result<String, mcp::McpError> {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Local {
            note: String,
        }
        let a = ctx.elicit::<Answer>("Yes?").await?;
        let b = ctx.elicit::<Local>("Note?").await?;
        let c: mcp::Elicitation<Answer> = ctx.ask_as("third").elicit("Again?").await?;
        Ok(format!("{} {} {}", a.accepted().is_some(), b.accepted().map_or(String::new(), |l| l.note), c.accepted().is_some()))
    }

    /// Something of the user's own with an `elicit` method: not a form, not checked as one.
    pub struct Oracle;

    impl Oracle {
        pub fn elicit<T: Default>(&self) -> T {
            T::default()
        }
    }

    /// Calls the user's own `elicit` with a type that is not a form.
    #[tool(crate = mcp)]
    pub fn consult() -> String {
        struct NotAForm;
        let _ = Oracle.elicit::<std::collections::hash_map::RandomState>();
        let _ = NotAForm;
        "ok".into()
    }

    pub fn raw_schema() -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
}
