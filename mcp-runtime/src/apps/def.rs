//! The constant records `#[resource("ui://…", ui(...))]` and `#[tool(ui = "…", visibility =
//! [...])]` register, and the `_meta.ui` objects they become.

use serde_json::{Map, Value, json};

/// An app's `ui(...)` settings: its resource's `_meta.ui` (`McpUiResourceMeta`).
#[derive(Clone, Copy, Debug, Default)]
pub struct UiResourceDef {
    /// `csp.connectDomains`: origins for fetch, XHR and WebSockets.
    pub connect_domains: &'static [&'static str],
    /// `csp.resourceDomains`: origins for scripts, styles, images, fonts and media.
    pub resource_domains: &'static [&'static str],
    /// `csp.frameDomains`: origins for nested iframes.
    pub frame_domains: &'static [&'static str],
    /// `csp.baseUriDomains`: origins for `<base>`.
    pub base_uri_domains: &'static [&'static str],
    /// `permissions`, by their wire names (`camera`, `microphone`, `geolocation`,
    /// `clipboardWrite`).
    pub permissions: &'static [&'static str],
    /// `domain`: a dedicated sandbox origin, in the host's format.
    pub domain: Option<&'static str>,
    /// `prefersBorder`.
    pub prefers_border: Option<bool>,
}

impl UiResourceDef {
    /// The `_meta.ui` object, or `None` when nothing is set (the host's defaults apply).
    pub(crate) fn to_meta(self) -> Option<Value> {
        let mut ui = Map::new();
        let mut csp = Map::new();
        for (key, domains) in [
            ("connectDomains", self.connect_domains),
            ("resourceDomains", self.resource_domains),
            ("frameDomains", self.frame_domains),
            ("baseUriDomains", self.base_uri_domains),
        ] {
            if !domains.is_empty() {
                csp.insert(key.into(), json!(domains));
            }
        }
        if !csp.is_empty() {
            ui.insert("csp".into(), Value::Object(csp));
        }
        if !self.permissions.is_empty() {
            let permissions: Map<String, Value> = self
                .permissions
                .iter()
                .map(|p| ((*p).to_owned(), json!({})))
                .collect();
            ui.insert("permissions".into(), Value::Object(permissions));
        }
        if let Some(domain) = self.domain {
            ui.insert("domain".into(), domain.into());
        }
        if let Some(border) = self.prefers_border {
            ui.insert("prefersBorder".into(), border.into());
        }
        (!ui.is_empty()).then_some(Value::Object(ui))
    }
}

/// A tool's `ui = "…"` and `visibility = [...]`: its `_meta.ui` (`McpUiToolMeta`).
#[derive(Clone, Copy, Debug, Default)]
pub struct UiToolDef {
    /// `resourceUri`: the app that renders the tool's results.
    pub resource_uri: Option<&'static str>,
    /// `visibility`: `"model"` and/or `"app"`; empty when not given (both, by the spec).
    pub visibility: &'static [&'static str],
}

impl UiToolDef {
    /// Adds `ui` (and the deprecated flat `ui/resourceUri`) to a tool's `_meta`.
    pub(crate) fn apply(self, meta: &mut Map<String, Value>) {
        let mut ui = Map::new();
        if let Some(uri) = self.resource_uri {
            ui.insert("resourceUri".into(), uri.into());
            meta.insert(super::LEGACY_RESOURCE_URI_KEY.into(), uri.into());
        }
        if !self.visibility.is_empty() {
            ui.insert("visibility".into(), json!(self.visibility));
        }
        meta.insert("ui".into(), Value::Object(ui));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_settings_use_the_spec_names_and_omit_what_is_unset() {
        assert_eq!(UiResourceDef::default().to_meta(), None);
        let def = UiResourceDef {
            connect_domains: &["https://api.example.com"],
            frame_domains: &["https://www.youtube.com"],
            permissions: &["camera", "clipboardWrite"],
            domain: Some("a1.example-host.com"),
            prefers_border: Some(false),
            ..UiResourceDef::default()
        };
        assert_eq!(
            def.to_meta().unwrap(),
            json!({
                "csp": {
                    "connectDomains": ["https://api.example.com"],
                    "frameDomains": ["https://www.youtube.com"]
                },
                "permissions": { "camera": {}, "clipboardWrite": {} },
                "domain": "a1.example-host.com",
                "prefersBorder": false
            })
        );
    }

    #[test]
    fn a_tool_gets_the_nested_and_the_legacy_key() {
        let mut meta = Map::new();
        UiToolDef {
            resource_uri: Some("ui://counter/app.html"),
            visibility: &["app"],
        }
        .apply(&mut meta);
        assert_eq!(
            Value::Object(meta),
            json!({
                "ui": { "resourceUri": "ui://counter/app.html", "visibility": ["app"] },
                "ui/resourceUri": "ui://counter/app.html"
            })
        );
        let mut meta = Map::new();
        UiToolDef {
            resource_uri: None,
            visibility: &["model"],
        }
        .apply(&mut meta);
        assert_eq!(
            Value::Object(meta),
            json!({ "ui": { "visibility": ["model"] } })
        );
    }
}
