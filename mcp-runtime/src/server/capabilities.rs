//! What a server declares it can do, from what is registered: its `capabilities` in the
//! session era (`initialize`), in 2026-07-28 (`server/discover`, with the extensions), and for
//! 2025-11-25 clients (with the experimental `tasks` capability).

use serde_json::{Value, json};

use crate::registry::Registry;

/// The capabilities a server declares, per kind of client.
pub(super) struct Declared {
    pub(super) capabilities: Value,
    pub(super) stateless_capabilities: Value,
    pub(super) tasks_capabilities: Value,
}

impl Declared {
    /// The capabilities of a server serving `registry`, and a skills directory if `skills`.
    pub(super) fn of(registry: &Registry, skills: bool) -> Declared {
        // Capabilities follow what is registered; any handler may log.
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("logging".into(), json!({}));
        // Lists can change at run time (`Catalog`), and resources can be subscribed to.
        if !registry.tools.items.is_empty() {
            capabilities.insert("tools".into(), json!({ "listChanged": true }));
        }
        if registry.has_resources() {
            capabilities.insert(
                "resources".into(),
                json!({ "subscribe": true, "listChanged": true }),
            );
        }
        if skills {
            // SEP-2640: inline settings (no envelope); skill files are resources, so the
            // resources capability comes with the extension.
            let extensions = capabilities
                .entry("extensions")
                .or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(
                    crate::skills::EXTENSION.into(),
                    json!({ "directoryRead": true }),
                );
            }
            capabilities.entry("resources").or_insert_with(|| json!({}));
        }
        if !registry.prompts.items.is_empty() {
            capabilities.insert("prompts".into(), json!({ "listChanged": true }));
        }
        if registry.has_completions() {
            capabilities.insert("completions".into(), json!({}));
        }
        let capabilities = Value::Object(capabilities);
        let mut stateless_capabilities = capabilities.clone();
        let mut tasks_capabilities = capabilities.clone();
        if registry.has_task_tools() {
            stateless_capabilities["extensions"][crate::server::tasks::EXTENSION] = json!({});
            tasks_capabilities["tasks"] =
                json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
        }
        Declared {
            capabilities,
            stateless_capabilities,
            tasks_capabilities,
        }
    }
}
