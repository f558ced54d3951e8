//! The `list_*` calls: every page, following `nextCursor`, within bounds a server cannot
//! stretch: the items and bytes across pages, the number of pages, and no cursor twice.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use super::error::ClientError;
use super::limits::MAX_PAGES;
use super::{Client, read_all};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

impl Client {
    /// Every item of a paginated list (`tools/list`, …), following `nextCursor`. A server
    /// that hands out fresh cursors forever is stopped by the bounds (items, bytes, pages);
    /// one that sends a cursor it sent before is stopped at once: its pages loop.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let limits = self.core.limits;
        let mut items = Vec::new();
        let mut bytes = 0usize;
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.request(method, params).await?;
            bytes = bytes.saturating_add(json_len(&page));
            if bytes > limits.max_list_bytes {
                return Err(ClientError::too_large(
                    format!("{method}: the pages together (bytes of JSON)"),
                    limits.max_list_bytes,
                ));
            }
            let Some(Value::Array(list)) = page.get_mut(key).map(Value::take) else {
                return Err(ClientError::protocol(format!(
                    "{method}: the result has no `{key}` list"
                )));
            };
            if items.len() + list.len() > limits.max_list_items {
                return Err(ClientError::too_large(
                    format!("{method}: the items across pages"),
                    limits.max_list_items,
                ));
            }
            items.extend(list);
            let Some(Value::String(next)) = page.get_mut("nextCursor").map(Value::take) else {
                return Ok(items);
            };
            if !seen.insert(next.clone()) {
                return Err(ClientError::protocol(format!(
                    "{method}: the server sent the cursor {:?} a second time (its pages loop)",
                    crate::protocol::error::clip(&next)
                )));
            }
            cursor = Some(next);
        }
        Err(ClientError::too_large(
            format!("{method}: the pages"),
            MAX_PAGES,
        ))
    }

    /// Every tool (all pages). Tools whose `x-mcp-header` annotations break the spec's rules
    /// are left out (the spec says a client must not use them), with a warning.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = Vec::new();
        let mut headers = HashMap::new();
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
                Ok(params) if params.is_empty() => {}
                Ok(params) => {
                    headers.insert(name.clone(), params);
                }
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
        self.core.remember_tool_headers(headers);
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

/// The length of `value` as JSON, without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_is_the_length_of_the_json() {
        let v = json!({"tools": [{"name": "a"}], "nextCursor": "é"});
        assert_eq!(json_len(&v), serde_json::to_vec(&v).unwrap().len());
    }
}
