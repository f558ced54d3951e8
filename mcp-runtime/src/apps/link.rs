//! Apps at start-up and at read time: every tool's `ui` names a registered resource, and an
//! app's contents carry its `_meta.ui`.

use serde_json::Value;

use crate::protocol::ResourceContents;
use crate::registry::BuildError;
use crate::registry::{RegisteredResource, RegisteredTemplate, RegisteredTool};

/// The first tool whose `ui = "…"` names no registered resource (a static one with that URI,
/// or a template that matches it), as the build error that names the tool.
pub(crate) fn missing_link(
    tools: &[RegisteredTool],
    resources: &[RegisteredResource],
    templates: &[RegisteredTemplate],
) -> Result<(), BuildError> {
    for tool in tools {
        let Some(uri) = tool.def.ui.and_then(|ui| ui.resource_uri) else {
            continue;
        };
        let found = resources.iter().any(|r| r.def.uri == uri)
            || templates.iter().any(|t| t.template.matches(uri).is_some());
        if !found {
            return Err(BuildError::MissingAppResource {
                tool: tool.def.name.to_owned(),
                uri: uri.to_owned(),
                location: format!("{}:{}", tool.def.location.0, tool.def.location.1),
            });
        }
    }
    Ok(())
}

/// Gives each content item the app's `_meta.ui` (`ui`), unless the fn set its own.
pub(crate) fn decorate(contents: &mut [ResourceContents], ui: &Value) {
    for item in contents {
        item.meta_mut().entry("ui").or_insert_with(|| ui.clone());
    }
}
