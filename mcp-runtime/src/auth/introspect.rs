//! Opaque access tokens, checked with the issuer's RFC 7662 introspection endpoint.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Principal;
use super::cache::{TokenCache, now_unix};
use super::fetch;
use super::verify::{SharedVerifyFuture, TokenError, TokenVerifier, Verified, VerifyFuture};

/// The most introspection requests in flight at once, per verifier: a flood of made-up tokens
/// waits its turn instead of becoming a flood at the authorization server.
const MAX_IN_FLIGHT: usize = 16;
/// After a failed discovery of the endpoint, requests are refused (503) at once for this long
/// before the issuer's metadata is asked for again.
const DISCOVERY_RETRY: Duration = Duration::from_secs(30);

/// RFC 7662 token introspection with this server's client credentials. Answers are cached
/// (by a digest of the token) for at most [`cache_for`](Self::cache_for) and never past the
/// token's `exp`. A refused token (inactive, for another resource, …) is remembered for
/// [`refusal_cache_for`](Self::refusal_cache_for), so the same made-up token sent again and
/// again costs the authorization server one request. At most 16 introspections are in flight
/// at once; a failed discovery of the endpoint is retried after 30 s, not on every request.
pub struct Introspection {
    endpoint: Option<String>,
    client_id: String,
    client_secret: String,
    cache_for: Duration,
    refusal_cache_for: Duration,
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
            refusal_cache_for: Duration::from_secs(10),
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

    /// How long a refused token is remembered (default 10 s; never longer than
    /// [`cache_for`](Self::cache_for); zero turns it off).
    pub fn refusal_cache_for(mut self, d: Duration) -> Self {
        self.refusal_cache_for = d;
        self
    }

    pub(crate) fn bind(self, issuer: String, resource: String) -> Introspector {
        Introspector {
            cache: TokenCache::new(self.cache_for),
            config: self,
            issuer,
            resource,
            endpoint: tokio::sync::OnceCell::new(),
            discovery_failed: Mutex::new(None),
            in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
        }
    }
}

pub(crate) struct Introspector {
    config: Introspection,
    issuer: String,
    resource: String,
    endpoint: tokio::sync::OnceCell<String>,
    /// When the last discovery failed, and why.
    discovery_failed: Mutex<Option<(Instant, String)>>,
    in_flight: tokio::sync::Semaphore,
    cache: TokenCache,
}

impl Introspector {
    async fn endpoint(&self) -> Result<&str, TokenError> {
        if let Some(e) = &self.config.endpoint {
            return Ok(e);
        }
        let failed_lately = || {
            let failed = self.discovery_failed.lock().unwrap();
            match &*failed {
                Some((at, why)) if at.elapsed() < DISCOVERY_RETRY => Some(why.clone()),
                _ => None,
            }
        };
        if let Some(why) = failed_lately() {
            return Err(TokenError::Unavailable(why));
        }
        // Requests that arrive during a discovery wait for it; if it fails, each of them finds
        // the failure here rather than trying again.
        self.endpoint
            .get_or_try_init(|| async {
                if let Some(why) = failed_lately() {
                    return Err(why);
                }
                let found = fetch::discover(&self.issuer).await.and_then(|doc| {
                    doc.get("introspection_endpoint")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            format!(
                                "the metadata of {} has no introspection_endpoint",
                                self.issuer
                            )
                        })
                });
                if let Err(why) = &found {
                    *self.discovery_failed.lock().unwrap() = Some((Instant::now(), why.clone()));
                }
                found
            })
            .await
            .map(String::as_str)
            .map_err(TokenError::Unavailable)
    }

    /// The principal of `token`, from the cache when it was introspected a moment ago.
    async fn check(&self, token: &str, hide: bool) -> Result<Verified, TokenError> {
        let known = |(answer, until): (Result<Arc<Principal>, String>, _)| {
            answer
                .map(|p| Verified {
                    principal: super::verify::hiding(p, hide),
                    until: Some(until),
                })
                .map_err(TokenError::Invalid)
        };
        if let Some(answer) = self.cache.get(token) {
            return known(answer);
        }
        let _permit = tokio::time::timeout(fetch::TIMEOUT, self.in_flight.acquire())
            .await
            .map_err(|_| {
                TokenError::Unavailable("too many tokens are being introspected at once".into())
            })?
            .expect("the semaphore is never closed");
        // The same token may have been answered while this request waited for its turn.
        if let Some(answer) = self.cache.get(token) {
            return known(answer);
        }
        match self.introspect(token, hide).await {
            Err(TokenError::Invalid(why)) => {
                self.cache
                    .put_refusal(token, &why, self.config.refusal_cache_for);
                Err(TokenError::Invalid(why))
            }
            answer => answer,
        }
    }

    /// Asks the authorization server about `token`.
    async fn introspect(&self, token: &str, hide: bool) -> Result<Verified, TokenError> {
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
        let principal = super::verify::hiding(Arc::new(principal), hide);
        let until = self.cache.put(token, &principal, exp);
        Ok(Verified { principal, until })
    }
}

impl TokenVerifier for Introspector {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let verified = self.check(token, false).await?;
            Ok(super::verify::owned(verified.principal))
        })
    }

    fn verify_shared<'a>(&'a self, token: &'a str, hide: bool) -> SharedVerifyFuture<'a> {
        Box::pin(self.check(token, hide))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::auth::test_peer::{Reply, serve};

    const INACTIVE: &str = r#"{"active":false}"#;

    fn introspector(base: &str) -> Introspector {
        Introspection::new("rs", "secret")
            .endpoint(format!("{base}/introspect"))
            .bind(base.to_owned(), "https://mcp.example/".to_owned())
    }

    /// A made-up token sent again and again costs the authorization server one request, not
    /// one per try (issue #27: 200 tries were 200 POSTs).
    #[tokio::test]
    async fn a_refused_token_is_remembered_for_a_while() {
        let (base, seen) = serve(Arc::new(|_: &str| Reply::Now(INACTIVE.into()))).await;
        let introspector = introspector(&base);
        for _ in 0..200 {
            let refused = introspector.check("made-up", true).await.unwrap_err();
            assert!(matches!(refused, TokenError::Invalid(_)), "{refused:?}");
        }
        assert_eq!(seen.requests(), 1);
        // Another made-up token is another question.
        introspector.check("made-up-too", true).await.unwrap_err();
        assert_eq!(seen.requests(), 2);
    }

    /// Many tokens at once are introspected a few at a time, never all together.
    #[tokio::test]
    async fn introspections_in_flight_are_bounded() {
        let (base, seen) = serve(Arc::new(|_: &str| Reply::Gated(INACTIVE.into()))).await;
        let introspector = Arc::new(introspector(&base));
        let tries: Vec<_> = (0..64)
            .map(|i| {
                let introspector = introspector.clone();
                tokio::spawn(async move { introspector.check(&format!("token-{i}"), true).await })
            })
            .collect();
        // The first wave arrives and is held; the rest wait their turn, so at no time are more
        // than the bound open at the peer.
        seen.until(MAX_IN_FLIGHT).await;
        let more = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            seen.until(MAX_IN_FLIGHT + 1),
        );
        assert!(more.await.is_err(), "more than {MAX_IN_FLIGHT} at once");
        seen.gate.add_permits(64);
        for t in tries {
            assert!(t.await.unwrap().is_err());
        }
        assert_eq!(seen.requests(), 64);
        assert_eq!(seen.most_open.load(Ordering::SeqCst), MAX_IN_FLIGHT);
    }

    /// An issuer whose metadata cannot be read is not asked again on every request.
    #[tokio::test]
    async fn a_failed_discovery_is_not_retried_on_every_request() {
        let (base, seen) = serve(Arc::new(|_: &str| Reply::Now("not json".into()))).await;
        let introspector = Introspection::new("rs", "secret")
            .bind(base.clone(), "https://mcp.example/".to_owned());
        for _ in 0..20 {
            let e = introspector.check("t", true).await.unwrap_err();
            assert!(matches!(e, TokenError::Unavailable(_)), "{e:?}");
        }
        // One discovery tries the three well-known locations.
        assert_eq!(seen.requests(), 3);
    }
}
