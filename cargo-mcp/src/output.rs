//! Results for a person (the default) or for a script (`--json`: one JSON document).

use serde_json::Value;

/// Prints `value` as pretty JSON on stdout.
pub(crate) fn json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("JSON values serialize")
    );
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// `name(a: integer, b?: string)`: a tool's or prompt's signature from its input schema or
/// its argument list.
fn signature(name: &str, schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let params: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(param, p)| {
            let optional = if required.contains(&param.as_str()) {
                ""
            } else {
                "?"
            };
            let ty = text(p, "type").unwrap_or("value");
            format!("{param}{optional}: {ty}")
        })
        .collect();
    format!("{name}({})", params.join(", "))
}

/// The human listing of `list`: each kind under a heading, one line per entry.
pub(crate) fn listing(
    tools: &[Value],
    resources: &[Value],
    templates: &[Value],
    prompts: &[Value],
) {
    let section = |title: &str, items: &[Value], line: &dyn Fn(&Value) -> String| {
        if items.is_empty() {
            return;
        }
        println!("{title}:");
        for item in items {
            println!("  {}", line(item));
        }
    };
    let described = |head: String, v: &Value| match text(v, "description") {
        Some(d) => format!("{head}\n      {}", first_line(d)),
        None => head,
    };
    section("Tools", tools, &|t| {
        described(
            signature(text(t, "name").unwrap_or("?"), &t["inputSchema"]),
            t,
        )
    });
    section("Resources", resources, &|r| {
        described(
            format!(
                "{}  {}",
                text(r, "uri").unwrap_or("?"),
                text(r, "name").unwrap_or("")
            ),
            r,
        )
    });
    section("Resource templates", templates, &|r| {
        described(
            format!(
                "{}  {}",
                text(r, "uriTemplate").unwrap_or("?"),
                text(r, "name").unwrap_or("")
            ),
            r,
        )
    });
    section("Prompts", prompts, &|p| {
        let args: Vec<String> = p
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| {
                let optional = if a.get("required") == Some(&Value::Bool(true)) {
                    ""
                } else {
                    "?"
                };
                format!("{}{optional}", text(a, "name").unwrap_or("?"))
            })
            .collect();
        described(
            format!("{}({})", text(p, "name").unwrap_or("?"), args.join(", ")),
            p,
        )
    });
    if tools.is_empty() && resources.is_empty() && templates.is_empty() && prompts.is_empty() {
        println!("(the server offers nothing)");
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Content blocks as text: text as is, anything else named by its kind and size.
pub(crate) fn content(blocks: &[Value]) -> String {
    blocks
        .iter()
        .map(|b| match text(b, "type") {
            Some("text") => text(b, "text").unwrap_or("").to_owned(),
            Some("resource_link") => format!("[link {}]", text(b, "uri").unwrap_or("?")),
            Some("resource") => match b.get("resource") {
                Some(r) => match text(r, "text") {
                    Some(t) => t.to_owned(),
                    None => format!("[resource {}]", text(r, "uri").unwrap_or("?")),
                },
                None => "[resource]".to_owned(),
            },
            Some(kind) => format!(
                "[{kind} {}, {} base64 characters]",
                text(b, "mimeType").unwrap_or("?"),
                text(b, "data").map_or(0, str::len)
            ),
            None => b.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool result for a person: its text, or its structured content when it has no text.
pub(crate) fn tool_result(result: &Value) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let shown = content(&blocks);
    if shown.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        return serde_json::to_string_pretty(structured).expect("JSON values serialize");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn signatures_mark_optional_parameters() {
        let schema = json!({"properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                            "required": ["a"]});
        assert_eq!(signature("t", &schema), "t(a: integer, b?: string)");
    }

    #[test]
    fn results_show_text_else_structure() {
        assert_eq!(
            tool_result(&json!({"content": [{"type": "text", "text": "5"}]})),
            "5"
        );
        let s = tool_result(&json!({"content": [], "structuredContent": {"x": 1}}));
        assert_eq!(s, "{\n  \"x\": 1\n}");
        assert_eq!(
            content(&[json!({"type": "image", "mimeType": "image/png", "data": "AAAA"})]),
            "[image image/png, 4 base64 characters]"
        );
    }
}
