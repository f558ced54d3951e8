//! Everything registered with `#[tool]`, `#[resource]` and `#[prompt]`, validated and described
//! once at start-up, each kind in a deterministic order: tools in source order (by file, then
//! line, as FastMCP lists them in registration order), the others sorted by name or URI.

mod collect;
mod error;
mod items;
mod links;
mod paged;

pub use error::BuildError;
pub use items::{ItemInfo, ToolInfo};
pub(crate) use items::{
    Listed, RegisteredPrompt, RegisteredResource, RegisteredTemplate, RegisteredTool,
};
pub(crate) use paged::{Paged, page_of};

use collect::{collect_prompts, collect_resources, collect_templates, collect_tools};

/// The tools, resources, templates and prompts of one server.
pub(crate) struct Registry {
    /// In source order.
    pub(crate) tools: Paged<RegisteredTool>,
    /// Indexes into `tools`, sorted by name.
    tool_index: Vec<usize>,
    pub(crate) resources: Paged<RegisteredResource>,
    pub(crate) templates: Paged<RegisteredTemplate>,
    pub(crate) prompts: Paged<RegisteredPrompt>,
}

impl Registry {
    /// Whether any tool may run as a task.
    pub(crate) fn has_task_tools(&self) -> bool {
        self.tools
            .items
            .iter()
            .any(|t| t.def.task != crate::task::TaskSupport::Forbidden)
    }

    /// Collects what `tools` and `items` both keep.
    pub(crate) fn collect(
        tools: &dyn Fn(&ToolInfo) -> bool,
        items: &dyn Fn(&ItemInfo) -> bool,
    ) -> Result<Registry, BuildError> {
        let tools = collect_tools(tools, items)?;
        let mut tool_index: Vec<usize> = (0..tools.items.len()).collect();
        tool_index.sort_by_key(|&i| tools.items[i].def.name);
        let (resources, templates) = (collect_resources(items)?, collect_templates(items)?);
        links::check_app_links(&tools.items, &resources.items, &templates.items)?;
        Ok(Registry {
            tools,
            tool_index,
            resources,
            templates,
            prompts: collect_prompts(items)?,
        })
    }

    /// Whether any MCP App is registered: a `ui://` resource, or a tool with `ui` or
    /// `visibility` (the extension's tool metadata).
    pub(crate) fn has_apps(&self) -> bool {
        self.resources.items.iter().any(|r| r.def.ui.is_some())
            || self.templates.items.iter().any(|t| t.def.ui.is_some())
            || self.tools.items.iter().any(|t| t.def.ui.is_some())
    }

    /// The tool `name`, if registered (enabled or not).
    pub(crate) fn tool(&self, name: &str) -> Option<&RegisteredTool> {
        // A binary search beats hashing the name for any realistic tool count.
        let tools = &self.tools.items;
        self.tool_index
            .binary_search_by(|&i| tools[i].def.name.cmp(name))
            .ok()
            .map(|i| &tools[self.tool_index[i]])
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&RegisteredPrompt> {
        let prompts = &self.prompts.items;
        prompts
            .binary_search_by(|p| p.def.name.cmp(name))
            .ok()
            .map(|i| &prompts[i])
    }

    pub(crate) fn static_resource(&self, uri: &str) -> Option<&RegisteredResource> {
        let resources = &self.resources.items;
        resources
            .binary_search_by(|r| r.def.uri.cmp(uri))
            .ok()
            .map(|i| &resources[i])
    }

    /// The scopes a `tools/call`, `prompts/get` or `resources/read` of `name` (a tool or
    /// prompt name, or a URI) needs, or `template` (a template's own URI template, as a
    /// completion names it); none for anything else. A URI is matched as `resources/read`
    /// serves it: the static resource, else the first enabled template.
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn scopes_for(
        &self,
        catalog: &crate::catalog::Catalog,
        method: &str,
        name: &str,
    ) -> &'static [&'static str] {
        match method {
            "tools/call" => self.tool(name).map_or(&[], |t| t.def.scopes),
            "prompts/get" => self.prompt(name).map_or(&[], |p| p.def.scopes),
            "template" => self
                .templates
                .items
                .iter()
                .find(|t| t.def.uri == name)
                .map_or(&[], |t| t.def.scopes),
            "resources/read" => match self.static_resource(name) {
                Some(r) => r.def.scopes,
                None => self
                    .templates
                    .items
                    .iter()
                    .filter(|t| t.enabled(catalog))
                    .find(|t| t.template.matches(name).is_some())
                    .map_or(&[], |t| t.def.scopes),
            },
            _ => &[],
        }
    }

    /// The scopes of everything a subscription to `uri` may hear about: the resource or
    /// template it names, every resource below it, and every template that can make a URI
    /// below it or is itself below it (by the template's fixed start, so a template whose
    /// URIs may fall under `uri` counts). Disabled primitives count too: one enabled later
    /// would otherwise reach a stream opened without its scopes.
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) fn scopes_covered(
        &self,
        catalog: &crate::catalog::Catalog,
        uri: &str,
    ) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = Vec::new();
        let named = self.scopes_for(catalog, "resources/read", uri);
        let below = self
            .resources
            .items
            .iter()
            .filter(|r| crate::catalog::covers(uri, r.def.uri))
            .map(|r| r.def.scopes);
        let templates = self
            .templates
            .items
            .iter()
            .filter(|t| {
                let fixed = t.def.uri.split('{').next().unwrap_or_default();
                fixed.starts_with(uri) || uri.starts_with(fixed)
            })
            .map(|t| t.def.scopes);
        for scopes in std::iter::once(named).chain(below).chain(templates) {
            for scope in scopes {
                if !all.contains(scope) {
                    all.push(scope);
                }
            }
        }
        all
    }

    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    /// Every scope some primitive asks for, in registration order, once each.
    pub(crate) fn all_scopes(&self) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = Vec::new();
        let lists = self
            .tools
            .items
            .iter()
            .map(|t| t.def.scopes)
            .chain(self.prompts.items.iter().map(|p| p.def.scopes))
            .chain(self.resources.items.iter().map(|r| r.def.scopes))
            .chain(self.templates.items.iter().map(|t| t.def.scopes));
        for scope in lists.flatten() {
            if !all.contains(scope) {
                all.push(scope);
            }
        }
        all
    }

    /// Whether any resource or template is registered.
    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.items.is_empty() || !self.templates.items.is_empty()
    }

    /// Whether any prompt argument or template variable has a completion fn.
    pub(crate) fn has_completions(&self) -> bool {
        self.prompts
            .items
            .iter()
            .any(|p| !p.def.complete.is_empty())
            || self
                .templates
                .items
                .iter()
                .any(|t| !t.def.complete.is_empty())
    }
}
