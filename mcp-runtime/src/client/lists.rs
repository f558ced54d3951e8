//! The `list_*` calls: every page, following `nextCursor`, within bounds a server cannot
//! stretch: the items and bytes across pages, the number of pages, and no cursor twice.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use super::cache::CacheHint;
use super::error::ClientError;
use super::limits::MAX_PAGES;
use super::{Client, read_all};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

/// A whole list (every page) with what its pages said of caching it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Listed<T> {
    /// The items, in the server's order.
    pub items: Vec<T>,
    /// The 2026-07-28 cache hint, over all pages: the shortest `ttlMs`, `private` if any page
    /// says so; `None` when a page has none (the session era).
    pub cache: Option<CacheHint>,
    /// Whether the list came from the client's cache ([`ClientBuilder::cache`](super::ClientBuilder::cache))
    /// rather than from the server.
    pub from_cache: bool,
}

impl<T> Listed<T> {
    fn map<U>(
        self,
        f: impl FnOnce(Vec<T>) -> Result<Vec<U>, ClientError>,
    ) -> Result<Listed<U>, ClientError> {
        Ok(Listed {
            items: f(self.items)?,
            cache: self.cache,
            from_cache: self.from_cache,
        })
    }
}

impl Client {
    /// Every item of a paginated list (`tools/list`, …), following `nextCursor`. A server
    /// that hands out fresh cursors forever is stopped by the bounds (items, bytes, pages);
    /// one that sends a cursor it sent before is stopped at once: its pages loop. Served
    /// from the cache while its hint lasts, when the cache is on.
    pub(crate) async fn list_all(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Listed<Value>, ClientError> {
        if let Some((items, hint)) = self.core.cache.get(method) {
            return Ok(Listed {
                items,
                cache: Some(hint),
                from_cache: true,
            });
        }
        let generation = self.core.cache.generation(method);
        let listed = self.fetch_all(method, key).await?;
        self.core
            .cache
            .put(method, generation, &listed.items, listed.cache);
        Ok(listed)
    }

    async fn fetch_all(&self, method: &str, key: &str) -> Result<Listed<Value>, ClientError> {
        let limits = self.core.limits;
        let mut hint = None;
        let mut items = Vec::new();
        let mut bytes = 0usize;
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for page_no in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.request(method, params).await?;
            let page_hint = CacheHint::of(&page);
            hint = if page_no == 0 {
                page_hint
            } else {
                CacheHint::merge(hint, page_hint)
            };
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
                return Ok(Listed {
                    items,
                    cache: hint,
                    from_cache: false,
                });
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
        Ok(self.list_tools_listed().await?.items)
    }

    /// [`list_tools`](Self::list_tools) with the list's cache hint (2026-07-28 `ttlMs` and
    /// `cacheScope`), and whether it came from the client's cache.
    pub async fn list_tools_listed(&self) -> Result<Listed<Tool>, ClientError> {
        let listed = self.list_all("tools/list", "tools").await?;
        let (cache, from_cache) = (listed.cache, listed.from_cache);
        let mut tools = Vec::new();
        let mut headers = HashMap::new();
        for raw in listed.items {
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
        Ok(Listed {
            items: tools,
            cache,
            from_cache,
        })
    }

    /// Every resource (all pages).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        Ok(self.list_resources_listed().await?.items)
    }

    /// [`list_resources`](Self::list_resources) with the list's cache hint.
    pub async fn list_resources_listed(&self) -> Result<Listed<Resource>, ClientError> {
        self.list_all("resources/list", "resources")
            .await?
            .map(|items| read_all(items, "resources/list"))
    }

    /// Every resource template (all pages).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        Ok(self.list_resource_templates_listed().await?.items)
    }

    /// [`list_resource_templates`](Self::list_resource_templates) with the list's cache hint.
    pub async fn list_resource_templates_listed(
        &self,
    ) -> Result<Listed<ResourceTemplate>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await?
            .map(|items| read_all(items, "resources/templates/list"))
    }

    /// Every prompt (all pages).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        Ok(self.list_prompts_listed().await?.items)
    }

    /// [`list_prompts`](Self::list_prompts) with the list's cache hint.
    pub async fn list_prompts_listed(&self) -> Result<Listed<Prompt>, ClientError> {
        self.list_all("prompts/list", "prompts")
            .await?
            .map(|items| read_all(items, "prompts/list"))
    }
}

/// `server/discover`'s answer: what a 2026-07-28 server says of itself, and for how long.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Discovery {
    /// The protocol versions the server speaks.
    pub supported_versions: Vec<String>,
    /// Its capabilities object.
    pub capabilities: Value,
    /// Its instructions for the model, if any.
    pub instructions: Option<String>,
    /// Its `serverInfo` (`_meta` `io.modelcontextprotocol/serverInfo`), if it sent one that reads.
    pub server_info: Option<crate::protocol::Implementation>,
    /// The cache hint (`ttlMs`, `cacheScope`): how long a host may rely on this answer.
    pub cache: Option<CacheHint>,
    /// Whether it came from the client's cache rather than the server.
    pub from_cache: bool,
    /// The whole result, as the server sent it.
    pub raw: Value,
}

impl Client {
    /// Asks `server/discover` (2026-07-28; a session-era server refuses it), or answers
    /// from the cache while the last answer's `ttlMs` lasts, when the cache is on
    /// ([`ClientBuilder::cache`](super::ClientBuilder::cache)). What connecting learnt stays
    /// in [`server_capabilities`](Self::server_capabilities) and the like; this is for a host
    /// that re-checks a long-lived connection, honouring the hint.
    pub async fn discover(&self) -> Result<Discovery, ClientError> {
        let cache = &self.core.cache;
        let (raw, hint, from_cache) = match cache.get("server/discover") {
            Some((mut items, hint)) if items.len() == 1 => (items.remove(0), Some(hint), true),
            _ => {
                let generation = cache.generation("server/discover");
                let raw = self.request("server/discover", json!({})).await?;
                let hint = CacheHint::of(&raw);
                cache.put(
                    "server/discover",
                    generation,
                    std::slice::from_ref(&raw),
                    hint,
                );
                (raw, hint, false)
            }
        };
        Ok(Discovery {
            supported_versions: raw
                .get("supportedVersions")
                .and_then(Value::as_array)
                .map(|v| {
                    v.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            capabilities: raw.get("capabilities").cloned().unwrap_or(json!({})),
            instructions: raw
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            server_info: raw
                .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
                .cloned()
                .and_then(|v| serde_json::from_value(v).ok()),
            cache: hint,
            from_cache,
            raw,
        })
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
