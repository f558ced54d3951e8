//! The `x-mcp-header` rules of 2026-07-28 HTTP (SEP-2243): which arguments of a tool a client
//! mirrors into `Mcp-Param-{Name}` headers. The server checks its tools against them at start-up
//! and reads the headers back; the client leaves out a server's tool that breaks them and
//! writes the headers. One definition, so both ends agree on what a valid annotation is.

use serde_json::Value;

/// An argument a client mirrors into an HTTP header: where it is in `arguments`, and the
/// header's `{name}` in `Mcp-Param-{name}`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HeaderParam {
    pub(crate) path: Vec<String>,
    pub(crate) name: String,
}

/// The `x-mcp-header` annotations of an input schema, checked against the spec's constraints:
/// a non-empty token, unique ignoring case, on a string, integer or boolean property reachable
/// from the root through `properties` alone.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    fn walk(
        schema: &Value,
        path: &mut Vec<String>,
        reachable: bool,
        out: &mut Vec<HeaderParam>,
    ) -> Result<(), String> {
        match schema {
            Value::Object(obj) => {
                if let Some(name) = obj.get("x-mcp-header") {
                    let at = if path.is_empty() {
                        "the root".to_owned()
                    } else {
                        format!("`{}`", path.join("."))
                    };
                    if !reachable || path.is_empty() {
                        return Err(format!(
                            "`x-mcp-header` on {at} is not reachable from the root through `properties` alone"
                        ));
                    }
                    let name = name
                        .as_str()
                        .ok_or_else(|| format!("`x-mcp-header` of {at} must be a string"))?;
                    let tchar =
                        |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
                    if name.is_empty() || !name.chars().all(tchar) {
                        return Err(format!(
                            "`x-mcp-header` {name:?} of {at} is not an HTTP token"
                        ));
                    }
                    // An optional argument may also allow `null` (the header is then omitted).
                    let kind = crate::schema::type_without_null(obj).ok().flatten();
                    if !matches!(kind, Some("string" | "integer" | "boolean")) {
                        return Err(format!(
                            "`x-mcp-header` is only allowed on string, integer and boolean properties ({at} is {})",
                            kind.unwrap_or("untyped")
                        ));
                    }
                    if out.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
                        return Err(format!(
                            "`x-mcp-header` {name:?} is used twice (names are compared ignoring case)"
                        ));
                    }
                    out.push(HeaderParam {
                        path: path.clone(),
                        name: name.to_owned(),
                    });
                }
                for (key, child) in obj {
                    if key == "properties" {
                        if let Value::Object(props) = child {
                            for (prop, sub) in props {
                                path.push(prop.clone());
                                walk(sub, path, reachable, out)?;
                                path.pop();
                            }
                        }
                    } else if key != "x-mcp-header" {
                        // Anywhere else (items, anyOf, $defs, …) an annotation is not reachable.
                        walk(child, &mut Vec::new(), false, out)?;
                    }
                }
                Ok(())
            }
            Value::Array(items) => items
                .iter()
                .try_for_each(|v| walk(v, &mut Vec::new(), false, out)),
            _ => Ok(()),
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_annotations_are_found_and_checked() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "options": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}},
            "plain": {"type": "string"},
            "maybe": {"type": ["integer", "null"], "x-mcp-header": "Maybe"}
        }});
        let found = header_params(&schema).unwrap();
        assert_eq!(
            found,
            [
                HeaderParam {
                    path: vec!["maybe".into()],
                    name: "Maybe".into()
                },
                HeaderParam {
                    path: vec!["options".into(), "dry".into()],
                    name: "Dry-Run".into()
                },
                HeaderParam {
                    path: vec!["region".into()],
                    name: "Region".into()
                },
            ]
        );
        let bad = |props: serde_json::Value| {
            header_params(&json!({"type": "object", "properties": props})).unwrap_err()
        };
        assert!(
            bad(json!({"n": {"type": "number", "x-mcp-header": "N"}})).contains("only allowed on")
        );
        assert!(
            bad(json!({"n": {"type": "string", "x-mcp-header": "Bad Name"}}))
                .contains("HTTP token")
        );
        assert!(bad(json!({"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}})).contains("twice"));
        assert!(
            bad(json!({"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}))
                .contains("not reachable")
        );
        let e = header_params(&json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]})).unwrap_err();
        assert!(e.contains("not reachable"), "{e}");
    }
}
