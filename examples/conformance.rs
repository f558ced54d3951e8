//! The fixture server of the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//!
//! Run with: `cargo run --example conformance -- --http 127.0.0.1:3000` (it serves
//! `http://127.0.0.1:3000/mcp`), or let `tests/conformance/run.sh` build, start and score it.
//!
//! The suite calls fixed tool, resource and prompt names and checks what they return; they are
//! all here, with the names, descriptions and outputs of the suite's reference server
//! (`examples/servers/typescript/everything-server.ts` in the conformance repository). Fixtures
//! that need a feature the framework does not have yet (progress, logging, sampling,
//! elicitation, input-required results, tasks, list-changed notifications, SSE responses on
//! POST) are registered under their exact name and description but answer with an `isError`
//! result that names the missing feature: they never pretend to work.
//! `tests/conformance/expected-failures.txt` lists the checks that fail because of them.

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::tool::{OutputMode, ToolOutput};

/// A 1×1 PNG, base64 (the reference server's image).
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file, base64 (the reference server's audio).
const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn png() -> Content {
    Content::Image {
        data: PNG_BASE64.into(),
        mime_type: "image/png".into(),
        annotations: None,
    }
}

/// The answer of a fixture whose behaviour needs a feature the framework does not have yet.
fn not_supported(feature: &str) -> CallToolResult {
    CallToolResult::error(format!("not supported yet: needs {feature}"))
}

/// A tool result that may also be a JSON-RPC error (a protocol error, not a tool error).
struct Rpc(Result<CallToolResult, McpError>);

impl ToolOutput for Rpc {
    fn into_call_result(self, _: OutputMode) -> Result<CallToolResult, McpError> {
        self.0
    }
}

// ---------------------------------------------------------------------------------------------
// Tools of conformance 0.1.16 (both protocol eras)
// ---------------------------------------------------------------------------------------------

/// Tests simple text content response
#[tool]
async fn test_simple_text() -> Content {
    Content::text("This is a simple text response for testing.")
}

/// Tests image content response
#[tool]
async fn test_image_content() -> Content {
    png()
}

/// Tests audio content response
#[tool]
async fn test_audio_content() -> Content {
    Content::Audio {
        data: WAV_BASE64.into(),
        mime_type: "audio/wav".into(),
        annotations: None,
    }
}

/// Tests embedded resource content response
#[tool]
async fn test_embedded_resource() -> Content {
    Content::resource(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .with_mime_type("text/plain"),
    )
}

/// Tests response with multiple content types (text, image, resource)
#[tool]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        png(),
        Content::resource(
            ResourceContents::text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .with_mime_type("application/json"),
        ),
    ]
}

/// Tests tool that emits log messages during execution
#[tool]
async fn test_tool_with_logging(ctx: Context) -> String {
    for message in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        ctx.info(message);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    "Logging test completed".into()
}

/// Tests tool that reports progress notifications
#[tool]
async fn test_tool_with_progress(ctx: Context) -> String {
    for done in [0.0, 50.0, 100.0] {
        ctx.progress(done, Some(100.0), None);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    "Progress test completed".into()
}

/// Tests error response handling
#[tool]
async fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".into())
}

/// Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream mid-call and send the result after client reconnects.
#[tool]
async fn test_reconnection() -> CallToolResult {
    not_supported("SSE responses on POST with stream resumption")
}

/// Tests server-initiated sampling (LLM completion request)
#[tool]
async fn test_sampling(
    /// The prompt to send to the LLM
    prompt: String,
) -> CallToolResult {
    let _ = prompt;
    not_supported("sampling (server-to-client requests)")
}

/// Tests server-initiated elicitation (user input request)
#[tool]
async fn test_elicitation(
    /// The message to show the user
    message: String,
) -> CallToolResult {
    let _ = message;
    not_supported("elicitation (server-to-client requests)")
}

/// Tests elicitation with default values per SEP-1034
#[tool]
async fn test_elicitation_sep1034_defaults() -> CallToolResult {
    not_supported("elicitation (server-to-client requests)")
}

/// Tests elicitation with enum schema improvements per SEP-1330
#[tool]
async fn test_elicitation_sep1330_enums() -> CallToolResult {
    not_supported("elicitation (server-to-client requests)")
}

/// A postal address.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(rename = "address")]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)
#[tool]
async fn json_schema_2020_12_tool(name: Option<String>, address: Option<Address>) -> String {
    let args = serde_json::json!({ "name": name, "address": address });
    format!("JSON Schema 2020-12 tool called with: {args}")
}

// ---------------------------------------------------------------------------------------------
// Tools of conformance 0.2 on the 2026-07-28 wire: diagnostics and input-required results
// ---------------------------------------------------------------------------------------------

/// Test tool requiring sampling
#[tool]
async fn test_missing_capability(ctx: Context) -> Rpc {
    if ctx.client_capabilities().get("sampling").is_none() {
        return Rpc(Err(McpError::new(
            ErrorCode::MISSING_CLIENT_CAPABILITY,
            "MissingRequiredClientCapabilityError: this tool needs the client capability `sampling`",
        )
        .with_data(serde_json::json!({ "requiredCapabilities": { "sampling": {} } }))));
    }
    Rpc(Ok(CallToolResult::success(vec![Content::text("Success")])))
}

/// Diagnostic tool validating response progress streams
#[tool]
async fn test_streaming_elicitation() -> String {
    // The reference streams a progress notification before the result; this server cannot put
    // notifications on a POST response yet, so the result comes alone (and never a request).
    "Streaming complete (no progress frames: notifications on a POST response are not supported yet)"
        .into()
}

/// Diagnostic logging validator tool
#[tool]
async fn test_logging_tool() -> String {
    // Logs are due only when the request asks for them with `_meta.logLevel`; this server
    // cannot send log notifications at all yet, so it never does.
    "Logging evaluated (no log notifications: logging is not supported yet)".into()
}

/// Triggers notifications/tools/list_changed on the open subscriptions/listen streams
#[tool]
async fn test_trigger_tool_change() -> CallToolResult {
    not_supported("list-changed notifications (subscriptions/listen)")
}

/// Triggers notifications/prompts/list_changed on the open subscriptions/listen streams
#[tool]
async fn test_trigger_prompt_change() -> CallToolResult {
    not_supported("list-changed notifications (subscriptions/listen)")
}

const MRTR: &str = "input-required results (SEP-2322)";

/// MRTR: returns InputRequiredResult with elicitation request
#[tool]
async fn test_input_required_result_elicitation() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: returns InputRequiredResult with sampling request
#[tool]
async fn test_input_required_result_sampling() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: returns InputRequiredResult with roots/list request
#[tool]
async fn test_input_required_result_list_roots() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: returns InputRequiredResult with requestState
#[tool]
async fn test_input_required_result_request_state() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: returns InputRequiredResult with multiple input requests
#[tool]
async fn test_input_required_result_multiple_inputs() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: multi-round InputRequiredResult workflow
#[tool]
async fn test_input_required_result_multi_round() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: HMAC-signed requestState integrity test
#[tool]
async fn test_input_required_result_tampered_state() -> CallToolResult {
    not_supported(MRTR)
}

/// MRTR: respects client capabilities in inputRequests
#[tool]
async fn test_input_required_result_capabilities() -> CallToolResult {
    not_supported(MRTR)
}

/// Tests SEP-2243 custom headers: the value argument is mirrored in the Mcp-Param-Value header
#[tool]
async fn test_custom_header(
    /// A value the client also sends in the `Mcp-Param-Value` header
    #[schemars(extend("x-mcp-header" = "Value"))]
    value: String,
) -> String {
    format!("Received value: {value}")
}

// ---------------------------------------------------------------------------------------------
// Tools of the tasks extension scenarios (SEP-2663; run but not scored)
// ---------------------------------------------------------------------------------------------

const TASKS: &str = "the tasks extension (SEP-2663)";

/// Greets someone (synchronous only)
#[tool]
async fn greet(
    /// Who to greet
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Sleeps for a while, then reports the label (may run as a task)
#[tool]
async fn slow_compute(
    /// How long to work, in seconds (at most 2)
    #[arg(default = 1.0)]
    seconds: f64,
    /// A label echoed in the result
    #[arg(default = String::from("job"))]
    label: String,
    ctx: Context,
) -> Result<String, String> {
    // Capped: without tasks this runs synchronously, and the suite asks for up to 60 s with a
    // 10 s request timeout.
    let secs = seconds.clamp(0.0, 2.0);
    tokio::select! {
        _ = tokio::time::sleep(std::time::Duration::from_secs_f64(secs)) => Ok(format!("{label}: done after {secs} s")),
        _ = ctx.cancelled() => Err(format!("{label}: cancelled")),
    }
}

/// A task-required job that ends in a tool error
#[tool]
async fn failing_job() -> CallToolResult {
    not_supported(TASKS)
}

/// A job that fails with a protocol error
#[tool]
async fn protocol_error_job() -> Rpc {
    Rpc(Err(McpError::internal(
        "protocol_error_job always fails with a protocol error",
    )))
}

/// A task-required deletion that asks for confirmation
#[tool]
async fn confirm_delete(
    /// The file to delete
    filename: String,
) -> CallToolResult {
    let _ = filename;
    not_supported(TASKS)
}

/// A task-required job that waits for two inputs
#[tool]
async fn multi_input() -> CallToolResult {
    not_supported(TASKS)
}

/// An input-required round, then a task
#[tool]
async fn test_tool_with_task() -> CallToolResult {
    not_supported(TASKS)
}

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

/// A static text resource for testing
#[resource(
    "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (image) for testing
#[resource(
    "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
fn static_binary() -> ResourceContents {
    ResourceContents::Blob {
        uri: "test://static-binary".into(),
        mime_type: Some("image/png".into()),
        blob: PNG_BASE64.into(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TemplateData {
    id: String,
    template_test: bool,
    data: String,
}

/// A resource template with parameter substitution
#[resource(
    "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
fn template(id: String) -> TemplateData {
    TemplateData {
        data: format!("Data for ID: {id}"),
        id,
        template_test: true,
    }
}

/// A resource that auto-updates every 3 seconds
#[resource(
    "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain"
)]
fn watched_resource() -> &'static str {
    "Watched resource content"
}

/// A static text resource served on the draft path
#[resource(
    "test://stateless-static-text",
    name = "Stateless Static Text",
    mime_type = "text/plain"
)]
fn stateless_static_text() -> &'static str {
    "Static text content from the stateless draft path."
}

// ---------------------------------------------------------------------------------------------
// Prompts and completion
// ---------------------------------------------------------------------------------------------

/// A simple prompt without arguments
#[prompt(title = "Simple Test Prompt")]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with required arguments
#[prompt(title = "Prompt With Arguments", complete(arg1 = complete_arg))]
fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

fn complete_arg(request: &CompletionRequest) -> Vec<String> {
    ["testValue1", "testValue2", "value"]
        .iter()
        .filter(|v| v.starts_with(&request.value))
        .map(|v| v.to_string())
        .collect()
}

/// A prompt that includes an embedded resource
#[prompt(title = "Prompt With Embedded Resource")]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            Content::resource(
                ResourceContents::text(resource_uri, "Embedded resource content for testing.")
                    .with_mime_type("text/plain"),
            ),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt that includes image content
#[prompt(title = "Prompt With Image")]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, png()),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// MRTR: prompt that requires elicitation input
#[prompt]
fn test_input_required_result_prompt() -> Result<String, McpError> {
    Err(McpError::internal(format!(
        "not supported yet: needs {MRTR}"
    )))
}

fn main() {
    mcp_runtime::run!();
}
