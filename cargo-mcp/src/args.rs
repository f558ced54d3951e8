//! Arguments from the command line as a JSON object: `key=value` pairs typed by the input
//! schema (so `a=2` is the integer 2 for an integer parameter and the string "2" for a string
//! one), or one JSON object given whole.

use serde_json::{Map, Value};

use crate::Failure;

/// `args` as the arguments object of a tool (or prompt) whose input schema is `schema`
/// (`None`: untyped, every value a string). `what` names it in errors ("tool add").
pub(crate) fn parse(
    args: &[String],
    schema: Option<&Value>,
    what: &str,
) -> Result<Map<String, Value>, Failure> {
    if let [only] = args
        && only.trim_start().starts_with('{')
    {
        return match serde_json::from_str::<Value>(only) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(Failure::usage(format!(
                "the arguments of {what} must be a JSON object"
            ))),
            Err(e) => Err(Failure::usage(format!(
                "the arguments of {what} are not JSON: {e}"
            ))),
        };
    }
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let mut out = Map::new();
    for arg in args {
        let Some((key, raw)) = arg.split_once('=') else {
            return Err(Failure::usage(format!(
                "{arg:?} is not an argument: write key=value, or one JSON object"
            )));
        };
        let value = match (schema, properties.and_then(|p| p.get(key))) {
            (None, _) => Value::String(raw.to_owned()),
            (Some(_), Some(property)) => typed(key, raw, property)?,
            (Some(_), None) => {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(Failure::usage(format!(
                    "{what} has no argument {key:?} (its arguments: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        };
        if out.insert(key.to_owned(), value).is_some() {
            return Err(Failure::usage(format!("{key:?} is given twice")));
        }
    }
    Ok(out)
}

/// The JSON types a property's schema allows (`type` as a string or a list, and the types of
/// `anyOf`/`oneOf` branches, as an `Option<T>` gives); empty when it does not say.
fn types(property: &Value) -> Vec<&str> {
    let mut found = Vec::new();
    match property.get("type") {
        Some(Value::String(t)) => found.push(t.as_str()),
        Some(Value::Array(ts)) => found.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = property.get(key) {
            found.extend(branches.iter().flat_map(types));
        }
    }
    found
}

/// `raw` read as what `property` asks for.
fn typed(key: &str, raw: &str, property: &Value) -> Result<Value, Failure> {
    let types = types(property);
    let has = |t: &str| types.contains(&t);
    let bad = |what: &str| Failure::usage(format!("{key} must be {what}, not {raw:?}"));
    if raw == "null" && has("null") {
        return Ok(Value::Null);
    }
    if has("integer") && !has("string") {
        return raw
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| raw.parse::<u64>().map(Value::from))
            .map_err(|_| bad("an integer"));
    }
    if has("number") && !has("string") {
        return raw
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| bad("a number"));
    }
    if has("boolean") && !has("string") {
        return match raw {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(bad("true or false")),
        };
    }
    if (has("array") || has("object")) && !has("string") {
        return serde_json::from_str(raw).map_err(|e| bad(&format!("JSON ({e})")));
    }
    if has("string") {
        return Ok(Value::String(raw.to_owned()));
    }
    // No type said (a `$ref` to an enum or a struct): JSON when it reads as JSON, else the
    // string, so `tone=formal` and `point={"x":1}` both do what they look like.
    Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())))
}

/// `command` split into words as a shell would for the simple cases: spaces separate,
/// single and double quotes group, a backslash escapes the next character.
pub(crate) fn words(command: &str) -> Result<Vec<String>, Failure> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_default().push(next);
                }
            }
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    if quote.is_some() {
        return Err(Failure::usage(format!("unbalanced quote in {command:?}")));
    }
    words.extend(word);
    if words.is_empty() {
        return Err(Failure::usage(
            "--stdio needs a command, e.g. --stdio \"./server\"",
        ));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "x": {"type": "number"}, "on": {"type": "boolean"},
            "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
            "tone": {"anyOf": [{"$ref": "#/$defs/Tone"}, {"type": "null"}]},
            "n": {"type": ["integer", "null"]}
        }})
    }

    fn ok(args: &[&str]) -> Value {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Value::Object(parse(&args, Some(&schema()), "tool t").ok().unwrap())
    }

    fn err(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        format!(
            "{:?}",
            parse(&args, Some(&schema()), "tool t").err().unwrap()
        )
    }

    #[test]
    fn values_take_the_schema_s_types() {
        assert_eq!(
            ok(&[
                "a=2",
                "x=1.5",
                "on=true",
                "name=42",
                r#"tags=["p","q"]"#,
                "tone=formal",
                "n=null"
            ]),
            json!({"a": 2, "x": 1.5, "on": true, "name": "42", "tags": ["p", "q"],
                   "tone": "formal", "n": null})
        );
        assert_eq!(ok(&[r#"{"a": 1}"#]), json!({"a": 1}));
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        assert!(err(&["a=two"]).contains("a must be an integer, not \\\"two\\\""));
        assert!(err(&["on=yes"]).contains("true or false"));
        assert!(err(&["zz=1"]).contains("tool t has no argument \\\"zz\\\""));
        assert!(err(&["a"]).contains("write key=value"));
        assert!(err(&["a=1", "a=2"]).contains("given twice"));
    }

    #[test]
    fn commands_split_like_a_shell() {
        let w = |s: &str| words(s).ok().unwrap();
        assert_eq!(
            w("./s --flag 'a b' \"c d\" e\\ f"),
            ["./s", "--flag", "a b", "c d", "e f"]
        );
        assert_eq!(w("x ''"), ["x", ""]);
        assert!(words("  ").is_err());
        assert!(words("'open").is_err());
    }
}
