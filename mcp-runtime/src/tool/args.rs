//! Turning the client's `arguments` into the generated argument struct, with errors that name
//! the offending field so the model can correct itself.

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::protocol::CallToolResult;
use crate::protocol::jsonrpc::strip_position;

/// Parses a tool's `arguments` (absent or `null` mean `{}`).
///
/// On failure returns the `isError` result to send: the message names the tool, the field path
/// and what was wrong.
pub fn parse_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<&RawValue>,
) -> Result<T, CallToolResult> {
    let text = match arguments.map(RawValue::get) {
        None | Some("null") => "{}",
        Some(text) => text,
    };
    if !text.trim_start().starts_with('{') {
        return Err(CallToolResult::error(format!(
            "Invalid arguments for tool `{tool}`: `arguments` must be a JSON object"
        )));
    }
    // The fast path parses once; only a failure pays for tracking the path to the bad field.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let what = strip_position(e.inner());
        CallToolResult::error(if path == "." || path.is_empty() {
            format!("Invalid arguments for tool `{tool}`: {what}")
        } else {
            format!("Invalid arguments for tool `{tool}`: `{path}`: {what}")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Content;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        a: i64,
        inner: Option<Inner>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        list: Vec<u8>,
    }

    fn message(raw: &str) -> String {
        let raw = RawValue::from_string(raw.to_owned()).unwrap();
        let err = parse_arguments::<Args>("t", Some(&raw)).unwrap_err();
        assert!(err.is_error());
        match &err.content[0] {
            Content::Text { text, .. } => text.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_the_field_in_every_kind_of_error() {
        assert_eq!(
            message("{}"),
            "Invalid arguments for tool `t`: missing field `a`"
        );
        assert_eq!(
            message(r#"{"a":"x"}"#),
            "Invalid arguments for tool `t`: `a`: invalid type: string \"x\", expected i64"
        );
        assert!(message(r#"{"a":1,"b":2}"#).contains("unknown field `b`"));
        assert!(message(r#"{"a":1,"inner":{"list":[1,300]}}"#).starts_with(
            "Invalid arguments for tool `t`: `inner.list[1]`: invalid value: integer `300`"
        ));
        assert!(message("[1]").contains("must be a JSON object"));
    }

    #[test]
    fn absent_and_null_arguments_mean_an_empty_object() {
        #[derive(serde::Deserialize)]
        struct Empty {}
        assert!(parse_arguments::<Empty>("t", None).is_ok());
        let null = RawValue::from_string("null".into()).unwrap();
        assert!(parse_arguments::<Empty>("t", Some(&null)).is_ok());
    }
}
