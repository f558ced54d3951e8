//! A handler that elicits a form shaped wrongly, named with a turbofish, stops the server from
//! starting: the error names the handler, where it is, and the offending field.

use mcp_runtime::prelude::*;
use mcp_runtime::{BuildError, Server};

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

/// Elicits a valid form: no error for it.
#[prompt]
async fn ask_name(ctx: Context) -> Result<String, McpError> {
    let _ = ctx.elicit::<Name>("Name?").await?;
    Ok("ok".into())
}

#[test]
fn an_invalid_form_is_a_start_up_error_naming_the_handler_and_field() {
    let err = Server::builder().build().unwrap_err();
    match &err {
        BuildError::InvalidForm {
            owner,
            location,
            reason,
        } => {
            assert_eq!(owner, "signup");
            assert!(location.starts_with("tests/form_check.rs:"), "{location}");
            assert!(reason.contains("field `address`"), "{reason}");
        }
        other => panic!("expected InvalidForm, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("`signup`") && message.contains("elicits an invalid form"),
        "{message}"
    );
}

#[test]
fn a_tool_left_out_by_the_filter_is_not_checked() {
    let server = Server::builder()
        .tool_filter(|t| t.name != "signup")
        .build()
        .expect("the invalid form belongs to a tool that is not served");
    assert!(server.tool_names().all(|n| n != "signup"));
}
