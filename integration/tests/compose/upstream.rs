//! The 2026-07-28 upstream of `compose.rs`'s proxy tests: what a proxy must pass on as it is
//! (input rounds, the client's capabilities, tasks, `x-mcp-header` arguments, list changes).
//! Its items are told apart from the others by this file's name.

use mcp_runtime::prelude::*;

/// A name.
#[derive(Deserialize, JsonSchema)]
pub struct Name {
    /// Your name
    pub name: String,
}

/// Asks for a name and for a greeting at once (one input round of two requests).
#[tool]
pub async fn name_and_greeting(ctx: Context) -> Result<String, McpError> {
    let (name, greeting) = tokio::join!(
        ctx.ask_as("user_name").elicit::<Name>("What is your name?"),
        ctx.ask_as("greeting")
            .sample(Sampling::prompt("Generate a greeting", 20)),
    );
    let name = name?.accepted().map_or("stranger".into(), |n| n.name);
    Ok(format!("{} {name}", greeting?.text().unwrap_or_default()))
}

/// The capabilities of the client, as this server sees them.
#[tool]
pub async fn client_caps(ctx: Context) -> String {
    ctx.client_capabilities().to_string()
}

/// Says where it was served, from an argument mirrored into the `Mcp-Param-Region` header.
#[tool]
pub async fn in_region(
    /// The region
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
) -> String {
    format!("served in {region}")
}

/// Announces that the tool list changed.
#[tool]
pub async fn change_tools(ctx: Context) -> &'static str {
    ctx.catalog().tools_changed();
    "changed"
}

/// Lets `job` finish (a job done at once is answered with its result, not a task).
pub static JOB_MAY_FINISH: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// A job that runs only as a task, until [`JOB_MAY_FINISH`].
#[tool(task = "required")]
pub async fn job() -> String {
    JOB_MAY_FINISH.notified().await;
    "job done".into()
}

/// A job that runs only as a task, and never ends by itself.
#[tool(task = "required")]
pub async fn endless_job(ctx: Context) -> String {
    ctx.cancelled().await;
    "cancelled".into()
}
