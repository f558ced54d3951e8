//! Authorization on the HTTP side: the RFC 9728 metadata route, the bearer token of every
//! request to the MCP endpoint (and the HTTP+SSE routes), and the scopes a tool, prompt or
//! resource needs. Without the `auth` feature, or without [`Auth`](crate::auth::Auth) in the
//! configuration, every request passes with no principal.

// The error is the response itself, built once for a refused request (as `read_body`'s).
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use http::{HeaderMap, Method, Uri};

use super::body::HttpResponse;
use super::state::Shared;
use crate::auth::Principal;
use crate::protocol::jsonrpc;
use crate::server::envelope::Head;

/// The metadata document, for a `GET` of its path(s); `None` for any other request.
pub(crate) fn metadata(state: &Shared, method: &Method, path: &str) -> Option<HttpResponse> {
    #[cfg(feature = "auth")]
    if let Some(auth) = &state.config.auth {
        return enabled::metadata(state, auth, method, path);
    }
    let _ = (state, method, path);
    None
}

/// The request's principal: `Ok(None)` without authorization; the 400/401/403/503 answer when
/// its token is missing, malformed, invalid or lacks the required scopes.
pub(crate) async fn authenticate(
    state: &Shared,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<Option<Arc<Principal>>, HttpResponse> {
    #[cfg(feature = "auth")]
    if let Some(auth) = &state.config.auth {
        return enabled::authenticate(auth, headers, uri).await.map(Some);
    }
    let _ = (state, headers, uri);
    Ok(None)
}

/// 403 `insufficient_scope` when the request calls a tool, gets a prompt or reads a resource
/// whose `scopes` the principal lacks.
pub(crate) fn check_scopes(
    state: &Shared,
    req: &jsonrpc::Request<'_>,
    head: Option<&Head<'_>>,
    who: Option<&Principal>,
) -> Result<(), HttpResponse> {
    #[cfg(feature = "auth")]
    if let (Some(auth), Some(who)) = (&state.config.auth, who) {
        return enabled::check_scopes(state, auth, req, head, who);
    }
    let _ = (state, req, head, who);
    Ok(())
}

/// [`check_scopes`] for a message not decoded yet: the HTTP+SSE transport's, and a batch (a
/// JSON array, taken apart later by the connection), every request of which is checked: one
/// call the token's scopes do not allow refuses the whole batch.
pub(crate) fn check_scopes_text(
    state: &Shared,
    text: &str,
    who: Option<&Principal>,
) -> Result<(), HttpResponse> {
    #[cfg(feature = "auth")]
    if state.config.auth.is_some() {
        if text.trim_start().starts_with('[') {
            if let Ok(items) = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(text) {
                for item in items {
                    check_scopes_text(state, item.get(), who)?;
                }
            }
            return Ok(());
        }
        if let Ok(envelope) = crate::server::envelope::decode(text)
            && let jsonrpc::Incoming::Request(req) = &envelope.message
        {
            return check_scopes(state, req, envelope.head.as_ref(), who);
        }
    }
    let _ = (state, text, who);
    Ok(())
}

#[cfg(feature = "auth")]
mod enabled {
    use std::sync::Arc;

    use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
    use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
    use serde_json::json;

    use super::super::body::{self, HttpResponse};
    use super::super::state::Shared;
    use crate::auth::{Auth, Principal, TokenError};
    use crate::protocol::jsonrpc;
    use crate::server::envelope::Head;

    pub(super) fn metadata(
        state: &Shared,
        auth: &Auth,
        method: &Method,
        path: &str,
    ) -> Option<HttpResponse> {
        let path = path.trim_end_matches('/');
        let own = auth.metadata_path();
        if path != own && path != "/.well-known/oauth-protected-resource" {
            return None;
        }
        if method != Method::GET {
            return Some(body::empty(StatusCode::METHOD_NOT_ALLOWED));
        }
        let doc = auth.metadata(&state.server.inner.registry.all_scopes());
        let mut r = body::json(StatusCode::OK, serde_json::to_vec(&doc).unwrap_or_default());
        r.headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("max-age=3600"));
        Some(r)
    }

    /// One `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1).
    fn challenge(auth: &Auth, error: Option<(&str, &str)>, scopes: &[&str]) -> HeaderValue {
        let quote = |s: &str| s.replace(['\\', '"'], "").replace(['\r', '\n'], " ");
        let mut parts = vec![format!(
            "resource_metadata=\"{}\"",
            quote(&auth.metadata_url())
        )];
        if let Some((code, why)) = error {
            parts.insert(0, format!("error=\"{code}\""));
            parts.push(format!("error_description=\"{}\"", quote(why)));
        }
        if !scopes.is_empty() {
            parts.push(format!("scope=\"{}\"", quote(&scopes.join(" "))));
        }
        HeaderValue::from_str(&format!("Bearer {}", parts.join(", ")))
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    /// An OAuth error answer (RFC 6750): status, challenge, and a JSON body saying the same.
    fn refuse(
        auth: &Auth,
        status: StatusCode,
        error: Option<(&str, &str)>,
        scopes: &[&str],
    ) -> HttpResponse {
        let body_json = match error {
            Some((code, why)) => json!({"error": code, "error_description": why}),
            None => {
                json!({"error": "unauthorized", "error_description": "this MCP server needs an access token"})
            }
        };
        let mut r = body::json(status, serde_json::to_vec(&body_json).unwrap_or_default());
        r.headers_mut()
            .insert(WWW_AUTHENTICATE, challenge(auth, error, scopes));
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    }

    fn required(auth: &Auth) -> Vec<&str> {
        auth.scopes.iter().map(String::as_str).collect()
    }

    pub(super) async fn authenticate(
        auth: &Auth,
        headers: &HeaderMap,
        uri: &Uri,
    ) -> Result<Arc<Principal>, HttpResponse> {
        let bad = |why: &str| {
            refuse(
                auth,
                StatusCode::BAD_REQUEST,
                Some(("invalid_request", why)),
                &[],
            )
        };
        // RFC 6750 §2.3 allows the query string; OAuth 2.1 and MCP do not (it ends up in logs).
        if uri.query().is_some_and(|q| {
            q.split('&')
                .any(|kv| kv.split('=').next() == Some("access_token"))
        }) {
            return Err(bad(
                "access tokens go in the Authorization header, never in the URL",
            ));
        }
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let value = match (values.next(), values.next()) {
            (None, _) => {
                return Err(refuse(
                    auth,
                    StatusCode::UNAUTHORIZED,
                    None,
                    &required(auth),
                ));
            }
            (Some(_), Some(_)) => return Err(bad("more than one Authorization header")),
            (Some(v), None) => v,
        };
        let text = value
            .to_str()
            .map_err(|_| bad("the Authorization header is not visible ASCII"))?;
        let token = match text.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return Err(bad("the Authorization header must be `Bearer <token>`")),
        };
        let b64ish = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
        if token.is_empty() || !token.chars().all(b64ish) {
            return Err(bad("the bearer token is malformed"));
        }
        let principal = match auth.verifier.verify(token).await {
            Ok(p) => p,
            Err(TokenError::Invalid(why)) => {
                tracing::debug!(%why, "refused an access token");
                return Err(refuse(
                    auth,
                    StatusCode::UNAUTHORIZED,
                    Some(("invalid_token", &why)),
                    &required(auth),
                ));
            }
            Err(TokenError::Unavailable(why)) => {
                tracing::warn!(%why, "could not check an access token");
                let mut r = body::json(
                    StatusCode::SERVICE_UNAVAILABLE,
                    serde_json::to_vec(&json!({
                        "error": "temporarily_unavailable",
                        "error_description": "the access token could not be checked; try again"
                    }))
                    .unwrap_or_default(),
                );
                r.headers_mut()
                    .insert(http::header::RETRY_AFTER, HeaderValue::from_static("5"));
                return Err(r);
            }
        };
        let needed = required(auth);
        let missing = principal.missing(&needed);
        if !missing.is_empty() {
            let why = format!("the token lacks the scope(s) {}", missing.join(" "));
            return Err(refuse(
                auth,
                StatusCode::FORBIDDEN,
                Some(("insufficient_scope", &why)),
                &needed,
            ));
        }
        let mut principal = principal;
        principal.hide_unauthorized = auth.hide_unauthorized;
        Ok(Arc::new(principal))
    }

    /// What a request uses, as `(lookup, name)` pairs for `Registry::scopes_for`: the tool,
    /// prompt or resource it calls or reads, and also the prompt or template a completion is
    /// for, the resource a subscription (or a listen's `resourceSubscriptions`) watches.
    fn targets(req: &jsonrpc::Request<'_>, head: Option<&Head<'_>>) -> Vec<(&'static str, String)> {
        use serde_json::Value;
        let params = || {
            req.params
                .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                .unwrap_or(Value::Null)
        };
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        // The name from the head when the envelope read one, else from the params.
        let named = |key: &str| {
            head.and_then(|h| if key == "uri" { h.uri } else { h.name })
                .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
                .or_else(|| text(&params(), key))
        };
        match &*req.method {
            "tools/call" => named("name")
                .map(|n| ("tools/call", n))
                .into_iter()
                .collect(),
            "prompts/get" => named("name")
                .map(|n| ("prompts/get", n))
                .into_iter()
                .collect(),
            "resources/read" | "resources/subscribe" => named("uri")
                .map(|u| ("resources/read", u))
                .into_iter()
                .collect(),
            "completion/complete" => {
                let p = params();
                let reference = p.get("ref").cloned().unwrap_or(Value::Null);
                match reference.get("type").and_then(Value::as_str) {
                    Some("ref/prompt") => text(&reference, "name")
                        .map(|n| ("prompts/get", n))
                        .into_iter()
                        .collect(),
                    Some("ref/resource") => text(&reference, "uri")
                        .map(|u| ("template", u))
                        .into_iter()
                        .collect(),
                    _ => Vec::new(),
                }
            }
            "subscriptions/listen" => params()
                .pointer("/notifications/resourceSubscriptions")
                .and_then(Value::as_array)
                .map(|uris| {
                    uris.iter()
                        .filter_map(Value::as_str)
                        .map(|u| ("resources/read", u.to_owned()))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    pub(super) fn check_scopes(
        state: &Shared,
        auth: &Auth,
        req: &jsonrpc::Request<'_>,
        head: Option<&Head<'_>>,
        who: &Principal,
    ) -> Result<(), HttpResponse> {
        let inner = &state.server.inner;
        let mut scopes: Vec<&'static str> = Vec::new();
        let mut name = String::new();
        for (lookup, target) in targets(req, head) {
            for s in inner.registry.scopes_for(&inner.changes, lookup, &target) {
                if !scopes.contains(s) {
                    scopes.push(s);
                }
            }
            if name.is_empty() {
                name = target;
            }
        }
        let missing = who.missing(&scopes);
        if missing.is_empty() {
            return Ok(());
        }
        // Every scope the operation needs, in one challenge, so the client can step up once.
        let mut all = required(auth);
        for s in scopes.iter().copied() {
            if !all.contains(&s) {
                all.push(s);
            }
        }
        let why = format!(
            "{} {name:?} needs the scope(s) {}",
            req.method,
            missing.join(" ")
        );
        Err(refuse(
            auth,
            StatusCode::FORBIDDEN,
            Some(("insufficient_scope", &why)),
            &all,
        ))
    }
}
