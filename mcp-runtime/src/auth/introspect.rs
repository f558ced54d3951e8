//! Opaque access tokens, checked with the issuer's RFC 7662 introspection endpoint.

use std::time::Duration;

use serde_json::Value;

use super::Principal;
use super::cache::{TokenCache, now_unix};
use super::fetch;
use super::verify::{TokenError, TokenVerifier, VerifyFuture};

/// RFC 7662 token introspection with this server's client credentials. Answers are cached
/// (by a digest of the token) for at most [`cache_for`](Self::cache_for) and never past the
/// token's `exp`; an inactive token is not cached, so a revocation is seen at once on the
/// next request that was not already cached.
pub struct Introspection {
    endpoint: Option<String>,
    client_id: String,
    client_secret: String,
    cache_for: Duration,
}

impl Introspection {
    /// Introspects with these client credentials (HTTP Basic, RFC 6749 §2.3.1), at the
    /// endpoint named by the issuer's metadata (`introspection_endpoint`).
    pub fn new(client_id: impl Into<String>, client_secret: impl Into<String>) -> Introspection {
        Introspection {
            endpoint: None,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            cache_for: Duration::from_secs(60),
        }
    }

    /// The endpoint, instead of discovering it.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// How long an active answer is reused (default 60 s, never past the token's `exp`).
    pub fn cache_for(mut self, d: Duration) -> Self {
        self.cache_for = d;
        self
    }

    pub(crate) fn bind(self, issuer: String, resource: String) -> Introspector {
        Introspector {
            cache: TokenCache::new(self.cache_for),
            config: self,
            issuer,
            resource,
            endpoint: tokio::sync::OnceCell::new(),
        }
    }
}

pub(crate) struct Introspector {
    config: Introspection,
    issuer: String,
    resource: String,
    endpoint: tokio::sync::OnceCell<String>,
    cache: TokenCache,
}

impl Introspector {
    async fn endpoint(&self) -> Result<&str, TokenError> {
        if let Some(e) = &self.config.endpoint {
            return Ok(e);
        }
        self.endpoint
            .get_or_try_init(|| async {
                let doc = fetch::discover(&self.issuer).await?;
                doc.get("introspection_endpoint")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        format!(
                            "the metadata of {} has no introspection_endpoint",
                            self.issuer
                        )
                    })
            })
            .await
            .map(String::as_str)
            .map_err(TokenError::Unavailable)
    }

    async fn check(&self, token: &str) -> Result<Principal, TokenError> {
        if let Some(known) = self.cache.get(token) {
            return Ok(known);
        }
        let endpoint = self.endpoint().await?;
        let answer = fetch::post_form(
            endpoint,
            &[("token", token), ("token_type_hint", "access_token")],
            Some((&self.config.client_id, &self.config.client_secret)),
        )
        .await
        .map_err(TokenError::Unavailable)?;
        let invalid = |why: &str| TokenError::Invalid(why.to_owned());
        if answer.get("active").and_then(Value::as_bool) != Some(true) {
            return Err(invalid("the token is not active"));
        }
        let Value::Object(mut claims) = answer else {
            return Err(invalid("the introspection answer is not an object"));
        };
        claims.remove("active");
        // The issuer is this one unless the answer says otherwise, which it may not.
        match claims.get("iss").and_then(Value::as_str) {
            None => {
                claims.insert("iss".into(), Value::String(self.issuer.clone()));
            }
            Some(iss) if iss.trim_end_matches('/') == self.issuer.trim_end_matches('/') => {}
            Some(_) => return Err(invalid("the token is from another issuer")),
        }
        // RFC 8707: a token for another resource is refused; one without `aud` only when the
        // authorization server does not say (some do not).
        let aud_ok = match claims.get("aud") {
            None => true,
            Some(Value::String(a)) => *a == self.resource,
            Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(&self.resource)),
            Some(_) => false,
        };
        if !aud_ok {
            return Err(invalid("the token is for another resource"));
        }
        // A client-credentials token has no user: its subject is the client.
        if !claims.contains_key("sub")
            && let Some(client) = claims.get("client_id").cloned()
        {
            claims.insert("sub".into(), client);
        }
        let exp = claims.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|e| e <= now_unix()) {
            return Err(invalid("the token has expired"));
        }
        let principal = Principal::from_claims(claims).map_err(TokenError::Invalid)?;
        self.cache.put(token, &principal, exp);
        Ok(principal)
    }
}

impl TokenVerifier for Introspector {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.check(token))
    }
}
