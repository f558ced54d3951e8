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
    /// The capabilities of a server serving `registry`, a skills directory if `skills`, and
    /// the `extensions` its builder declared (checked with [`extension_problem`]).
    pub(super) fn of(
        registry: &Registry,
        mounted: super::mount::Offers,
        skills: bool,
        extensions: &[(String, Value)],
    ) -> Declared {
        // Capabilities follow what is registered; any handler may log.
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("logging".into(), json!({}));
        // The declared extensions first: those the framework implements itself overwrite
        // their entries below.
        if !extensions.is_empty() {
            let declared: serde_json::Map<String, Value> = extensions.iter().cloned().collect();
            capabilities.insert("extensions".into(), Value::Object(declared));
        }
        // Lists can change at run time (`Catalog`), and resources can be subscribed to.
        if !registry.tools.items.is_empty() || mounted.tools {
            capabilities.insert("tools".into(), json!({ "listChanged": true }));
        }
        if registry.has_resources() || mounted.resources {
            capabilities.insert(
                "resources".into(),
                json!({ "subscribe": true, "listChanged": true }),
            );
        }
        if skills || mounted.skills {
            // SEP-2640: inline settings (no envelope); skill files are resources, so the
            // resources capability comes with the extension. A mounted server's skills (a
            // proxy's upstream's) are served as it serves them.
            let extensions = capabilities
                .entry("extensions")
                .or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(
                    crate::skills::EXTENSION.into(),
                    json!({ "directoryRead": skills || mounted.skills_directory }),
                );
            }
            capabilities.entry("resources").or_insert_with(|| json!({}));
        }
        if registry.has_apps() {
            // SEP-1865 defines only the client's settings; these mirror them (what apps are
            // served as). Like skills, an app comes with the resources capability.
            let extensions = capabilities
                .entry("extensions")
                .or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(
                    crate::apps::EXTENSION.into(),
                    json!({ "mimeTypes": [crate::apps::MIME_TYPE] }),
                );
            }
        }
        if !registry.prompts.items.is_empty() || mounted.prompts {
            capabilities.insert("prompts".into(), json!({ "listChanged": true }));
        }
        if registry.has_completions() || mounted.completions {
            capabilities.insert("completions".into(), json!({}));
        }
        let capabilities = Value::Object(capabilities);
        let mut stateless_capabilities = capabilities.clone();
        let mut tasks_capabilities = capabilities.clone();
        if registry.has_task_tools() || mounted.tasks {
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

/// Why an extension declaration is unusable, if it is: SEP-2133 identifiers are
/// `{vendor-prefix}/{extension-name}` (the prefix is mandatory, a reversed domain name; both
/// parts follow the `_meta` key rules), and settings are an object.
pub(crate) fn extension_problem(id: &str, settings: &Value) -> Option<String> {
    let Some((prefix, name)) = id.split_once('/') else {
        return Some(
            "an extension identifier is `{vendor-prefix}/{name}`, e.g. `com.example/search`".into(),
        );
    };
    // Labels of letters and digits (hyphens inside) joined by dots; a name of letters,
    // digits, `-`, `_` and `.`, starting and ending with a letter or digit.
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let edge_ok = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
    if !prefix.split('.').all(label_ok) {
        return Some(format!(
            "the prefix {prefix:?} is not a reversed domain name (labels of letters, digits and inner hyphens, joined by dots)"
        ));
    }
    let name_ok = edge_ok(name.bytes().next())
        && edge_ok(name.bytes().last())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !name_ok {
        return Some(format!(
            "the name {name:?} must be letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"
        ));
    }
    if !settings.is_object() {
        return Some(format!(
            "its settings must be a JSON object (`{{}}` for none), not {settings}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_identifiers_follow_sep_2133() {
        let ok = json!({});
        for good in [
            "io.modelcontextprotocol/ui",
            "com.example/conformance",
            "com.example/empty",
            "io.modelcontextprotocol/oauth-client-credentials-v2",
            "x/y",
        ] {
            assert_eq!(extension_problem(good, &ok), None, "{good}");
        }
        for bad in [
            "ui",
            "/ui",
            "com.example/",
            "com..example/ui",
            "-com.example/ui",
            "com.example/-ui",
            "com.example/a/b",
            "com example/ui",
        ] {
            assert!(extension_problem(bad, &ok).is_some(), "{bad}");
        }
        let e = extension_problem("com.example/x", &json!(true)).unwrap();
        assert!(e.contains("JSON object"), "{e}");
    }
}
