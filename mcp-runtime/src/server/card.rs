//! The server card (SEP-2127, `modelcontextprotocol/experimental-ext-server-card`): what a
//! client or registry learns about a server before connecting, as the document
//! `GET <mcp-url>/server-card` serves (`application/mcp-server-card+json`).
//!
//! Its fields are those the server already tells every client once connected (`serverInfo`,
//! the supported versions), plus where it is and its source repository; it lists no tools,
//! resources or prompts (a live connection lists them). Its `name` is reverse-DNS
//! (`com.example/weather`): [`ServerBuilder::card_name`](crate::ServerBuilder::card_name), or
//! derived from the repository (`https://github.com/acme/weather` gives `io.github.acme/…`, the
//! MCP registry's convention) or the website (`https://weather.example.com` gives
//! `com.example.weather/…`), followed by the server's `serverInfo.name`. Without any of them
//! the server has no card.

use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;

use super::Server;

/// The media type of a server card.
pub(crate) const MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The `$schema` every card names.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// Why `name` cannot be a card's name (`namespace/name` of `[a-zA-Z0-9.-]` and
/// `[a-zA-Z0-9._-]`, 3 to 200 characters), if it cannot.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let ok = (3..=200).contains(&name.len())
        && name.split_once('/').is_some_and(|(ns, rest)| {
            !ns.is_empty()
                && !rest.is_empty()
                && ns
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.".contains(&b))
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
        });
    (!ok).then(|| {
        format!(
            "{name:?} is not a server card name: `namespace/name` in reverse-DNS form (e.g. com.example/weather), 3 to 200 characters"
        )
    })
}

/// The namespace the MCP registry gives a GitHub repository (`io.github.<owner>`), or the
/// reversed host of another URL (`https://weather.example.com` → `com.example.weather`).
fn namespace_of(url: &str, github: bool) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = host.split(':').next()?.to_ascii_lowercase();
    if github {
        if host != "github.com" {
            return None;
        }
        let owner = path.split('/').next().filter(|o| !o.is_empty())?;
        return Some(format!("io.github.{}", owner.to_ascii_lowercase()));
    }
    let host = host.strip_prefix("www.").unwrap_or(&host);
    let labels: Vec<&str> = host.split('.').collect();
    // A name such as `localhost` or an address says nothing about who publishes the server.
    if labels.len() < 2 || labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    Some(labels.into_iter().rev().collect::<Vec<_>>().join("."))
}

/// `serverInfo.name` as the part after the `/`: characters a card name cannot hold become `-`.
fn local_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The card's `name`: configured, else derived (see the module docs); `None` without one.
pub(crate) fn name(server: &Server) -> Option<String> {
    let inner = &server.inner;
    if let Some(name) = &inner.card_name {
        return Some(name.clone());
    }
    let namespace = inner
        .repository
        .as_deref()
        .and_then(|r| namespace_of(r, true))
        .or_else(|| {
            inner
                .info
                .website_url
                .as_deref()
                .and_then(|w| namespace_of(w, false))
        })?;
    let name = format!("{namespace}/{}", local_part(&inner.info.name));
    name_problem(&name).is_none().then_some(name)
}

/// The card of `server`, reachable at `url` (its Streamable HTTP endpoint, when known) and
/// serving `versions`; `None` when it has no name.
pub(crate) fn of(
    server: &Server,
    url: Option<&str>,
    versions: &[ProtocolVersion],
) -> Option<Value> {
    let inner = &server.inner;
    let info = &inner.info;
    let mut card = Map::new();
    card.insert("$schema".into(), SCHEMA.into());
    card.insert("name".into(), name(server)?.into());
    card.insert("version".into(), info.version.clone().into());
    // Required: the server's description, else its title, else its name.
    let description = info
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .or_else(|| info.title.clone())
        .unwrap_or_else(|| format!("The {} MCP server", info.name));
    card.insert("description".into(), description.into());
    if let Some(title) = &info.title {
        card.insert("title".into(), title.clone().into());
    }
    if let Some(website) = &info.website_url {
        card.insert("websiteUrl".into(), website.clone().into());
    }
    if let Some(repository) = &inner.repository {
        let source = if namespace_of(repository, true).is_some() {
            "github"
        } else {
            "git"
        };
        card.insert(
            "repository".into(),
            json!({ "url": repository, "source": source }),
        );
    }
    if !info.icons.is_empty() {
        card.insert(
            "icons".into(),
            serde_json::to_value(&info.icons).unwrap_or(Value::Null),
        );
    }
    if let Some(url) = url {
        let versions: Vec<&str> = versions.iter().map(|v| v.as_str()).collect();
        card.insert(
            "remotes".into(),
            json!([{ "type": "streamable-http", "url": url, "supportedProtocolVersions": versions }]),
        );
    }
    Some(Value::Object(card))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_derived() {
        assert_eq!(name_problem("com.example/weather"), None);
        for bad in [
            "weather",
            "a/",
            "/b",
            "com.example/a/b",
            "com example/x",
            "a/b c",
        ] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(
            namespace_of("https://github.com/Acme/weather.git", true).as_deref(),
            Some("io.github.acme")
        );
        assert_eq!(namespace_of("https://gitlab.com/acme/weather", true), None);
        assert_eq!(
            namespace_of("https://www.weather.example.com/docs", false).as_deref(),
            Some("com.example.weather")
        );
        assert_eq!(namespace_of("http://localhost:8000", false), None);
        assert_eq!(namespace_of("http://127.0.0.1:8000/", false), None);
        assert_eq!(local_part("my server+x"), "my-server-x");
    }
}
