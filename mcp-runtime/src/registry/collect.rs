//! Collecting what `#[tool]`, `#[resource]` and `#[prompt]` registered: each kind checked
//! (names, duplicates, schemas, URI templates), described once (its listings) and sorted.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::BuildError;
use super::items::{
    ItemInfo, RegisteredPrompt, RegisteredResource, RegisteredTemplate, RegisteredTool, ToolInfo,
};
use super::paged::Paged;
use crate::prompt::PromptDef;
use crate::protocol::headers::header_params;
use crate::protocol::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use crate::resource::{ResourceDef, UriTemplate};
use crate::tool::{MetaValue, ToolDef};

fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn loc(location: (&str, u32)) -> String {
    format!("{}:{}", location.0, location.1)
}

fn meta_map(meta: &[(&str, MetaValue)]) -> Map<String, Value> {
    meta.iter()
        .map(|(k, v)| ((*k).to_owned(), v.to_value()))
        .collect()
}

/// `meta(...)` with an app's `_meta.ui`, if it has settings.
fn resource_meta(def: &ResourceDef) -> Map<String, Value> {
    let mut meta = meta_map(def.meta);
    if let Some(ui) = def.ui.and_then(crate::apps::UiResourceDef::to_meta) {
        meta.insert("ui".into(), ui);
    }
    meta
}

fn raw<T: serde::Serialize>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("listings always serialize")
}

/// Checks sorted `items` for two with one key.
fn no_duplicates<T>(
    items: &[T],
    kind: &'static str,
    key: impl Fn(&T) -> &str,
    location: impl Fn(&T) -> (&'static str, u32),
) -> Result<(), BuildError> {
    for pair in items.windows(2) {
        if key(&pair[0]) == key(&pair[1]) {
            let k = key(&pair[0]);
            let locations = items
                .iter()
                .filter(|i| key(i) == k)
                .map(|i| loc(location(i)))
                .collect();
            return Err(BuildError::Duplicate {
                kind,
                key: k.to_owned(),
                locations,
            });
        }
    }
    Ok(())
}

pub(super) fn collect_tools(
    filter: &dyn Fn(&ToolInfo) -> bool,
    items: &dyn Fn(&ItemInfo) -> bool,
) -> Result<Paged<RegisteredTool>, BuildError> {
    let mut defs: Vec<&'static ToolDef> = inventory::iter::<ToolDef>
        .into_iter()
        .filter(|d| {
            filter(&ToolInfo {
                name: d.name,
                location: d.location,
            }) && items(&ItemInfo {
                kind: crate::catalog::ItemKind::Tool,
                name: d.name,
                uri: None,
                location: d.location,
            })
        })
        .collect();
    defs.sort_by(|a, b| a.name.cmp(b.name).then(a.location.cmp(&b.location)));
    for pair in defs.windows(2) {
        if pair[0].name == pair[1].name {
            let name = pair[0].name;
            let locations = defs
                .iter()
                .filter(|d| d.name == name)
                .map(|d| loc(d.location))
                .collect();
            return Err(BuildError::DuplicateTool {
                name: name.to_owned(),
                locations,
            });
        }
    }
    if let Some(bad) = defs.iter().find(|d| !valid_tool_name(d.name)) {
        return Err(BuildError::InvalidToolName {
            name: bad.name.to_owned(),
            location: loc(bad.location),
        });
    }
    // Listed in source order; looked up by name through `Registry::tool_index`.
    defs.sort_by(|a, b| a.location.cmp(&b.location).then(a.name.cmp(b.name)));
    let tools: Vec<RegisteredTool> = defs.into_iter().map(describe_tool).collect();
    for tool in &tools {
        if let Err(reason) = header_params(&tool.tool.input_schema).map(|_| ()) {
            return Err(BuildError::InvalidHeaderParam {
                name: tool.def.name.to_owned(),
                location: loc(tool.def.location),
                reason,
            });
        }
    }
    // A hand-written `input_schema` must still describe an object of arguments.
    if let Some(bad) = tools
        .iter()
        .find(|t| t.tool.input_schema.get("type").and_then(Value::as_str) != Some("object"))
    {
        return Err(BuildError::InvalidInputSchema {
            name: bad.def.name.to_owned(),
            location: loc(bad.def.location),
        });
    }
    Ok(Paged::new(tools, |t| t.def.name))
}

fn describe_tool(def: &'static ToolDef) -> RegisteredTool {
    let output = (def.output)();
    let mut tool = Tool {
        name: def.name.to_owned(),
        title: def.title.map(str::to_owned),
        description: def.description.map(str::to_owned),
        input_schema: (def.input_schema)(),
        output_schema: output.schema,
        annotations: def.annotations.to_annotations(),
        icons: def.icons.iter().map(|i| i.to_icon()).collect(),
        meta: meta_map(def.meta),
    };
    if let Some(ui) = def.ui {
        ui.apply(&mut tool.meta);
    }
    let structured = raw(&tool);
    let with_execution = if def.task == crate::task::TaskSupport::Forbidden {
        structured.clone()
    } else {
        let mut value = serde_json::to_value(&tool).expect("listings always serialize");
        value["execution"] = serde_json::json!({ "taskSupport": def.task.as_str() });
        raw(&value)
    };
    let schema = tool.output_schema.take();
    let plain = raw(&tool);
    tool.output_schema = schema;
    // An invalid annotation is reported by `collect_tools`.
    let header_params = header_params(&tool.input_schema).unwrap_or_default();
    RegisteredTool {
        def,
        mode: output.mode,
        listing: [structured, plain, with_execution],
        tool,
        header_params,
    }
}

/// The `resources/list` entry of a static resource.
fn resource_listing(def: &ResourceDef) -> Resource {
    Resource {
        uri: def.uri.to_owned(),
        name: def.name.to_owned(),
        title: def.title.map(str::to_owned),
        description: def.description.map(str::to_owned),
        mime_type: def.mime_type.map(str::to_owned),
        size: def.size,
        annotations: def.annotations.to_annotations(),
        icons: def.icons.iter().map(|i| i.to_icon()).collect(),
        meta: resource_meta(def),
    }
}

fn parsed_defs(
    items: &dyn Fn(&ItemInfo) -> bool,
) -> Result<Vec<(&'static ResourceDef, UriTemplate)>, BuildError> {
    inventory::iter::<ResourceDef>
        .into_iter()
        .filter(|def| {
            items(&ItemInfo {
                kind: crate::catalog::ItemKind::Resource,
                name: def.name,
                uri: Some(def.uri),
                location: def.location,
            })
        })
        .map(|def| {
            UriTemplate::parse(def.uri)
                .map(|t| (def, t))
                .map_err(|e| BuildError::InvalidTemplate {
                    template: def.uri.to_owned(),
                    reason: e.to_string(),
                    location: loc(def.location),
                })
        })
        .collect()
}

pub(super) fn collect_resources(
    items: &dyn Fn(&ItemInfo) -> bool,
) -> Result<Paged<RegisteredResource>, BuildError> {
    let mut defs: Vec<&'static ResourceDef> = parsed_defs(items)?
        .into_iter()
        .filter(|(_, t)| !t.has_variables())
        .map(|(d, _)| d)
        .collect();
    defs.sort_by(|a, b| a.uri.cmp(b.uri).then(a.location.cmp(&b.location)));
    no_duplicates(&defs, "resource", |d| d.uri, |d| d.location)?;
    let items = defs
        .into_iter()
        .map(|def| RegisteredResource {
            def,
            listing: raw(&resource_listing(def)),
        })
        .collect();
    Ok(Paged::new(items, |r: &RegisteredResource| r.def.uri))
}

pub(super) fn collect_templates(
    items: &dyn Fn(&ItemInfo) -> bool,
) -> Result<Paged<RegisteredTemplate>, BuildError> {
    let mut defs: Vec<_> = parsed_defs(items)?
        .into_iter()
        .filter(|(_, t)| t.has_variables())
        .collect();
    defs.sort_by(|a, b| a.0.uri.cmp(b.0.uri).then(a.0.location.cmp(&b.0.location)));
    no_duplicates(&defs, "resource template", |d| d.0.uri, |d| d.0.location)?;
    let items = defs
        .into_iter()
        .map(|(def, template)| {
            let listing = raw(&ResourceTemplate {
                uri_template: def.uri.to_owned(),
                name: def.name.to_owned(),
                title: def.title.map(str::to_owned),
                description: def.description.map(str::to_owned),
                mime_type: def.mime_type.map(str::to_owned),
                annotations: def.annotations.to_annotations(),
                icons: def.icons.iter().map(|i| i.to_icon()).collect(),
                meta: resource_meta(def),
            });
            RegisteredTemplate {
                def,
                template,
                listing,
            }
        })
        .collect();
    Ok(Paged::new(items, |t: &RegisteredTemplate| t.def.uri))
}

pub(super) fn collect_prompts(
    items: &dyn Fn(&ItemInfo) -> bool,
) -> Result<Paged<RegisteredPrompt>, BuildError> {
    let mut defs: Vec<&'static PromptDef> = inventory::iter::<PromptDef>
        .into_iter()
        .filter(|d| {
            items(&ItemInfo {
                kind: crate::catalog::ItemKind::Prompt,
                name: d.name,
                uri: None,
                location: d.location,
            })
        })
        .collect();
    defs.sort_by(|a, b| a.name.cmp(b.name).then(a.location.cmp(&b.location)));
    no_duplicates(&defs, "prompt", |d| d.name, |d| d.location)?;
    let items = defs
        .into_iter()
        .map(|def| {
            let listing = raw(&Prompt {
                name: def.name.to_owned(),
                title: def.title.map(str::to_owned),
                description: def.description.map(str::to_owned),
                arguments: def
                    .arguments
                    .iter()
                    .map(|a| PromptArgument {
                        name: a.name.to_owned(),
                        description: a.description.map(str::to_owned),
                        required: (a.required)(),
                    })
                    .collect(),
                icons: def.icons.iter().map(|i| i.to_icon()).collect(),
                meta: meta_map(def.meta),
            });
            RegisteredPrompt { def, listing }
        })
        .collect();
    Ok(Paged::new(items, |p: &RegisteredPrompt| p.def.name))
}

#[cfg(test)]
mod tests {
    use super::valid_tool_name;

    #[test]
    fn tool_names_follow_the_spec_rules() {
        assert!(valid_tool_name("get_weather.v2-beta"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }
}
