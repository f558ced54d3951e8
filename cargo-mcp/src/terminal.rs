//! The server's questions answered on the terminal: a form (elicitation) field by field, a
//! URL to open, a sampling request answered by the person in place of a model. Questions go to
//! stderr (stdout is the command's output), answers are read from stdin, one line each.

use std::io::{BufRead as _, Write as _};
use std::sync::Mutex;

use mcp_runtime::McpError;
use mcp_runtime::client::{ElicitRequest, ElicitResult, SampledMessage};
use serde_json::{Map, Value, json};

/// One question at a time: two asks of one call would otherwise interleave their prompts.
static TERMINAL: Mutex<()> = Mutex::new(());

/// Reads one line of stdin; `None` at its end.
fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
    }
}

fn ask(question: &str) -> Option<String> {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    read_line()
}

/// Answers an elicitation request (the blocking part runs off the async threads).
pub(crate) async fn elicit(request: ElicitRequest) -> Result<ElicitResult, McpError> {
    tokio::task::spawn_blocking(move || {
        let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
        elicit_blocking(&request)
    })
    .await
    .map_err(|e| McpError::internal(format!("the terminal prompt failed: {e}")))
}

fn elicit_blocking(request: &ElicitRequest) -> ElicitResult {
    eprintln!("\nThe server asks: {}", request.message);
    if request.is_url() {
        eprintln!(
            "Open {}",
            request.url.as_deref().unwrap_or("(no URL given)")
        );
        return match ask("Press Enter once done there (n to decline): ").as_deref() {
            None => ElicitResult::cancel(),
            Some("n" | "N" | "no") => ElicitResult::decline(),
            Some(_) => ElicitResult::accept_url(),
        };
    }
    match ask("Answer? [Y/n] (n declines, end of input cancels): ").as_deref() {
        None => return ElicitResult::cancel(),
        Some("n" | "N" | "no") => return ElicitResult::decline(),
        Some(_) => {}
    }
    let schema = request.requested_schema.clone().unwrap_or(Value::Null);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let required = required.contains(&name.as_str());
        loop {
            let Some(line) = ask(&field_prompt(name, property, required)) else {
                return ElicitResult::cancel();
            };
            if line.is_empty() {
                if let Some(default) = property.get("default") {
                    content.insert(name.clone(), default.clone());
                    break;
                }
                if !required {
                    break;
                }
                eprintln!("  {name} is required");
                continue;
            }
            match field_value(&line, property) {
                Ok(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                Err(why) => eprintln!("  {why}"),
            }
        }
    }
    ElicitResult::accept(Value::Object(content))
}

/// `  guests (integer, Number of guests) [2]: `
fn field_prompt(name: &str, property: &Value, required: bool) -> String {
    let text = |k: &str| property.get(k).and_then(Value::as_str);
    let mut about = vec![kind(property)];
    if let Some(d) = text("description").or_else(|| text("title")) {
        about.push(d.to_owned());
    }
    if !required {
        about.push("optional".into());
    }
    let default = property
        .get("default")
        .map(|d| {
            format!(
                " [{}]",
                d.as_str().map_or_else(|| d.to_string(), str::to_owned)
            )
        })
        .unwrap_or_default();
    format!("  {name} ({}){default}: ", about.join(", "))
}

/// The choices of a single-choice field (`enum`, or `oneOf` of `const`s).
fn choices(property: &Value) -> Vec<String> {
    if let Some(Value::Array(values)) = property.get("enum") {
        return values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
    }
    if let Some(Value::Array(branches)) = property.get("oneOf") {
        return branches
            .iter()
            .filter_map(|b| b.get("const").and_then(Value::as_str).map(str::to_owned))
            .collect();
    }
    Vec::new()
}

fn kind(property: &Value) -> String {
    let single = choices(property);
    if !single.is_empty() {
        return format!("one of {}", single.join(", "));
    }
    if property.get("type").and_then(Value::as_str) == Some("array") {
        let items = property.get("items").map(choices).unwrap_or_default();
        return format!("comma-separated, of {}", items.join(", "));
    }
    property
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("text")
        .to_owned()
}

fn field_value(line: &str, property: &Value) -> Result<Value, String> {
    let single = choices(property);
    if !single.is_empty() && !single.iter().any(|c| c == line) {
        return Err(format!("choose one of {}", single.join(", ")));
    }
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => line
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "a whole number, please".to_owned()),
        Some("number") => line
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "a number, please".to_owned()),
        Some("boolean") => match line {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("yes or no, please".to_owned()),
        },
        Some("array") => Ok(Value::Array(
            line.split(',')
                .map(|s| Value::String(s.trim().to_owned()))
                .collect(),
        )),
        _ => Ok(Value::String(line.to_owned())),
    }
}

/// Answers a sampling request: the messages are shown, and the person types the model's reply.
pub(crate) async fn sample(params: Value) -> Result<SampledMessage, McpError> {
    let answer = tokio::task::spawn_blocking(move || {
        let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!("\nThe server asks the model (you answer in its place):");
        for message in params
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("user");
            let text = message
                .pointer("/content/text")
                .and_then(Value::as_str)
                .map_or_else(
                    || {
                        message
                            .get("content")
                            .map(Value::to_string)
                            .unwrap_or_default()
                    },
                    str::to_owned,
                );
            eprintln!("  {role}: {text}");
        }
        ask("Reply: ")
    })
    .await
    .map_err(|e| McpError::internal(format!("the terminal prompt failed: {e}")))?;
    let Some(text) = answer else {
        return Err(McpError::internal("the user gave no answer (end of input)"));
    };
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "cargo-mcp (a person at the terminal)",
        "stopReason": "endTurn"
    }))
    .map_err(|e| McpError::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_as_their_types() {
        assert_eq!(field_value("3", &json!({"type": "integer"})), Ok(json!(3)));
        assert!(field_value("x", &json!({"type": "integer"})).is_err());
        assert_eq!(
            field_value("yes", &json!({"type": "boolean"})),
            Ok(json!(true))
        );
        assert_eq!(
            field_value("a@b.c", &json!({"type": "string"})),
            Ok(json!("a@b.c"))
        );
        let pick = json!({"type": "string", "enum": ["red", "blue"]});
        assert_eq!(field_value("red", &pick), Ok(json!("red")));
        assert!(field_value("green", &pick).is_err());
    }

    #[test]
    fn prompts_say_the_type_and_the_default() {
        let p = json!({"type": "integer", "description": "Number of guests.", "default": 2});
        assert_eq!(
            field_prompt("guests", &p, true),
            "  guests (integer, Number of guests.) [2]: "
        );
    }
}
