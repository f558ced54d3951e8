//! The MCP Apps extension's names on the wire (SEP-1865), and whether a client's capabilities
//! declare it: here so that a request's `Context` can tell without reaching above `protocol/`.
//! The user-facing module is `crate::apps`.

/// The extension's identifier, under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type an app is served as.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Whether `capabilities` (a client's) declare the extension with [`MIME_TYPE`].
pub(crate) fn supported_by(capabilities: &serde_json::Value) -> bool {
    capabilities["extensions"][EXTENSION]["mimeTypes"]
        .as_array()
        .is_some_and(|types| types.iter().any(|t| t == MIME_TYPE))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_client_supports_apps_when_it_declares_the_mime_type() {
        let caps = |ext: serde_json::Value| json!({ "extensions": { super::EXTENSION: ext } });
        assert!(super::supported_by(&caps(
            json!({ "mimeTypes": ["text/html;profile=mcp-app"] })
        )));
        assert!(!super::supported_by(&caps(json!({}))));
        assert!(!super::supported_by(&caps(
            json!({ "mimeTypes": ["text/uri-list"] })
        )));
        assert!(!super::supported_by(&json!({})));
    }
}
