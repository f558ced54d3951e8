//! The registered tools, resources, templates and prompts as a server holds them (their
//! definitions with their listings built once), what a tool filter sees of a tool, and
//! [`Listed`]: whether the catalog serves an item and which scopes it needs.

use serde_json::value::RawValue;

use crate::prompt::PromptDef;
use crate::protocol::Tool;
use crate::protocol::headers::HeaderParam;
use crate::resource::{ResourceDef, UriTemplate};
use crate::tool::{OutputMode, ToolDef};

/// A registered tool with its listing built.
pub(crate) struct RegisteredTool {
    pub(crate) def: &'static ToolDef,
    pub(crate) mode: OutputMode,
    /// `tools/list` entry for versions with structured output, for older ones (no
    /// `outputSchema`), and for 2025-11-25 with `execution.taskSupport` (task tools only).
    pub(crate) listing: [Box<RawValue>; 3],
    pub(crate) tool: Tool,
    /// Arguments mirrored into `Mcp-Param-{name}` headers (`x-mcp-header`, 2026-07-28 HTTP).
    pub(crate) header_params: Vec<HeaderParam>,
}

/// A registered static resource.
pub(crate) struct RegisteredResource {
    pub(crate) def: &'static ResourceDef,
    pub(crate) listing: Box<RawValue>,
}

/// A registered resource template.
pub(crate) struct RegisteredTemplate {
    pub(crate) def: &'static ResourceDef,
    pub(crate) template: UriTemplate,
    pub(crate) listing: Box<RawValue>,
}

/// A registered prompt.
pub(crate) struct RegisteredPrompt {
    pub(crate) def: &'static PromptDef,
    pub(crate) listing: Box<RawValue>,
}

impl RegisteredTool {
    /// Its `tools/list` entry for a client of `version`.
    pub(crate) fn listing_for(&self, version: crate::protocol::ProtocolVersion) -> &RawValue {
        &self.listing[self.listing_index(version)]
    }

    /// Which of [`listing`](Self::listing) a client of `version` gets.
    pub(crate) fn listing_index(&self, version: crate::protocol::ProtocolVersion) -> usize {
        use crate::protocol::ProtocolVersion;
        if version == ProtocolVersion::V2025_11_25 {
            2
        } else {
            usize::from(!version.has_structured_output())
        }
    }
}

/// What a tool filter sees of each registered tool.
#[derive(Clone, Copy, Debug)]
pub struct ToolInfo {
    /// The tool's name.
    pub name: &'static str,
    /// Where it is defined.
    pub location: (&'static str, u32),
}

/// What an item filter ([`ServerBuilder::item_filter`](crate::ServerBuilder::item_filter)) sees
/// of each registered tool, resource, resource template and prompt.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ItemInfo {
    /// Which kind of item it is (templates are [`ItemKind::Resource`](crate::catalog::ItemKind::Resource)).
    pub kind: crate::catalog::ItemKind,
    /// Its name (a resource's `name`, not its URI).
    pub name: &'static str,
    /// A resource's URI or URI template; `None` for tools and prompts.
    pub uri: Option<&'static str>,
    /// Where it is defined: the file as `file!()` writes it, and the line.
    pub location: (&'static str, u32),
}

/// A registered item that can be disabled at run time (see [`Catalog`](crate::catalog::Catalog)).
pub(crate) trait Listed {
    /// Whether `catalog` serves it.
    fn enabled(&self, catalog: &crate::catalog::Catalog) -> bool;
    /// The OAuth scopes a caller needs to use it.
    fn scopes(&self) -> &'static [&'static str];
}

impl Listed for RegisteredTool {
    fn enabled(&self, catalog: &crate::catalog::Catalog) -> bool {
        catalog.is_enabled(crate::catalog::ItemKind::Tool, &[self.def.name])
    }
    fn scopes(&self) -> &'static [&'static str] {
        self.def.scopes
    }
}

impl Listed for RegisteredPrompt {
    fn enabled(&self, catalog: &crate::catalog::Catalog) -> bool {
        catalog.is_enabled(crate::catalog::ItemKind::Prompt, &[self.def.name])
    }
    fn scopes(&self) -> &'static [&'static str] {
        self.def.scopes
    }
}

impl Listed for RegisteredResource {
    fn enabled(&self, catalog: &crate::catalog::Catalog) -> bool {
        catalog.is_enabled(
            crate::catalog::ItemKind::Resource,
            &[self.def.name, self.def.uri],
        )
    }
    fn scopes(&self) -> &'static [&'static str] {
        self.def.scopes
    }
}

impl Listed for RegisteredTemplate {
    fn enabled(&self, catalog: &crate::catalog::Catalog) -> bool {
        catalog.is_enabled(
            crate::catalog::ItemKind::Resource,
            &[self.def.name, self.def.uri],
        )
    }
    fn scopes(&self) -> &'static [&'static str] {
        self.def.scopes
    }
}
