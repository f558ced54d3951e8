//! Injection: the built-ins need no marker, any `FromContext` type takes `#[inject]`, and
//! aliases work with the marker. In all three macros.
use mcp_runtime::prelude::*;
use mcp_runtime::FromContext;

type Ctx = Context;
type Counter = State<u32>;

/// The caller, from a request header.
struct Caller(String);

impl FromContext for Caller {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        let name = ctx
            .headers()
            .and_then(|h| h.get("x-caller"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or("anonymous");
        Ok(Caller(name.to_owned()))
    }
}

#[tool]
async fn builtins(ctx: Context, by_ref: &Context, n: State<u32>, m: &State<u32>, x: i64) -> i64 {
    let _ = (ctx, by_ref, m);
    x + i64::from(*n)
}

#[tool]
async fn marked(#[inject] caller: Caller, #[inject] ctx: Ctx, #[inject] n: &Counter, x: i64) -> String {
    let _ = (ctx, n);
    format!("{} {x}", caller.0)
}

#[tool]
fn sync_marked(/// Docs on an injected parameter are fine.
    #[inject] caller: Caller) -> String {
    caller.0
}

#[prompt]
fn greeting(#[inject] caller: Caller, topic: String) -> String {
    format!("{}: {topic}", caller.0)
}

#[resource("callers://{id}")]
fn caller_profile(#[inject] caller: Caller, id: u64) -> String {
    format!("{} {id}", caller.0)
}

fn main() {
    let server = mcp_runtime::Server::builder().state(1u32).build().unwrap();
    let marked = server.tools().find(|t| t.name == "marked").unwrap();
    let properties = marked.input_schema["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["x"]);
}
