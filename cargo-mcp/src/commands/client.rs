//! `list`, `call`, `read`, `prompt` and `complete`: one request to a server, its answer printed.

use mcp_runtime::client::{Client, CompletionRef};
use serde_json::{Map, Value, json};

use super::block_on;
use crate::cli::{CallArgs, CompleteArgs, ListArgs, PromptArgs, ReadArgs, ServerArgs};
use crate::{Failure, args, connect, output};

/// Connects, runs `work`, and closes the connection whatever `work` gave (a spawned server
/// is stopped).
fn with_client<T>(
    server: &ServerArgs,
    work: impl AsyncFnOnce(&Client) -> Result<T, Failure>,
) -> Result<T, Failure> {
    block_on(async {
        let client = connect::connect(server).await?;
        let result = work(&client).await;
        client.close().await;
        result
    })
}

fn to_values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .map(|i| serde_json::to_value(i).expect("protocol types serialize"))
        .collect()
}

pub(crate) fn list(a: ListArgs) -> Result<(), Failure> {
    let json = a.server.json;
    with_client(&a.server, async |client| {
        let offers = |what: &str| client.server_capabilities().get(what).is_some();
        let (mut tools, mut resources, mut templates, mut prompts) =
            (vec![], vec![], vec![], vec![]);
        if offers("tools") {
            tools = to_values(&client.list_tools().await?);
        }
        if offers("resources") {
            resources = to_values(&client.list_resources().await?);
            templates = to_values(&client.list_resource_templates().await?);
        }
        if offers("prompts") {
            prompts = to_values(&client.list_prompts().await?);
        }
        if json {
            output::json(&json!({"tools": tools, "resources": resources,
                "resourceTemplates": templates, "prompts": prompts}));
        } else {
            output::listing(&tools, &resources, &templates, &prompts);
        }
        Ok(())
    })
}

pub(crate) fn call(a: CallArgs) -> Result<(), Failure> {
    let json = a.server.json;
    with_client(&a.server, async |client| {
        let tools = client.list_tools().await?;
        let Some(tool) = tools.iter().find(|t| t.name == a.tool) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return Err(Failure::new(format!(
                "the server has no tool {:?} (its tools: {})",
                a.tool,
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        };
        let what = format!("tool {}", a.tool);
        let arguments = args::parse(&a.arguments, Some(&tool.input_schema), &what)?;
        let result = client
            .call_tool(&a.tool, Value::Object(arguments))
            .await
            .map_err(|e| Failure::new(format!("calling {what}: {e}")))?;
        let value = serde_json::to_value(&result).expect("results serialize");
        if json {
            output::json(&value);
        }
        if result.is_error() {
            return Err(Failure::new(format!(
                "the tool {} failed: {}",
                a.tool,
                output::tool_result(&value)
            )));
        }
        if !json {
            println!("{}", output::tool_result(&value));
        }
        Ok(())
    })
}

pub(crate) fn read(a: ReadArgs) -> Result<(), Failure> {
    let json = a.server.json;
    with_client(&a.server, async |client| {
        let contents = client
            .read_resource(&a.uri)
            .await
            .map_err(|e| Failure::new(format!("reading {}: {e}", a.uri)))?;
        let contents = to_values(&contents);
        if json {
            output::json(&json!({ "contents": contents }));
        } else {
            for c in &contents {
                match c.get("text").and_then(Value::as_str) {
                    Some(text) => println!("{text}"),
                    None => println!(
                        "[blob {}, {} base64 characters]",
                        c.get("mimeType").and_then(Value::as_str).unwrap_or("?"),
                        c.get("blob").and_then(Value::as_str).map_or(0, str::len)
                    ),
                }
            }
        }
        Ok(())
    })
}

pub(crate) fn prompt(a: PromptArgs) -> Result<(), Failure> {
    let json = a.server.json;
    let what = format!("prompt {}", a.name);
    let arguments = args::parse(&a.arguments, None, &what)?;
    with_client(&a.server, async |client| {
        let result = client
            .get_prompt(&a.name, Value::Object(arguments))
            .await
            .map_err(|e| Failure::new(format!("getting {what}: {e}")))?;
        let value = serde_json::to_value(&result).expect("results serialize");
        if json {
            output::json(&value);
            return Ok(());
        }
        for message in value
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
            let content = message.get("content").cloned().unwrap_or(Value::Null);
            println!(
                "{role}: {}",
                output::content(std::slice::from_ref(&content))
            );
        }
        Ok(())
    })
}

pub(crate) fn complete(a: CompleteArgs) -> Result<(), Failure> {
    let json = a.server.json;
    let context: Map<String, Value> = args::parse(&a.context, None, "the completion's context")?;
    with_client(&a.server, async |client| {
        let reference = match (&a.prompt, &a.template) {
            (Some(p), _) => CompletionRef::Prompt(p),
            (None, Some(t)) => CompletionRef::Resource(t),
            (None, None) => unreachable!("clap requires one"),
        };
        let completion = client
            .complete(reference, &a.argument, &a.value, context)
            .await
            .map_err(|e| Failure::new(format!("completing {}: {e}", a.argument)))?;
        if json {
            output::json(
                &json!({"values": completion.values, "total": completion.total,
                "hasMore": completion.has_more}),
            );
        } else {
            for value in &completion.values {
                println!("{value}");
            }
        }
        Ok(())
    })
}
