//! Links between registered items, checked at start-up: every tool's `ui = "ui://…"` (an MCP
//! App, see [`apps`](crate::apps)) names a registered resource.

use super::error::BuildError;
use super::items::{RegisteredResource, RegisteredTemplate, RegisteredTool};

/// The first tool whose `ui` names no registered resource (a static one with that URI, or a
/// template that matches it), as the build error that names the tool.
pub(super) fn check_app_links(
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
