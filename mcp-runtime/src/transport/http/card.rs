//! `GET <mcp-url>/server-card`: the server card (SEP-2127), public by design, and
//! `GET /.well-known/ai-catalog.json`: an AI Catalog (the discovery document the server card
//! extension's `docs/discovery.md` names) with that card as its one entry, inline. Both are
//! readable from any origin (`Access-Control-Allow-Origin: *`: they hold nothing a page could
//! abuse), cached for an hour and revalidated with their `ETag`. Served unless
//! [`HttpConfig::server_card`](super::HttpConfig::server_card) turns them off; by default only
//! where they tell nothing the server does not already tell every client (no authorization
//! configured: with one, `serverInfo` is for token holders only) and the server has a
//! reverse-DNS name.

use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ALLOW, CACHE_CONTROL, CONTENT_TYPE,
    ETAG, IF_NONE_MATCH,
};
use http::{HeaderMap, HeaderValue, Method, StatusCode};

use super::body::{self, HttpResponse};
use super::session_era::SessionEra;
use super::shared::Shared;
use crate::protocol::{ProtocolEra, ProtocolVersion};
use crate::server::card;

/// The path suffix, after the MCP endpoint's path.
pub(crate) const SUFFIX: &str = "/server-card";

/// The AI Catalog's well-known path (site-wide: not under the MCP endpoint's path).
pub(crate) const CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// The AI Catalog's media type.
const CATALOG_MEDIA_TYPE: &str = "application/ai-catalog+json";

/// Whether this server serves its card.
pub(crate) fn enabled(state: &Shared) -> bool {
    #[cfg(feature = "auth")]
    let default = state.config.auth.is_none();
    #[cfg(not(feature = "auth"))]
    let default = true;
    state.config.server_card.unwrap_or(default)
}

/// The card as this server serves it: its `remotes` entry names the authorization resource
/// (the server's canonical URL) when there is one, with the versions it serves.
fn document(state: &Shared) -> Option<serde_json::Value> {
    #[cfg(feature = "auth")]
    let url = state.config.auth.as_ref().map(|a| a.resource.clone());
    #[cfg(not(feature = "auth"))]
    let url: Option<String> = None;
    let versions: Vec<ProtocolVersion> = match state.config.session_era {
        SessionEra::Reject => ProtocolVersion::of_era(ProtocolEra::Stateless).collect(),
        _ => ProtocolVersion::ALL.to_vec(),
    };
    card::of(&state.server, url.as_deref(), &versions)
}

/// The answer to a request for the card; `None` when there is no card (a 404 follows).
pub(crate) fn answer(state: &Shared, method: &Method, headers: &HeaderMap) -> Option<HttpResponse> {
    if !enabled(state) {
        return None;
    }
    let bytes = serde_json::to_vec(&document(state)?).ok()?;
    Some(public(method, headers, bytes, card::MEDIA_TYPE))
}

/// The answer to a request for the AI Catalog: the card, inline (`data`: the catalog needs no
/// URL of this server, which a proxy in front may change), under the identifier
/// `urn:air:{publisher}:mcp:{name}` its reverse-DNS name gives (`com.example/weather` is
/// `urn:air:example.com:mcp:weather`). `None` when there is no card (a 404 follows).
pub(crate) fn answer_catalog(
    state: &Shared,
    method: &Method,
    headers: &HeaderMap,
) -> Option<HttpResponse> {
    if !enabled(state) {
        return None;
    }
    let card = document(state)?;
    let identifier = identifier(card.get("name")?.as_str()?)?;
    let catalog = serde_json::json!({
        "specVersion": "1.0",
        "entries": [{
            "identifier": identifier,
            "type": card::MEDIA_TYPE,
            "data": card,
        }],
    });
    let bytes = serde_json::to_vec(&catalog).ok()?;
    Some(public(method, headers, bytes, CATALOG_MEDIA_TYPE))
}

/// The `urn:air` identifier of a card named `namespace/name` (reverse-DNS namespace).
fn identifier(card_name: &str) -> Option<String> {
    let (namespace, name) = card_name.split_once('/')?;
    let publisher: Vec<&str> = namespace.split('.').rev().collect();
    Some(format!("urn:air:{}:mcp:{name}", publisher.join(".")))
}

/// A public, read-only JSON document: CORS for any origin, an `ETag` honoured by
/// `If-None-Match` (304), an hour of caching; `GET` and `HEAD` (and the `OPTIONS` preflight)
/// only.
fn public(
    method: &Method,
    headers: &HeaderMap,
    bytes: Vec<u8>,
    media_type: &'static str,
) -> HttpResponse {
    let cors = |r: &mut HttpResponse| {
        let h = r.headers_mut();
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        h.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("ETag"),
        );
    };
    if method == Method::OPTIONS {
        let mut r = body::empty(StatusCode::NO_CONTENT);
        cors(&mut r);
        let h = r.headers_mut();
        h.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET"),
        );
        h.insert(
            ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("Content-Type, If-None-Match"),
        );
        h.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("3600"));
        return r;
    }
    if method != Method::GET && method != Method::HEAD {
        let mut r = body::empty(StatusCode::METHOD_NOT_ALLOWED);
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return r;
    }
    let tag = format!("\"{}\"", &crate::id::digest_hex(&bytes)[..32]);
    let matches = headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let t = t.trim();
            t == "*" || t.strip_prefix("W/").unwrap_or(t) == tag
        });
    let mut r = if matches {
        body::empty(StatusCode::NOT_MODIFIED)
    } else {
        let mut r = body::json(StatusCode::OK, bytes);
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(media_type));
        r
    };
    cors(&mut r);
    let h = r.headers_mut();
    h.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    if let Ok(tag) = HeaderValue::from_str(&tag) {
        h.insert(ETAG, tag);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::identifier;

    #[test]
    fn the_catalog_identifier_reverses_the_namespace() {
        assert_eq!(
            identifier("com.example/weather").as_deref(),
            Some("urn:air:example.com:mcp:weather")
        );
        assert_eq!(
            identifier("io.github.someone/tool-box").as_deref(),
            Some("urn:air:someone.github.io:mcp:tool-box")
        );
        assert_eq!(identifier("no-namespace"), None);
    }
}
