//! A handler that elicits a form shaped wrongly: the server still starts (the macros read
//! signatures, not bodies), the ask fails with an error naming the offending field, and
//! `testing::check_form` finds the problem in a unit test before any client does.

use std::sync::Arc;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::{TestClient, check_form};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// An address (a nested object: not allowed in a form).
#[derive(Deserialize, JsonSchema)]
struct Address {
    #[allow(dead_code)]
    street: String,
}

/// A form with a nested object.
#[derive(Deserialize, JsonSchema)]
struct Signup {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    address: Address,
}

/// Signs the user up.
#[tool]
async fn signup(ctx: Context) -> Result<String, McpError> {
    let answer = ctx.elicit::<Signup>("Sign up").await?;
    Ok(answer.accepted().map_or("no".into(), |s| s.name))
}

/// A valid form.
#[derive(Deserialize, JsonSchema)]
struct Name {
    #[allow(dead_code)]
    name: String,
}

/// Elicits a valid form.
#[prompt]
async fn ask_name(ctx: Context) -> Result<String, McpError> {
    let _ = ctx.elicit::<Name>("Name?").await?;
    Ok("ok".into())
}

#[test]
fn check_form_names_the_offending_field() {
    check_form::<Name>().unwrap();
    let reason = check_form::<Signup>().unwrap_err();
    assert!(
        reason.contains("`Signup` cannot be an elicitation form")
            && reason.contains("field `address`"),
        "{reason}"
    );
}

#[tokio::test]
async fn an_invalid_form_fails_the_ask_not_the_start_up() {
    let server = Server::builder()
        .build()
        .expect("forms are checked when asked for, not at start-up");
    let answer: mcp_runtime::testing::Answer =
        Arc::new(|_: &str, _: &Value| Ok(json!({"action": "accept", "content": {"name": "Ada"}})));
    let client = TestClient::connect_answering(
        server,
        ProtocolVersion::V2025_11_25,
        json!({"elicitation": {}}),
        Some(answer),
    )
    .await
    .unwrap();
    let e = client.call_tool("signup", json!({})).await.unwrap_err();
    assert!(
        e.message.contains("`Signup` cannot be an elicitation form")
            && e.message.contains("field `address`"),
        "{e}"
    );
    assert!(
        client.take_asks().is_empty(),
        "nothing is sent to the client"
    );
}
