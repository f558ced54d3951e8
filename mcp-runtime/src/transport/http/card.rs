//! `GET <mcp-url>/server-card`: the server card (SEP-2127), public by design. Readable from
//! any origin (`Access-Control-Allow-Origin: *`: it holds nothing a page could abuse), cached
//! for an hour and revalidated with its `ETag`. Served unless
//! [`HttpConfig::server_card`](super::HttpConfig::server_card) turns it off; by default only
//! where it tells nothing the server does not already tell every client (no authorization
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
fn document(state: &Shared) -> Option<Vec<u8>> {
    #[cfg(feature = "auth")]
    let url = state.config.auth.as_ref().map(|a| a.resource.clone());
    #[cfg(not(feature = "auth"))]
    let url: Option<String> = None;
    let versions: Vec<ProtocolVersion> = match state.config.session_era {
        SessionEra::Reject => ProtocolVersion::of_era(ProtocolEra::Stateless).collect(),
        _ => ProtocolVersion::ALL.to_vec(),
    };
    let card = card::of(&state.server, url.as_deref(), &versions)?;
    serde_json::to_vec(&card).ok()
}

/// The answer to a request for the card; `None` when there is no card (a 404 follows).
pub(crate) fn answer(state: &Shared, method: &Method, headers: &HeaderMap) -> Option<HttpResponse> {
    if !enabled(state) {
        return None;
    }
    let bytes = document(state)?;
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
        return Some(r);
    }
    if method != Method::GET && method != Method::HEAD {
        let mut r = body::empty(StatusCode::METHOD_NOT_ALLOWED);
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return Some(r);
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
            .insert(CONTENT_TYPE, HeaderValue::from_static(card::MEDIA_TYPE));
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
    Some(r)
}
