//! Everything registered with `#[tool]`, `#[resource]` and `#[prompt]`, validated and described
//! once at start-up, each kind in a deterministic order: tools in source order (by file, then
//! line, as FastMCP lists them in registration order), the others sorted by name or URI.

use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use base64::Engine as _;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::prompt::PromptDef;
use crate::protocol::headers::{HeaderParam, header_params};
use crate::protocol::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use crate::resource::{ResourceDef, UriTemplate};
use crate::tool::{MetaValue, OutputMode, ToolDef};

impl Registry {
    /// Whether any tool may run as a task.
    pub(crate) fn has_task_tools(&self) -> bool {
        self.tools
            .items
            .iter()
            .any(|t| t.def.task != crate::task::TaskSupport::Forbidden)
    }
}

impl RegisteredTool {
    /// Its `tools/list` entry for a client of `version`.
    pub(crate) fn listing_for(&self, version: crate::protocol::ProtocolVersion) -> &RawValue {
        use crate::protocol::ProtocolVersion;
        if version == ProtocolVersion::V2025_11_25 {
            &self.listing[2]
        } else {
            &self.listing[usize::from(!version.has_structured_output())]
        }
    }
}

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

/// Start-up errors found while collecting registrations.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name.
    DuplicateTool {
        /// The name.
        name: String,
        /// Where each is defined (`file:line`).
        locations: Vec<String>,
    },
    /// A tool name breaks the rules (1–128 characters of `A-Z a-z 0-9 _ - .`).
    InvalidToolName {
        /// The name.
        name: String,
        /// Where it is defined.
        location: String,
    },
    /// Two resources (or templates) share a URI, or two prompts a name.
    Duplicate {
        /// `"resource"` or `"prompt"`.
        kind: &'static str,
        /// The URI or name.
        key: String,
        /// Where each is defined.
        locations: Vec<String>,
    },
    /// A tool's `input_schema` is not a JSON object schema (`"type": "object"`).
    InvalidInputSchema {
        /// The tool.
        name: String,
        /// Where it is defined.
        location: String,
    },
    /// A key given to `request_state_key` or `request_state_keys` is shorter than 32 bytes (a
    /// short key makes `requestState` forgeable).
    WeakRequestStateKey {
        /// Its position in the ring, from 0.
        index: usize,
        /// Its length in bytes.
        len: usize,
    },
    /// `request_state_keys` was given no key.
    NoRequestStateKeys,
    /// `request_state_audience` was given an empty audience.
    EmptyRequestStateAudience,
    /// A tool's `x-mcp-header` annotation breaks the spec's constraints.
    InvalidHeaderParam {
        /// The tool.
        name: String,
        /// Where it is defined.
        location: String,
        /// Which constraint.
        reason: String,
    },
    /// A handler elicits (`ctx.elicit::<T>`) a type that is not a flat form. No longer
    /// produced: a form is checked when it is asked for (the ask fails with the reason), and in
    /// tests with [`testing::check_form`](crate::testing::check_form).
    InvalidForm {
        /// The tool, resource or prompt.
        owner: String,
        /// Where it is defined.
        location: String,
        /// What is wrong with the type.
        reason: String,
    },
    /// The skills directory ([`ServerBuilder::skills_dir`](crate::ServerBuilder::skills_dir))
    /// holds a skill that cannot be served as SEP-2640 requires (a bad or mismatched `name`,
    /// no frontmatter, too many files or bytes, a link leading outside the directory), or
    /// cannot be read at all.
    InvalidSkill {
        /// The skill's folder, relative to the skills directory (or the directory itself).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A resource URI template does not parse.
    InvalidTemplate {
        /// The template.
        template: String,
        /// Why.
        reason: String,
        /// Where it is defined.
        location: String,
    },
    /// [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus) on a builder whose
    /// [`Catalog`](crate::catalog::Catalog) handle has a bus attached already.
    ChangeBusAttached,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::DuplicateTool { name, locations } => {
                write!(
                    f,
                    "duplicate tool name `{name}`, defined at {}",
                    locations.join(" and ")
                )
            }
            BuildError::InvalidToolName { name, location } => write!(
                f,
                "invalid tool name `{name}` at {location}: use 1 to 128 of A-Z a-z 0-9 _ - ."
            ),
            BuildError::Duplicate {
                kind,
                key,
                locations,
            } => {
                write!(
                    f,
                    "duplicate {kind} `{key}`, defined at {}",
                    locations.join(" and ")
                )
            }
            BuildError::InvalidInputSchema { name, location } => write!(
                f,
                "the input_schema of tool `{name}` at {location} must be a JSON object with \"type\": \"object\""
            ),
            BuildError::WeakRequestStateKey { index, len } => write!(
                f,
                "requestState key {} of the ring is {len} bytes; each key needs at least 32 \
                 random bytes (64 hex digits in MCP_REQUEST_STATE_KEYS)",
                index + 1
            ),
            BuildError::NoRequestStateKeys => f.write_str(
                "the requestState key ring is empty; give at least one key of 32 random bytes",
            ),
            BuildError::EmptyRequestStateAudience => {
                f.write_str("the requestState audience is empty; name the fleet (or leave it unset for the server's name)")
            }
            BuildError::InvalidHeaderParam {
                name,
                location,
                reason,
            } => write!(f, "tool `{name}` at {location}: {reason}"),
            BuildError::InvalidForm {
                owner,
                location,
                reason,
            } => write!(
                f,
                "`{owner}` at {location} elicits an invalid form: {reason}"
            ),
            BuildError::InvalidSkill { path, reason } => write!(f, "skill `{path}`: {reason}"),
            BuildError::InvalidTemplate {
                template,
                reason,
                location,
            } => {
                write!(
                    f,
                    "invalid URI template `{template}` at {location}: {reason}"
                )
            }
            BuildError::ChangeBusAttached => f.write_str(
                "change_bus: the server's Catalog handle has a change bus attached already",
            ),
        }
    }
}

impl std::error::Error for BuildError {}

/// What a tool filter sees of each registered tool.
#[derive(Clone, Copy, Debug)]
pub struct ToolInfo {
    /// The tool's name.
    pub name: &'static str,
    /// Where it is defined.
    pub location: (&'static str, u32),
}

pub(crate) fn valid_tool_name(name: &str) -> bool {
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

fn raw<T: serde::Serialize>(value: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).expect("listings always serialize")
}

/// Items of one kind, sorted, with a fingerprint of their keys that makes stale cursors invalid.
pub(crate) struct Paged<T> {
    pub(crate) items: Vec<T>,
    fingerprint: u64,
}

impl<T> Paged<T> {
    fn new(items: Vec<T>, key: impl Fn(&T) -> &str) -> Self {
        let mut hasher = DefaultHasher::new();
        items.iter().for_each(|t| key(t).hash(&mut hasher));
        Paged {
            items,
            fingerprint: hasher.finish(),
        }
    }

    /// The page starting at `cursor`, and the cursor of the next one; `None` for a bad cursor.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Option<(&[T], Option<String>)> {
        page_of(&self.items, self.fingerprint, cursor, page_size)
    }
}

impl<T: Listed> Paged<T> {
    /// Like [`page`](Self::page), over the items `catalog` has not disabled and, for a
    /// caller whose lists hide what it may not use, those whose scopes it has.
    pub(crate) fn page_enabled(
        &self,
        catalog: &crate::catalog::Catalog,
        caller: Option<&crate::auth::Principal>,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Option<(Vec<&T>, Option<String>)> {
        let generation = catalog.generation();
        let hiding = caller.filter(|p| p.hides_unauthorized());
        if generation == 0 && hiding.is_none() {
            let (items, next) = self.page(cursor, page_size)?;
            return Some((items.iter().collect(), next));
        }
        let visible: Vec<&T> = self
            .items
            .iter()
            .filter(|t| t.enabled(catalog))
            .filter(|t| hiding.is_none_or(|p| p.missing(t.scopes()).is_empty()))
            .collect();
        // Cursors from before an enable/disable, or of a caller with other scopes, are stale.
        let mut fingerprint = self.fingerprint ^ generation.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        if let Some(p) = hiding {
            fingerprint ^= p.scopes_fingerprint();
        }
        let (items, next) = page_of(&visible, fingerprint, cursor, page_size)?;
        Some((items.to_vec(), next))
    }
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

/// Opaque-cursor pagination over any slice: a cursor is an offset tied to a fingerprint.
pub(crate) fn page_of<'a, T>(
    items: &'a [T],
    fingerprint: u64,
    cursor: Option<&str>,
    page_size: usize,
) -> Option<(&'a [T], Option<String>)> {
    let start = match cursor {
        None | Some("") => 0,
        Some(c) => decode_cursor(c, fingerprint, items.len())?,
    };
    let end = start.saturating_add(page_size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| encode_cursor(end, fingerprint));
    Some((&items[start..end], next))
}

fn encode_cursor(offset: usize, fingerprint: u64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{offset}:{fingerprint:016x}"))
}

fn decode_cursor(cursor: &str, fingerprint: u64, len: usize) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let (offset, print) = text.split_once(':')?;
    let offset: usize = offset.parse().ok()?;
    (u64::from_str_radix(print, 16).ok()? == fingerprint && offset < len).then_some(offset)
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
    pub(crate) fn collect(filter: &dyn Fn(&ToolInfo) -> bool) -> Result<Registry, BuildError> {
        let tools = collect_tools(filter)?;
        let mut tool_index: Vec<usize> = (0..tools.items.len()).collect();
        tool_index.sort_by_key(|&i| tools.items[i].def.name);
        Ok(Registry {
            tools,
            tool_index,
            resources: collect_resources()?,
            templates: collect_templates()?,
            prompts: collect_prompts()?,
        })
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

fn collect_tools(filter: &dyn Fn(&ToolInfo) -> bool) -> Result<Paged<RegisteredTool>, BuildError> {
    let mut defs: Vec<&'static ToolDef> = inventory::iter::<ToolDef>
        .into_iter()
        .filter(|d| {
            filter(&ToolInfo {
                name: d.name,
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
        meta: meta_map(def.meta),
    }
}

fn parsed_defs() -> Result<Vec<(&'static ResourceDef, UriTemplate)>, BuildError> {
    inventory::iter::<ResourceDef>
        .into_iter()
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

fn collect_resources() -> Result<Paged<RegisteredResource>, BuildError> {
    let mut defs: Vec<&'static ResourceDef> = parsed_defs()?
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

fn collect_templates() -> Result<Paged<RegisteredTemplate>, BuildError> {
    let mut defs: Vec<_> = parsed_defs()?
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
                meta: meta_map(def.meta),
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

fn collect_prompts() -> Result<Paged<RegisteredPrompt>, BuildError> {
    let mut defs: Vec<&'static PromptDef> = inventory::iter::<PromptDef>.into_iter().collect();
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
    use super::*;

    #[test]
    fn tool_names_follow_the_spec_rules() {
        assert!(valid_tool_name("get_weather.v2-beta"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }

    #[test]
    fn cursors_are_opaque_checked_and_bounded() {
        let items: Vec<u32> = (0..5).collect();
        let (page, next) = page_of(&items, 7, None, 2).unwrap();
        assert_eq!(page, [0, 1]);
        let next = next.unwrap();
        assert_eq!(page_of(&items, 7, Some(&next), 2).unwrap().0, [2, 3]);
        assert!(
            page_of(&items, 8, Some(&next), 2).is_none(),
            "another list's cursor"
        );
        assert!(page_of(&items, 7, Some("bogus"), 2).is_none());
        assert_eq!(
            page_of(&items, 7, Some(&next), usize::MAX).unwrap().0,
            [2, 3, 4]
        );
    }
}
