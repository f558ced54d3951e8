//! The 2026-07-28 request headers a client sends over HTTP (SEP-2243): `Mcp-Method`,
//! `Mcp-Name`, and `Mcp-Param-{Name}` for the arguments a tool marks with `x-mcp-header`.

use base64::Engine as _;
use serde_json::Value;

use crate::protocol::headers::HeaderParam;

/// A header value as the spec encodes it: plain when it is visible ASCII (spaces inside
/// allowed), otherwise `=?base64?{UTF-8 bytes, base64}?=` (non-ASCII, control characters,
/// leading or trailing whitespace).
pub(crate) fn encode_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ');
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// The name `Mcp-Name` mirrors for a request: `params.name` (tools, prompts), `params.uri`
/// (resources) or `params.taskId` (tasks).
pub(crate) fn name_of(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    params.get(key).and_then(Value::as_str).map(encode_value)
}

/// `Mcp-Param-{Name}` headers for a `tools/call`'s arguments: one per annotated argument that
/// is present and not null (strings encoded, booleans and numbers as their JSON text).
pub(crate) fn param_headers(params: &[HeaderParam], arguments: &Value) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|p| {
            let value = p.path.iter().try_fold(arguments, |v, k| v.get(k))?;
            let text = match value {
                Value::String(s) => encode_value(s),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some((format!("Mcp-Param-{}", p.name), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_base64_only_when_needed() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("us west 1"), "us west 1");
        assert_eq!(encode_value(""), "");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert!(encode_value(" padded ").starts_with("=?base64?"));
        assert!(encode_value("line1\nline2").starts_with("=?base64?"));
        assert!(encode_value("\tindented").starts_with("=?base64?"));
    }

    #[test]
    fn params_mirror_present_primitive_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "v": {"type": ["boolean", "null"], "x-mcp-header": "Verbose"},
            "q": {"type": "string"}
        }});
        let params = crate::protocol::headers::header_params(&schema).unwrap();
        let got = param_headers(
            &params,
            &json!({"region": "eu", "n": 42, "v": null, "q": "x"}),
        );
        let mut got: Vec<_> = got.into_iter().collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-N".to_owned(), "42".to_owned()),
                ("Mcp-Param-Region".to_owned(), "eu".to_owned())
            ]
        );
        let bad = json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A B"}}});
        assert!(crate::protocol::headers::header_params(&bad).is_err());
        assert_eq!(
            name_of("resources/read", &json!({"uri": "file:///a b"})).as_deref(),
            Some("file:///a b")
        );
        assert_eq!(name_of("tools/list", &json!({})), None);
    }
}
