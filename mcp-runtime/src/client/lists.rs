//! The `list_*` calls: every page, following `nextCursor`.

use serde_json::{Value, json};

use super::error::ClientError;
use super::{Client, read_all};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

impl Client {
    /// Every item of a paginated list (`tools/list`, …), following `nextCursor`.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        // A server that returns the same cursor forever is cut off.
        for _ in 0..10_000 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self.request(method, params).await?;
            match page.get(key) {
                Some(Value::Array(list)) => items.extend(list.iter().cloned()),
                _ => {
                    return Err(ClientError::protocol(format!(
                        "{method}: the result has no `{key}` list"
                    )));
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
                _ => return Ok(items),
            }
        }
        Err(ClientError::protocol(format!(
            "{method}: more than 10000 pages"
        )))
    }

    /// Every tool (all pages). Tools whose `x-mcp-header` annotations break the spec's rules
    /// are left out (the spec says a client must not use them), with a warning.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = Vec::new();
        for raw in self.list_all("tools/list", "tools").await? {
            let name = raw
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let schema = raw.get("inputSchema").cloned().unwrap_or(Value::Null);
            // A client MUST NOT use a tool whose `x-mcp-header` annotations break the rules:
            // the server's own check of its tools decides.
            match crate::protocol::headers::header_params(&schema) {
                Ok(params) => self.core.remember_tool_headers(&name, params),
                Err(why) => {
                    tracing::warn!(tool = %name, "leaving out a tool: {why}");
                    continue;
                }
            }
            match serde_json::from_value::<Tool>(raw) {
                Ok(tool) => tools.push(tool),
                Err(e) => {
                    tracing::warn!(tool = %name, error = %e, "leaving out a tool this client cannot read")
                }
            }
        }
        Ok(tools)
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        read_all(
            self.list_all("resources/list", "resources").await?,
            "resources/list",
        )
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        let items = self
            .list_all("resources/templates/list", "resourceTemplates")
            .await?;
        read_all(items, "resources/templates/list")
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        read_all(
            self.list_all("prompts/list", "prompts").await?,
            "prompts/list",
        )
    }
}
