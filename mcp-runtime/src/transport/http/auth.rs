//! Authorization on the HTTP side: the RFC 9728 metadata route, the bearer token of every
//! request to the MCP endpoint (and the HTTP+SSE routes), and the scopes a tool, prompt or
//! resource needs. Without the `auth` feature, or without [`Auth`](crate::auth::Auth) in the
//! configuration, every request passes with no principal.

// The error is the response itself, built once for a refused request (as `read_body`'s).
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use http::{HeaderMap, Method, Uri};

use super::body::HttpResponse;
use super::shared::Shared;
use crate::auth::Principal;
use crate::protocol::params::Request;
use crate::server::envelope::{Decoded, Envelope};

/// The metadata document, for a `GET` of its path(s); `None` for any other request.
pub(crate) fn metadata(state: &Shared, method: &Method, path: &str) -> Option<HttpResponse> {
    #[cfg(feature = "auth")]
    if let Some(auth) = &state.config.auth {
        return enabled::metadata(state, auth, method, path);
    }
    let _ = (state, method, path);
    None
}

/// The last token a connection presented and its principal, for as long as the verifier would
/// hand out the same one without checking again ([`Verified::until`]): a client sends the same
/// token on every request of a kept-alive connection, which is then compared (in constant
/// time) instead of checked, hashed and looked up again. One per connection, when the server
/// checks tokens; a request on a connection shared by several clients (a load balancer's)
/// with another token is checked as any other and remembered in its turn.
///
/// [`Verified::until`]: crate::auth::Verified
#[derive(Default)]
pub(crate) struct TokenMemo {
    #[cfg(feature = "auth")]
    last: std::sync::Mutex<Option<enabled::Memo>>,
}

impl TokenMemo {
    /// One for a connection to a server configured with `config`, if it checks tokens.
    pub(crate) fn for_connection(config: &super::HttpConfig) -> Option<Arc<TokenMemo>> {
        #[cfg(feature = "auth")]
        if config.auth.is_some() {
            return Some(Arc::default());
        }
        let _ = config;
        None
    }
}

/// The request's principal: `Ok(None)` without authorization; the 400/401/403/503 answer when
/// its token is missing, malformed, invalid or lacks the required scopes. `memo`: what the
/// request's connection remembers (see [`TokenMemo`]).
///
/// `defer_required`: a POST to the MCP endpoint, whose body names the operation. A token
/// without the server-wide required scopes is then refused by [`check_required`] once the body
/// is decoded, with a challenge naming those and the operation's scopes together (SEP-2350:
/// every scope the operation needs, in one challenge, so the client steps up once).
pub(crate) async fn authenticate(
    state: &Shared,
    headers: &HeaderMap,
    uri: &Uri,
    defer_required: bool,
    memo: Option<&TokenMemo>,
) -> Result<Option<Arc<Principal>>, HttpResponse> {
    #[cfg(feature = "auth")]
    if let Some(auth) = &state.config.auth {
        return enabled::authenticate(auth, headers, uri, defer_required, memo)
            .await
            .map(Some);
    }
    let _ = (state, headers, uri, defer_required, memo);
    Ok(None)
}

/// 403 `insufficient_scope` when the principal lacks a scope every request needs
/// ([`Auth::required_scopes`](crate::auth::Auth::required_scopes)), naming those and every
/// scope the decoded message's requests need. Runs on every POST to the MCP endpoint, right
/// after decoding (see `defer_required` in [`authenticate`]).
pub(crate) fn check_required(
    state: &Shared,
    decoded: &Decoded<'_>,
    who: Option<&Principal>,
) -> Result<(), HttpResponse> {
    #[cfg(feature = "auth")]
    if let (Some(auth), Some(who)) = (&state.config.auth, who) {
        return enabled::check_required(state, auth, decoded, who);
    }
    let _ = (state, decoded, who);
    Ok(())
}

/// 403 `insufficient_scope` when the request calls a tool, gets a prompt or reads a resource
/// whose `scopes` the principal lacks. It reads the request as decoded, the value the
/// dispatcher acts on ([`Request::targets`]).
pub(crate) fn check_scopes(
    state: &Shared,
    req: &Request,
    who: Option<&Principal>,
) -> Result<(), HttpResponse> {
    #[cfg(feature = "auth")]
    if let (Some(auth), Some(who)) = (&state.config.auth, who) {
        return enabled::check_scopes(state, auth, req, who);
    }
    let _ = (state, req, who);
    Ok(())
}

/// [`check_scopes`] for every request of a decoded message or batch: one call the token's
/// scopes do not allow refuses the whole batch.
pub(crate) fn check_scopes_all(
    state: &Shared,
    decoded: &Decoded<'_>,
    who: Option<&Principal>,
) -> Result<(), HttpResponse> {
    let one = |item: &Result<Envelope<'_>, _>| match item {
        Ok(envelope) => envelope
            .request()
            .map_or(Ok(()), |req| check_scopes(state, req, who)),
        Err(_) => Ok(()),
    };
    match decoded {
        Decoded::One(item) => one(item),
        Decoded::Batch(Ok(items)) => items.iter().try_for_each(one),
        Decoded::Batch(Err(_)) => Ok(()),
    }
}

#[cfg(feature = "auth")]
mod enabled {
    use std::sync::{Arc, MutexGuard, PoisonError};
    use std::time::Instant;

    use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, WWW_AUTHENTICATE};
    use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
    use serde_json::json;

    use super::super::body::{self, HttpResponse};
    use super::super::shared::Shared;
    use super::TokenMemo;
    use crate::auth::{Auth, Principal, TokenError};
    use crate::protocol::params::Request;
    use crate::server::envelope::{Decoded, Envelope};

    pub(super) fn metadata(
        state: &Shared,
        auth: &Auth,
        method: &Method,
        path: &str,
    ) -> Option<HttpResponse> {
        let path = path.trim_end_matches('/');
        // Every request asks: most are for the MCP endpoint, told apart without a copy.
        if !path.starts_with("/.well-known/oauth-protected-resource") {
            return None;
        }
        let own = auth.metadata_path();
        if path != own && path != "/.well-known/oauth-protected-resource" {
            return None;
        }
        if method != Method::GET {
            return Some(body::empty(StatusCode::METHOD_NOT_ALLOWED));
        }
        let doc = auth.metadata(&state.server.inner.all_scopes());
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

    /// A connection's last token and its principal, until when it holds.
    pub(super) struct Memo {
        token: Box<str>,
        principal: Arc<Principal>,
        until: Instant,
    }

    impl TokenMemo {
        fn last(&self) -> MutexGuard<'_, Option<Memo>> {
            self.last.lock().unwrap_or_else(PoisonError::into_inner)
        }

        /// The remembered principal, if `token` is the connection's last and it still holds.
        fn recall(&self, token: &str) -> Option<Arc<Principal>> {
            let last = self.last();
            let memo = last.as_ref()?;
            (same(memo.token.as_bytes(), token.as_bytes()) && Instant::now() < memo.until)
                .then(|| memo.principal.clone())
        }

        /// Remembers `token` as the connection's last, whose it is until `until`.
        fn remember(&self, token: &str, principal: &Arc<Principal>, until: Instant) {
            *self.last() = Some(Memo {
                token: token.into(),
                principal: principal.clone(),
                until,
            });
        }
    }

    /// Whether `a` and `b` are equal, in a time that depends on their lengths only: a
    /// connection may carry several clients' requests, and the remembered token is a secret.
    fn same(a: &[u8], b: &[u8]) -> bool {
        a.len() == b.len() && a.iter().zip(b).fold(0, |diff, (x, y)| diff | (x ^ y)) == 0
    }

    pub(super) async fn authenticate(
        auth: &Auth,
        headers: &HeaderMap,
        uri: &Uri,
        defer_required: bool,
        memo: Option<&TokenMemo>,
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
        let principal = match memo.and_then(|memo| memo.recall(token)) {
            Some(principal) => principal,
            None => verify(auth, token, memo).await?,
        };
        let needed = required(auth);
        let missing = principal.missing(&needed);
        if !missing.is_empty() && !defer_required {
            let why = format!("the token lacks the scope(s) {}", missing.join(" "));
            return Err(refuse(
                auth,
                StatusCode::FORBIDDEN,
                Some(("insufficient_scope", &why)),
                &needed,
            ));
        }
        Ok(principal)
    }

    /// Checks `token` with the verifier, and remembers its principal for the connection
    /// (`memo`) for as long as the verifier says it holds.
    async fn verify(
        auth: &Auth,
        token: &str,
        memo: Option<&TokenMemo>,
    ) -> Result<Arc<Principal>, HttpResponse> {
        if !is_b64token(token) {
            return Err(refuse(
                auth,
                StatusCode::BAD_REQUEST,
                Some(("invalid_request", "the bearer token is malformed")),
                &[],
            ));
        }
        match auth
            .verifier
            .verify_shared(token, auth.hide_unauthorized)
            .await
        {
            Ok(verified) => {
                if let (Some(memo), Some(until)) = (memo, verified.until) {
                    memo.remember(token, &verified.principal, until);
                }
                Ok(verified.principal)
            }
            Err(TokenError::Invalid(why)) => {
                tracing::debug!(%why, "refused an access token");
                Err(refuse(
                    auth,
                    StatusCode::UNAUTHORIZED,
                    Some(("invalid_token", &why)),
                    &required(auth),
                ))
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
                Err(r)
            }
        }
    }

    pub(super) fn check_required(
        state: &Shared,
        auth: &Auth,
        decoded: &Decoded<'_>,
        who: &Principal,
    ) -> Result<(), HttpResponse> {
        let needed = required(auth);
        let missing = who.missing(&needed);
        if missing.is_empty() {
            return Ok(());
        }
        // Every scope the message's operations need besides, so one step-up is enough.
        let mut all = needed.clone();
        let requests: Vec<&Request> = match decoded {
            Decoded::One(Ok(envelope)) => envelope.request().into_iter().collect(),
            Decoded::Batch(Ok(items)) => items
                .iter()
                .filter_map(|i| i.as_ref().ok().and_then(Envelope::request))
                .collect(),
            _ => Vec::new(),
        };
        for req in requests {
            collect(state, req, &mut all);
        }
        let why = format!("the token lacks the scope(s) {}", missing.join(" "));
        Err(refuse(
            auth,
            StatusCode::FORBIDDEN,
            Some(("insufficient_scope", &why)),
            &all,
        ))
    }

    /// Adds the scopes `req`'s targets need to `scopes` (once each); the first target's name.
    fn collect<'a>(state: &Shared, req: &'a Request, scopes: &mut Vec<&str>) -> &'a str {
        let inner = &state.server.inner;
        let mut name = "";
        for (lookup, target) in req.targets() {
            // Only a subscription, or a server with mounts, collects a list of its own; every
            // other target borrows the registry's (no allocation on the path every call takes).
            let covered;
            let needed: &[&'static str] = if lookup == "subscribe" || !inner.mounts.is_empty() {
                covered = inner.scopes_for(lookup, target);
                &covered
            } else {
                inner.registry.scopes_for(&inner.catalog, lookup, target)
            };
            for s in needed {
                if !scopes.contains(s) {
                    scopes.push(s);
                }
            }
            if name.is_empty() {
                name = target;
            }
        }
        name
    }

    pub(super) fn check_scopes(
        state: &Shared,
        auth: &Auth,
        req: &Request,
        who: &Principal,
    ) -> Result<(), HttpResponse> {
        let mut scopes: Vec<&'static str> = Vec::new();
        let name = collect(state, req, &mut scopes);
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

    /// Whether `token` is made of RFC 6750 §2.1's b64token characters (letters, digits,
    /// `-._~+/` and `=`). Every byte is tested without a branch, so the loop over a JWT (about
    /// a kilobyte, on every request) is vectorized.
    fn is_b64token(token: &str) -> bool {
        !token.is_empty()
            && token.bytes().fold(true, |ok, b| {
                let letter = (b | 0x20).wrapping_sub(b'a') < 26;
                let digit = b.wrapping_sub(b'0') < 10;
                let mark = (b == b'-') | (b == b'.') | (b == b'_') | (b == b'~');
                let more = (b == b'+') | (b == b'/') | (b == b'=');
                ok & (letter | digit | mark | more)
            })
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn a_b64token_is_letters_digits_and_seven_marks() {
            for b in 0..=255u8 {
                let expected = b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
                let token = [b'a', b, b'z'];
                let text = String::from_utf8_lossy(&token);
                assert_eq!(
                    super::is_b64token(&text),
                    expected && text.len() == 3,
                    "byte {b:#04x}"
                );
            }
            assert!(!super::is_b64token(""));
            assert!(super::is_b64token("eyJhbGciOi.JFUzI1NiJ9-_~+/=="));
        }

        /// A connection's memo answers for its own token, byte for byte, until its time.
        #[test]
        fn a_memo_holds_for_its_token_until_its_time() {
            use super::{Arc, Instant, Principal, TokenMemo};
            let claims = serde_json::json!({"iss": "i", "sub": "s"});
            let principal =
                Arc::new(Principal::from_claims(claims.as_object().unwrap().clone()).unwrap());
            let memo = |until| {
                let memo = TokenMemo::default();
                memo.remember("abc.def", &principal, until);
                memo
            };
            let later = Instant::now() + std::time::Duration::from_secs(60);
            let recalled = memo(later).recall("abc.def").expect("its own token");
            assert!(Arc::ptr_eq(&recalled, &principal));
            assert!(memo(later).recall("abc.deg").is_none(), "another, as long");
            assert!(memo(later).recall("abc.de").is_none(), "a prefix");
            assert!(
                memo(Instant::now()).recall("abc.def").is_none(),
                "its time is up"
            );
            assert!(TokenMemo::default().recall("abc.def").is_none());
        }
    }
}
