//! The fixture server of the official MCP conformance suite (`@modelcontextprotocol/conformance`).
//!
//! Run with: `cargo run -p example-conformance --bin conformance -- --http 127.0.0.1:3000` (it serves
//! `http://127.0.0.1:3000/mcp`), or let `tests/conformance/run.sh` build, start and score it.
//!
//! The suite calls fixed tool, resource and prompt names and checks what they return; they are
//! all here, with the names, descriptions and outputs of the suite's reference server
//! (`examples/servers/typescript/everything-server.ts` in the conformance repository). The same
//! fixtures serve both protocol eras: `ctx.elicit`, `ctx.sample` and `ctx.roots` are requests to
//! the client in the session era and input-required results in 2026-07-28. The tasks
//! extension's fixtures (`slow_compute`, `failing_job`, … ) are task tools (`#[tool(task = …)]`).
//! The skills in `examples/conformance/skills/` are served for the SEP-2640 (`sep-2640-*`) scenarios.
//! `CONFORMANCE_LEGACY_EXTENSIONS=1` declares the extensions of `server-legacy-extensions` (suite
//! main branch), whose echo tool `test_legacy_extension_capabilities` is always here.

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use serde_json::{Value, json};

/// A 1×1 PNG, base64 (the reference server's image).
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file, base64 (the reference server's audio).
const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// [`PNG_BASE64`] as image content.
fn png() -> Content {
    Content::Image {
        data: PNG_BASE64.into(),
        mime_type: "image/png".into(),
        annotations: None,
    }
}

/// `action=…, content=…` of an elicitation answer, as the reference server words it.
fn describe(answer: Elicitation<serde_json::Map<String, Value>>) -> String {
    match answer {
        Elicitation::Accept(content) => {
            format!("action=accept, content={}", Value::Object(content))
        }
        Elicitation::Decline => "action=decline".into(),
        Elicitation::Cancel => "action=cancel".into(),
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
async fn test_reconnection(ctx: Context) -> String {
    // Ends the POST's SSE stream after its priming event; the client resumes with a GET and
    // `Last-Event-ID` and receives the result from the event store.
    ctx.close_stream();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    "Reconnection test completed successfully".into()
}

/// Tests server-initiated sampling (LLM completion request)
#[tool]
async fn test_sampling(
    ctx: Context,
    /// The prompt to send to the LLM
    prompt: String,
) -> Result<String, McpError> {
    let answer = ctx.sample(Sampling::prompt(prompt, 100)).await?;
    Ok(format!(
        "LLM response: {}",
        answer.text().unwrap_or_default()
    ))
}

/// What `test_elicitation` asks for.
#[derive(Deserialize, Serialize, JsonSchema)]
struct Account {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Tests server-initiated elicitation (user input request)
#[tool]
async fn test_elicitation(
    ctx: Context,
    /// The message to show the user
    message: String,
) -> Result<String, McpError> {
    Ok(match ctx.elicit::<Account>(message).await? {
        Elicitation::Accept(account) => format!(
            "User response: action=accept, content={}",
            serde_json::to_string(&account).unwrap_or_default()
        ),
        Elicitation::Decline => "User response: action=decline".into(),
        Elicitation::Cancel => "User response: action=cancel".into(),
    })
}

/// Tests elicitation with default values per SEP-1034
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    });
    let answer = ctx
        .elicit_with_schema(
            "Please review and update the form fields with defaults",
            schema,
        )
        .await?;
    Ok(format!("Elicitation completed: {}", describe(answer)))
}

/// Tests elicitation with enum schema improvements per SEP-1330
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Choose an option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Choose a titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Choose a legacy option",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Choose multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Choose multiple titled options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}
            }
        },
        "required": []
    });
    let answer = ctx
        .elicit_with_schema("Please select options from the enum fields", schema)
        .await?;
    Ok(format!("Elicitation completed: {}", describe(answer)))
}

/// A postal address.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Address {
    /// Street and number
    street: Option<String>,
    /// City
    city: Option<String>,
}

/// The reference server's schema, published verbatim: `$schema`, `$defs` with an `$anchor`,
/// a `$ref`, composition (`allOf`/`anyOf`) and conditional (`if`/`then`/`else`) keywords.
fn json_schema_2020_12_input() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)
#[tool(input_schema = json_schema_2020_12_input)]
async fn json_schema_2020_12_tool(
    /// The person's name
    name: Option<String>,
    /// Where they live
    address: Option<Address>,
    /// How to reach them: phone or email
    #[arg(rename = "contactMethod")]
    contact_method: Option<String>,
    /// A phone number (required when contactMethod is phone)
    phone: Option<String>,
    /// An email address (required otherwise)
    email: Option<String>,
) -> String {
    let args = json!({
        "name": name, "address": address, "contactMethod": contact_method, "phone": phone, "email": email
    });
    format!("JSON Schema 2020-12 tool called with: {args}")
}

// ---------------------------------------------------------------------------------------------
// Tools of conformance 0.2 on the 2026-07-28 wire: diagnostics and input-required results
// ---------------------------------------------------------------------------------------------

/// Test tool requiring sampling
#[tool]
async fn test_missing_capability(ctx: Context) -> Result<CallToolResult, McpError> {
    if ctx.client_capabilities().get("sampling").is_none() {
        return Err(McpError::new(
            ErrorCode::MISSING_CLIENT_CAPABILITY,
            "MissingRequiredClientCapabilityError: this tool needs the client capability `sampling`",
        )
        .with_data(json!({ "requiredCapabilities": { "sampling": {} } })));
    }
    Ok(CallToolResult::success(vec![Content::text("Success")]))
}

/// Diagnostic tool validating response progress streams
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> String {
    // Frames before the result are notifications (progress), never a request.
    for done in [1.0, 2.0] {
        ctx.progress(done, Some(2.0), Some("streaming"));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    "Streaming complete".into()
}

/// Diagnostic logging validator tool
#[tool]
async fn test_logging_tool(ctx: Context) -> String {
    // Sent only when the request asks for logs (`_meta` log level, 2026-07-28).
    ctx.info("Logging tool invoked");
    "Logging evaluated".into()
}

/// Triggers notifications/tools/list_changed on the open subscriptions/listen streams
#[tool]
async fn test_trigger_tool_change(ctx: Context) -> String {
    ctx.catalog().tools_changed();
    "Tool list change notification sent".into()
}

/// Triggers notifications/prompts/list_changed on the open subscriptions/listen streams
#[tool]
async fn test_trigger_prompt_change(ctx: Context) -> String {
    ctx.catalog().prompts_changed();
    "Prompt list change notification sent".into()
}

/// A name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Your name
    name: String,
}

/// A confirmation.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Confirm to proceed
    ok: bool,
}

/// A favourite colour.
#[derive(Deserialize, JsonSchema)]
struct Color {
    /// Your favorite color
    color: String,
}

/// Some context for a prompt.
#[derive(Deserialize, JsonSchema)]
struct PromptContext {
    /// Context for the prompt
    context: String,
}

/// MRTR: returns InputRequiredResult with elicitation request
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, McpError> {
    let answer = ctx
        .ask_as("user_name")
        .elicit::<Name>("What is your name?")
        .await?;
    Ok(match answer {
        Elicitation::Accept(n) => format!("Hello, {}!", n.name),
        _ => "Hello, stranger!".into(),
    })
}

/// MRTR: returns InputRequiredResult with sampling request
#[tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, McpError> {
    let request = Sampling::prompt("What is the capital of France?", 100);
    let answer = ctx.ask_as("capital_question").sample(request).await?;
    Ok(format!(
        "Sampling result: {}",
        answer.text().unwrap_or_default()
    ))
}

/// MRTR: returns InputRequiredResult with roots/list request
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, McpError> {
    let roots = ctx.ask_as("client_roots").roots().await?;
    Ok(format!("Found {} root(s)", roots.len()))
}

/// MRTR: returns InputRequiredResult with requestState
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, McpError> {
    // The framework seals the answers of earlier rounds in `requestState` and verifies it.
    let answer = ctx
        .ask_as("confirm")
        .elicit::<Confirm>("Please confirm")
        .await?;
    Ok(format!(
        "state-ok: confirmed={}",
        answer.accepted().is_some_and(|c| c.ok)
    ))
}

/// MRTR: returns InputRequiredResult with multiple input requests
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, McpError> {
    // Asked together, so the first round carries all three.
    let (name, greeting, roots) = tokio::join!(
        ctx.ask_as("user_name").elicit::<Name>("What is your name?"),
        ctx.ask_as("greeting")
            .sample(Sampling::prompt("Generate a greeting", 50)),
        ctx.ask_as("client_roots").roots(),
    );
    let name = name?.accepted().map_or("stranger".into(), |n| n.name);
    let greeting = greeting?.text().unwrap_or_default();
    Ok(format!("{greeting} {name}; {} root(s)", roots?.len()))
}

/// MRTR: multi-round InputRequiredResult workflow
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, McpError> {
    let name = ctx
        .ask_as("step1")
        .elicit::<Name>("What is your name?")
        .await?;
    let color = ctx
        .ask_as("step2")
        .elicit::<Color>("What is your favorite color?")
        .await?;
    Ok(format!(
        "Done: name={}, color={}",
        name.accepted().map_or("?".into(), |n| n.name),
        color.accepted().map_or("?".into(), |c| c.color)
    ))
}

/// MRTR: HMAC-signed requestState integrity test
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, McpError> {
    // A tampered `requestState` never reaches this point: it is -32602.
    let answer = ctx
        .ask_as("confirm")
        .elicit::<Confirm>("Please confirm")
        .await?;
    Ok(format!(
        "integrity-ok: confirmed={}",
        answer.accepted().is_some_and(|c| c.ok)
    ))
}

/// MRTR: respects client capabilities in inputRequests
#[tool]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, McpError> {
    // Each ask is made only if the client can take it.
    let name = match ctx
        .ask_as("user_name")
        .elicit::<Name>("What is your name?")
        .await
    {
        Ok(answer) => answer.accepted().map_or("stranger".into(), |n| n.name),
        Err(e) if e.is_missing_capability() => "stranger".into(),
        Err(e) => return Err(e),
    };
    let greeting = match ctx
        .ask_as("greeting")
        .sample(Sampling::prompt("Generate a greeting", 50))
        .await
    {
        Ok(answer) => answer.text().unwrap_or_default(),
        Err(e) if e.is_missing_capability() => "Hello".into(),
        Err(e) => return Err(e),
    };
    Ok(format!("{greeting}, {name}!"))
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

/// Greets someone (synchronous only)
#[tool]
async fn greet(
    /// Who to greet
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Sleeps for a while, then reports the label (may run as a task)
#[tool(task = "optional")]
async fn slow_compute(
    /// How long to work, in seconds
    #[arg(default = 1.0)]
    seconds: f64,
    /// A label echoed in the result
    #[arg(default = String::from("job"))]
    label: String,
    ctx: Context,
) -> Result<String, String> {
    // A plain call (a client without tasks) is capped: the suite asks for up to 60 s with a
    // 10 s request timeout. A task runs as long as asked, until cancelled.
    let cap = if ctx.task_id().is_some() { 600.0 } else { 2.0 };
    let secs = seconds.clamp(0.0, cap);
    tokio::select! {
        _ = tokio::time::sleep(std::time::Duration::from_secs_f64(secs)) => Ok(format!("{label}: done after {secs} s")),
        _ = ctx.cancelled() => Err(format!("{label}: cancelled")),
    }
}

/// A task-required job that ends in a tool error
#[tool(task = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    Err("failing_job always fails".into())
}

/// A job that fails with a protocol error
#[tool(task = "optional")]
async fn protocol_error_job() -> Result<CallToolResult, McpError> {
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Err(McpError::internal(
        "protocol_error_job always fails with a protocol error",
    ))
}

/// The answer `confirm_delete` asks for.
#[derive(Deserialize, JsonSchema)]
struct ConfirmDelete {
    /// Whether to delete the file
    confirm: bool,
}

/// A task-required deletion that asks for confirmation
#[tool(task = "required")]
async fn confirm_delete(
    /// The file to delete
    filename: String,
    ctx: Context,
) -> Result<String, McpError> {
    let answer = ctx
        .elicit::<ConfirmDelete>(format!("Delete {filename}?"))
        .await?;
    Ok(match answer {
        Elicitation::Accept(ConfirmDelete { confirm: true }) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// One of `multi_input`'s answers.
#[derive(Deserialize, JsonSchema)]
struct Input {
    /// A name
    name: Option<String>,
    /// Whether to go on
    confirm: Option<bool>,
}

/// A task-required job that waits for two inputs
#[tool(task = "required")]
async fn multi_input(ctx: Context) -> Result<String, McpError> {
    let (a, b) = tokio::join!(
        ctx.ask_as("input-a").elicit::<Input>("First input"),
        ctx.ask_as("input-b").elicit::<Input>("Second input"),
    );
    let name = |answer: Elicitation<Input>| match answer {
        Elicitation::Accept(Input { name, confirm }) => format!(
            "{}{}",
            name.unwrap_or_default(),
            if confirm == Some(true) {
                " (confirmed)"
            } else {
                ""
            }
        ),
        _ => "(none)".into(),
    };
    Ok(format!("Got {} and {}", name(a?), name(b?)))
}

/// An input-required round, then a task
#[tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, McpError> {
    let answer = ctx
        .ask_upfront("user_name")
        .elicit::<Name>("What is your name?")
        .await?;
    let name = match answer {
        Elicitation::Accept(n) => n.name,
        _ => "stranger".into(),
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    Ok(format!("Hello, {name}! (from a task)"))
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
        meta: Default::default(),
    }
}

/// What the `template` resource returns, as JSON.
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
fn template(
    /// The id substituted into the URI and echoed in the data
    id: String,
) -> TemplateData {
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

/// Completions for `arg1` of `test_prompt_with_arguments`: the values that start with the input.
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
async fn test_input_required_result_prompt(ctx: Context) -> Result<String, McpError> {
    let answer = ctx
        .ask_as("user_context")
        .elicit::<PromptContext>("Please provide context")
        .await?;
    let context = answer.accepted().map_or(String::new(), |c| c.context);
    Ok(format!("Prompt with context: {context}"))
}

/// The extensions the `server-legacy-extensions` scenario expects the server to declare (its
/// `SERVER_EXTENSIONS`): the Apps one, and two with settings nobody can know in advance.
///
/// Declared only with `CONFORMANCE_LEGACY_EXTENSIONS=1`: the scenario says selecting it opts
/// into its fixture, and the fixture's settings hold a `null`, which the 2026-07-28 wire schema
/// of conformance 0.2.0-alpha.12 (whose `JSONValue` has no `null`) refuses in `server/discover`.
fn declared_extensions() -> Vec<(&'static str, Value)> {
    if std::env::var_os("CONFORMANCE_LEGACY_EXTENSIONS").is_none_or(|v| v != "1") {
        return Vec::new();
    }
    vec![
        ("io.modelcontextprotocol/ui", json!({})),
        (
            "com.example/conformance",
            json!({"nested": {"enabled": true, "limit": 3}, "values": [null, "b", 4]}),
        ),
        ("com.example/empty", json!({})),
    ]
}

/// Reports the extensions the client declared, as the `server-legacy-extensions` scenario
/// asks: `{"extensions": …}` as text, read through `Context` (never from the raw request).
#[tool]
fn test_legacy_extension_capabilities(ctx: Context) -> String {
    json!({ "extensions": ctx.client_extensions() }).to_string()
}

fn main() {
    // SEP-2640 skills (`examples/conformance/skills/`), for the suite's `sep-2640-*` scenarios.
    mcp_runtime::run!(
        skills_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/skills"),
        extensions = declared_extensions()
    );
}
