//! The tools collected from `#[tool]` registrations, validated and described once at start-up.

use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use base64::Engine as _;
use serde_json::Map;
use serde_json::value::RawValue;

use crate::protocol::Tool;
use crate::tool::{OutputMode, ToolDef};

/// A registered tool with its listing built.
pub(crate) struct RegisteredTool {
    pub(crate) def: &'static ToolDef,
    pub(crate) mode: OutputMode,
    /// `tools/list` entry for versions with structured output, and for older ones (no `outputSchema`).
    pub(crate) listing: [Box<RawValue>; 2],
    pub(crate) tool: Tool,
}

/// Start-up errors found while collecting registrations.
#[derive(Debug)]
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

/// The tools of one server, sorted by name (a deterministic order for `tools/list`).
pub(crate) struct Registry {
    tools: Vec<RegisteredTool>,
    /// Changes whenever the set of tools changes; makes old cursors invalid.
    fingerprint: u64,
}

impl Registry {
    pub(crate) fn collect(filter: &dyn Fn(&ToolInfo) -> bool) -> Result<Registry, BuildError> {
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
        let loc = |d: &ToolDef| format!("{}:{}", d.location.0, d.location.1);
        for pair in defs.windows(2) {
            if pair[0].name == pair[1].name {
                let name = pair[0].name;
                let locations = defs
                    .iter()
                    .filter(|d| d.name == name)
                    .map(|d| loc(d))
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
                location: loc(bad),
            });
        }
        let mut hasher = DefaultHasher::new();
        let tools: Vec<RegisteredTool> = defs.into_iter().map(describe).collect();
        tools.iter().for_each(|t| t.def.name.hash(&mut hasher));
        Ok(Registry {
            tools,
            fingerprint: hasher.finish(),
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&RegisteredTool> {
        // Sorted by name: a binary search beats hashing the name for any realistic tool count.
        self.tools
            .binary_search_by(|t| t.def.name.cmp(name))
            .ok()
            .map(|i| &self.tools[i])
    }

    pub(crate) fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The slice of tools a page starting at `cursor` holds, and the cursor of the next page.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Option<(&[RegisteredTool], Option<String>)> {
        let start = match cursor {
            None | Some("") => 0,
            Some(c) => self.decode_cursor(c)?,
        };
        let end = start.saturating_add(page_size.max(1)).min(self.tools.len());
        let next = (end < self.tools.len()).then(|| self.encode_cursor(end));
        Some((&self.tools[start..end], next))
    }

    fn encode_cursor(&self, offset: usize) -> String {
        let raw = format!("{offset}:{:016x}", self.fingerprint);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    }

    fn decode_cursor(&self, cursor: &str) -> Option<usize> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let (offset, fingerprint) = text.split_once(':')?;
        let offset: usize = offset.parse().ok()?;
        (u64::from_str_radix(fingerprint, 16).ok()? == self.fingerprint
            && offset < self.tools.len())
        .then_some(offset)
    }
}

fn describe(def: &'static ToolDef) -> RegisteredTool {
    let output = (def.output)();
    let mut tool = Tool {
        name: def.name.to_owned(),
        title: def.title.map(str::to_owned),
        description: def.description.map(str::to_owned),
        input_schema: (def.input_schema)(),
        output_schema: output.schema,
        annotations: def.annotations.to_annotations(),
        icons: def.icons.iter().map(|i| i.to_icon()).collect(),
        meta: def
            .meta
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.to_value()))
            .collect::<Map<_, _>>(),
    };
    let raw = |t: &Tool| serde_json::value::to_raw_value(t).expect("a tool always serializes");
    let structured = raw(&tool);
    let schema = tool.output_schema.take();
    let plain = raw(&tool);
    tool.output_schema = schema;
    RegisteredTool {
        def,
        mode: output.mode,
        listing: [structured, plain],
        tool,
    }
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
}
