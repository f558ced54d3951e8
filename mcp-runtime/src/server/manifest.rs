//! The server described without a client: what `--describe` prints (`--manifest` prints the
//! server card, [`super::card`]).
//!
//! The shape follows two documents of the MCP ecosystem, neither of which covers it all:
//!
//! - the MCP registry's `server.json` (`ServerDetail` in the registry's `server.schema.json`,
//!   2025-12-11) for the identity: `name`, `title`, `description`, `version`, `websiteUrl`,
//!   `icons`, the same fields as the protocol's `serverInfo`;
//! - the server card proposal (SEP-1649) for what the server offers: `instructions`,
//!   `capabilities`, and the `tools`, `resources`, `resourceTemplates` and `prompts` lists, each
//!   entry exactly as the matching `…/list` result gives it. `server.json` has no such fields,
//!   and later drafts of the card (SEP-2127) leave listing to a live connection.
//!
//! It has no `$schema`: a `run!()` server's name is its Cargo package's, not the reverse-DNS
//! name (`io.github.user/server`) the registry requires, and it has no `packages` or `remotes`,
//! which depend on where the binary is published.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::registry::Listed;

use super::Server;

/// What [`Server::manifest`] returns.
pub(super) fn of(server: &Server) -> Value {
    let inner = &server.inner;
    let registry = &inner.registry;
    let catalog = &inner.catalog;
    let mut out = match serde_json::to_value(&inner.info) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    if let Some(instructions) = &inner.instructions {
        out.insert("instructions".into(), instructions.clone().into());
    }
    out.insert("capabilities".into(), inner.tasks_capabilities.clone());
    let listing =
        |raw: &RawValue| -> Value { serde_json::from_str(raw.get()).unwrap_or(Value::Null) };
    let tools = registry
        .tools
        .items
        .iter()
        .filter(|t| t.enabled(catalog))
        .map(|t| listing(t.listing_for(ProtocolVersion::V2025_11_25)));
    // A mounted server's items follow, as its lists give them (under the mounted names).
    let mounted = |kind: super::mount::Kind| -> Vec<Value> {
        inner
            .mounts
            .list
            .iter()
            .flat_map(|m| m.source.described(kind))
            .map(|raw| listing(&raw))
            .collect()
    };
    let mut tools: Vec<Value> = tools.collect();
    tools.extend(mounted(super::mount::Kind::Tool));
    out.insert("tools".into(), tools.into());
    let mut resources: Vec<Value> = registry
        .resources
        .items
        .iter()
        .filter(|r| r.enabled(catalog))
        .map(|r| listing(&r.listing))
        .collect();
    if let Some(skills) = &inner.skills {
        resources.extend(skills.manifests().iter().map(|raw| listing(raw)));
    }
    resources.extend(mounted(super::mount::Kind::Resource));
    out.insert("resources".into(), resources.into());
    let templates = registry
        .templates
        .items
        .iter()
        .filter(|t| t.enabled(catalog))
        .map(|t| listing(&t.listing));
    let mut templates: Vec<Value> = templates.collect();
    templates.extend(mounted(super::mount::Kind::Template));
    out.insert("resourceTemplates".into(), templates.into());
    let prompts = registry
        .prompts
        .items
        .iter()
        .filter(|p| p.enabled(catalog))
        .map(|p| listing(&p.listing));
    let mut prompts: Vec<Value> = prompts.collect();
    prompts.extend(mounted(super::mount::Kind::Prompt));
    out.insert("prompts".into(), prompts.into());
    Value::Object(out)
}
