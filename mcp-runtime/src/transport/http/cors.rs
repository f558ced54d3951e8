//! CORS for the browser origins listed with [`HttpConfig::allowed_origins`]: the same
//! list the Origin check admits, so an origin is either trusted for both or for neither.
//!
//! An origin not listed gets no `Access-Control-*` header at all, loopback ones included (the
//! Origin check lets those through for local tools; a browser page on another loopback port is
//! still another origin and has to be listed). `*` is never sent, and neither is
//! `Access-Control-Allow-Credentials`: MCP clients authenticate with a bearer token in the
//! `Authorization` header, which a browser sends without credentials mode, so cookies never
//! have to cross origins.

use http::header::{
    ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ACCESS_CONTROL_REQUEST_HEADERS,
    ACCESS_CONTROL_REQUEST_METHOD, ORIGIN, VARY,
};
use http::{HeaderMap, HeaderValue, Method, StatusCode};

use super::body::{self, HttpResponse};
use super::config::HttpConfig;

/// The methods of the endpoint (`OPTIONS` is the preflight itself).
const METHODS: &str = "GET, POST, DELETE, OPTIONS";

/// Request headers a client may send besides the CORS-safelisted ones; `Mcp-Param-*` (the
/// 2026-07-28 argument mirrors, one per tool argument) are admitted by prefix.
const REQUEST_HEADERS: [&str; 8] = [
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
];
const PARAM_PREFIX: &str = "mcp-param-";

/// Response headers a script may read (the safelisted ones, such as `Content-Type`, need no
/// listing): the session id, the negotiated version, the auth challenge, and the retry hint of
/// 429 and 503.
const EXPOSED: &str = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After";

/// How long a browser may cache a preflight, in seconds (Chromium caps it at 2 h anyway).
const MAX_AGE: &str = "600";

/// The request's `Origin` when CORS applies to it: listed in the configuration (compared
/// without regard to case, as the Origin check does).
pub(crate) fn allowed_origin(headers: &HeaderMap, config: &HttpConfig) -> Option<HeaderValue> {
    let origin = headers.get(ORIGIN)?;
    let text = origin.to_str().ok()?;
    config
        .allowed_origins
        .iter()
        .any(|o| o.eq_ignore_ascii_case(text))
        .then(|| origin.clone())
}

/// Whether a request is a CORS preflight: `OPTIONS` naming the method it prepares.
pub(crate) fn is_preflight(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::OPTIONS && headers.contains_key(ACCESS_CONTROL_REQUEST_METHOD)
}

/// The answer to a preflight from `origin` (already known to be listed): 204 with what may be
/// sent, or 403 when the method or a header asked for is one the endpoint never accepts (the
/// browser would refuse the request anyway; saying so is clearer than a silent 204).
pub(crate) fn preflight(origin: HeaderValue, headers: &HeaderMap) -> HttpResponse {
    let method = headers
        .get(ACCESS_CONTROL_REQUEST_METHOD)
        .and_then(|m| m.to_str().ok())
        .unwrap_or("");
    if !["GET", "POST", "DELETE"].contains(&method) {
        return refused(format!(
            "CORS preflight for method {method:?}: the MCP endpoint accepts GET, POST and DELETE"
        ));
    }
    let mut allowed = REQUEST_HEADERS.join(", ");
    for value in headers.get_all(ACCESS_CONTROL_REQUEST_HEADERS) {
        let Ok(list) = value.to_str() else {
            return refused("CORS preflight with a non-ASCII Access-Control-Request-Headers");
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let lower = name.to_ascii_lowercase();
            if REQUEST_HEADERS.contains(&lower.as_str()) {
                continue;
            }
            // Echoed only once known to be a header name of ours: nothing else reaches the reply.
            let param = lower
                .strip_prefix(PARAM_PREFIX)
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(is_token_byte));
            if !param {
                return refused(format!(
                    "CORS preflight for header {name:?}: the MCP endpoint does not read it"
                ));
            }
            allowed.push_str(", ");
            allowed.push_str(&lower);
        }
    }
    let mut r = body::empty(StatusCode::NO_CONTENT);
    let h = r.headers_mut();
    h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(VARY, HeaderValue::from_static("Origin"));
    h.insert(
        ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(METHODS),
    );
    h.insert(
        ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_str(&allowed).expect("checked token bytes"),
    );
    h.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE));
    r
}

/// Adds what lets a script from `origin` read `response` (any status, SSE streams too: the
/// headers go out before the body).
pub(crate) fn expose(response: &mut HttpResponse, origin: HeaderValue) {
    let h = response.headers_mut();
    h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.append(VARY, HeaderValue::from_static("Origin"));
    h.insert(
        ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED),
    );
}

fn refused(why: impl Into<std::borrow::Cow<'static, str>>) -> HttpResponse {
    body::error(
        StatusCode::FORBIDDEN,
        crate::protocol::McpError::invalid_request(why),
    )
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> HttpConfig {
        HttpConfig::default().allowed_origins(["https://app.example.com"])
    }

    fn with_origin(origin: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        h
    }

    #[test]
    fn only_listed_origins_get_cors() {
        let c = config();
        assert!(allowed_origin(&with_origin("https://app.example.com"), &c).is_some());
        assert!(allowed_origin(&with_origin("HTTPS://APP.example.com"), &c).is_some());
        assert!(allowed_origin(&with_origin("http://localhost:3000"), &c).is_none());
        assert!(allowed_origin(&with_origin("https://app.example.com.evil"), &c).is_none());
        assert!(allowed_origin(&HeaderMap::new(), &c).is_none());
        assert!(
            allowed_origin(
                &with_origin("https://app.example.com"),
                &HttpConfig::default()
            )
            .is_none(),
            "CORS is off unless origins are listed"
        );
    }

    #[test]
    fn preflights_echo_param_headers_and_refuse_others() {
        let origin = HeaderValue::from_static("https://app.example.com");
        let mut h = with_origin("https://app.example.com");
        h.insert(
            ACCESS_CONTROL_REQUEST_METHOD,
            HeaderValue::from_static("POST"),
        );
        h.insert(
            ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_static("content-type, Mcp-Param-Region, mcp-session-id"),
        );
        let r = preflight(origin.clone(), &h);
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
        let allow = r.headers()[ACCESS_CONTROL_ALLOW_HEADERS].to_str().unwrap();
        assert!(allow.contains("mcp-param-region"), "{allow}");
        assert!(allow.contains("authorization"), "{allow}");

        h.insert(
            ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_static("x-evil"),
        );
        assert_eq!(
            preflight(origin.clone(), &h).status(),
            StatusCode::FORBIDDEN
        );
        h.insert(
            ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_static("mcp-param-"),
        );
        assert_eq!(
            preflight(origin.clone(), &h).status(),
            StatusCode::FORBIDDEN
        );
        h.remove(ACCESS_CONTROL_REQUEST_HEADERS);
        h.insert(
            ACCESS_CONTROL_REQUEST_METHOD,
            HeaderValue::from_static("PUT"),
        );
        assert_eq!(preflight(origin, &h).status(), StatusCode::FORBIDDEN);
    }
}
