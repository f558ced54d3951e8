//! Signed JWT access tokens, checked against the issuer's published keys (JWKS).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use super::Principal;
use super::cache::TokenCache;
use super::fetch;
use super::verify::{SharedVerifyFuture, TokenError, TokenVerifier, Verified, VerifyFuture};

/// The asymmetric algorithms accepted by default. `none` cannot be named at all, and no HMAC
/// algorithm is accepted: a public key used as an HMAC secret is the classic forgery.
const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens: signature by a key of the issuer's JWKS (found through its
/// RFC 8414 or OpenID Connect metadata, or given), `iss` = the issuer, `aud` = this resource
/// (RFC 8707), `exp` and `nbf` with a small leeway, and an algorithm from an allow-list of
/// asymmetric ones.
///
/// Keys are fetched on first use and cached; a token naming a key id the cache does not have
/// refetches the set (key rotation), at most once per
/// [`min_refetch_interval`](Self::min_refetch_interval), so a flood of forged key ids cannot
/// turn into a flood of requests to the issuer.
///
/// A verified token is remembered (by a digest) until its `exp`, at most
/// [`cache_for`](Self::cache_for): a client sends the same token with every request, and an
/// ECDSA verification costs about 200 µs of CPU with the pure-Rust backend. The HTTP server
/// also remembers each connection's last token for as long (the next request on it with the
/// same token is compared, not hashed and looked up).
pub struct JwtVerifier {
    issuer: String,
    audience: String,
    jwks_uri: Option<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    min_refetch: Duration,
    /// The keys held, read without waiting: a fetch in progress never holds this lock across
    /// the network, so tokens of known keys are not held up by it.
    keys: RwLock<Keys>,
    /// Held by the one fetch of the key set in progress.
    fetching: Mutex<()>,
    verified: TokenCache,
}

#[derive(Default)]
struct Keys {
    set: Option<Arc<JwkSet>>,
    fetched: Option<Instant>,
    jwks_uri: Option<String>,
}

impl JwtVerifier {
    /// Tokens of `issuer` for `audience` (this server's canonical URI).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> JwtVerifier {
        JwtVerifier {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_uri: None,
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            leeway: Duration::from_secs(60),
            min_refetch: Duration::from_secs(30),
            keys: RwLock::new(Keys::default()),
            fetching: Mutex::new(()),
            verified: TokenCache::new(Duration::from_secs(300)),
        }
    }

    /// How long a verified token is remembered at most (default 5 minutes, never past its
    /// `exp`; zero turns the cache off).
    pub fn cache_for(mut self, d: Duration) -> Self {
        self.verified = TokenCache::new(d);
        self
    }

    /// The JWKS URL, instead of discovering it from the issuer's metadata.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// The accepted signature algorithms (HMAC ones are ignored: see the type's docs).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms
            .into_iter()
            .filter(|a| DEFAULT_ALGORITHMS.contains(a))
            .collect();
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The shortest time between two fetches of the key set (default 30 s).
    pub fn min_refetch_interval(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    /// The key set, fetched now if there is none yet or if `refresh` (and the last fetch is
    /// old enough).
    async fn key_set(&self, refresh: bool) -> Result<Arc<JwkSet>, TokenError> {
        if let Some(answer) = self.held_keys(refresh) {
            return answer;
        }
        let _fetching = self.fetching.lock().await;
        // Another fetch may have finished while this one waited for its turn.
        if let Some(answer) = self.held_keys(refresh) {
            return answer;
        }
        let known_uri = self.keys.read().unwrap().jwks_uri.clone();
        let fetched = self.fetch_key_set(known_uri).await;
        // The time of the fetch is set once it is over: a token checked while it is on its
        // way waits for it (on `fetching`) rather than being refused as if it had failed.
        let mut keys = self.keys.write().unwrap();
        keys.fetched = Some(Instant::now());
        match fetched {
            Ok(set) => {
                keys.set = Some(set.clone());
                Ok(set)
            }
            // Keys already held stay usable while the issuer is unreachable.
            Err(e) => keys.set.clone().ok_or(e),
        }
    }

    /// Fetches the key set (finding its URI first, if neither given nor found before).
    async fn fetch_key_set(&self, known_uri: Option<String>) -> Result<Arc<JwkSet>, TokenError> {
        let uri = match (&self.jwks_uri, known_uri) {
            (Some(uri), _) => uri.clone(),
            (None, Some(uri)) => uri,
            (None, None) => {
                let uri = discover_jwks_uri(&self.issuer)
                    .await
                    .map_err(TokenError::Unavailable)?;
                self.keys.write().unwrap().jwks_uri = Some(uri.clone());
                uri
            }
        };
        let doc = fetch::get_json(&uri)
            .await
            .map_err(TokenError::Unavailable)?;
        let set: JwkSet = serde_json::from_value(doc)
            .map_err(|e| TokenError::Unavailable(format!("{uri}: not a JWK set: {e}")))?;
        Ok(Arc::new(set))
    }

    /// The answer the keys held give without a fetch, if they give one: the set (unless a
    /// `refresh` is due), or, when a fetch failed a moment ago and there are no keys, that
    /// failure at once rather than every request waiting on the issuer again.
    fn held_keys(&self, refresh: bool) -> Option<Result<Arc<JwkSet>, TokenError>> {
        let keys = self.keys.read().unwrap();
        let fresh_enough = keys
            .fetched
            .is_some_and(|at| at.elapsed() < self.min_refetch);
        match &keys.set {
            Some(set) if !refresh || fresh_enough => Some(Ok(set.clone())),
            None if fresh_enough => Some(Err(TokenError::Unavailable(
                "the issuer's keys could not be fetched a moment ago".into(),
            ))),
            _ => None,
        }
    }

    /// The principal of `token`, from the cache when it was verified a moment ago.
    async fn check(&self, token: &str, hide: bool) -> Result<Verified, TokenError> {
        if let Some((Ok(known), until)) = self.verified.get(token) {
            return Ok(Verified {
                principal: super::verify::hiding(known, hide),
                until: Some(until),
            });
        }
        let principal = self.verify_fully(token).await?;
        let exp = principal
            .claims
            .get("exp")
            .and_then(serde_json::Value::as_u64);
        let principal = super::verify::hiding(Arc::new(principal), hide);
        let until = self.verified.put(token, &principal, exp);
        Ok(Verified { principal, until })
    }

    async fn verify_fully(&self, token: &str) -> Result<Principal, TokenError> {
        let invalid = |why: String| TokenError::Invalid(why);
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| invalid(format!("not a JWT: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid(format!(
                "the signature algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let mut set = self.key_set(false).await?;
        let mut jwk = pick(&set, header.kid.as_deref(), header.alg);
        if jwk.is_none() && header.kid.is_some() {
            // A key id not seen yet: the issuer may have rotated its keys.
            set = self.key_set(true).await?;
            jwk = pick(&set, header.kid.as_deref(), header.alg);
        }
        let jwk = jwk.ok_or_else(|| invalid("no key of the issuer matches the token".into()))?;
        let key = DecodingKey::from_jwk(jwk)
            .map_err(|e| invalid(format!("the issuer's key cannot be used: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway.as_secs();
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| invalid(e.to_string()))?;
        Principal::from_claims(data.claims).map_err(invalid)
    }
}

/// The key for a token: by key id, or (no id) the only key of the algorithm's kind. A key
/// that names its own algorithm must name the token's.
fn pick<'a>(set: &'a JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<&'a Jwk> {
    let fits = |k: &&Jwk| {
        let kind = matches!(
            (&k.algorithm, alg),
            (
                AlgorithmParameters::RSA(_),
                Algorithm::RS256
                    | Algorithm::RS384
                    | Algorithm::RS512
                    | Algorithm::PS256
                    | Algorithm::PS384
                    | Algorithm::PS512
            ) | (
                AlgorithmParameters::EllipticCurve(_),
                Algorithm::ES256 | Algorithm::ES384
            ) | (AlgorithmParameters::OctetKeyPair(_), Algorithm::EdDSA)
        );
        let named = k
            .common
            .key_algorithm
            .is_none_or(|ka| format!("{ka:?}") == format!("{alg:?}"));
        kind && named
    };
    match kid {
        Some(kid) => set
            .keys
            .iter()
            .filter(|k| k.common.key_id.as_deref() == Some(kid))
            .find(fits),
        None => {
            let mut candidates = set.keys.iter().filter(fits);
            match (candidates.next(), candidates.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        }
    }
}

/// The issuer's `jwks_uri`: RFC 8414 metadata (path-inserted), then OpenID Connect discovery.
/// The document must name the same issuer (RFC 8414 §3.3).
async fn discover_jwks_uri(issuer: &str) -> Result<String, String> {
    let doc = fetch::discover(issuer).await?;
    doc.get("jwks_uri")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("the metadata of {issuer} has no jwks_uri"))
}

impl TokenVerifier for JwtVerifier {
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::*;
    use crate::auth::cache::now_unix;
    use crate::auth::test_peer::{Reply, serve};

    /// The Ed25519 key of RFC 8037, appendix A.1: its seed as PKCS #8, and its public half.
    const SEED: [u8; 32] = [
        0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c,
        0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae,
        0x7f, 0x60,
    ];
    const X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    const ISSUER: &str = "https://as.example";
    const AUDIENCE: &str = "https://mcp.example/";

    fn token(kid: &str, sub: &str) -> String {
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend_from_slice(&SEED);
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.into());
        let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now_unix() + 600});
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&der)).unwrap()
    }

    /// Tokens that arrive while the first fetch of the key set is on its way wait for it and
    /// are accepted: they are not refused as if the fetch had failed (the fetch time was set
    /// when it started, so every token checked during it got 503 `temporarily_unavailable`;
    /// 31 of the HTTP bench's 32 first requests were refused that way).
    #[tokio::test]
    async fn tokens_checked_during_the_first_key_fetch_wait_for_it() {
        let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1"}]});
        let (base, seen) = serve(Arc::new(move |_: &str| Reply::Gated(jwks.to_string()))).await;
        let verifier =
            Arc::new(JwtVerifier::new(ISSUER, AUDIENCE).jwks_uri(format!("{base}/jwks")));
        let first = {
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.check(&token("k1", "alice"), true).await })
        };
        seen.until(1).await;
        // The fetch is open at the issuer: later tokens (not cached yet) wait for it.
        let later: Vec<_> = (0..4)
            .map(|i| {
                let verifier = verifier.clone();
                tokio::spawn(
                    async move { verifier.check(&token("k1", &format!("u{i}")), true).await },
                )
            })
            .collect();
        tokio::task::yield_now().await;
        seen.gate.add_permits(1);
        assert_eq!(first.await.unwrap().unwrap().principal.subject, "alice");
        for (i, t) in later.into_iter().enumerate() {
            let verified = t
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("token {i}: {e}"));
            assert_eq!(verified.principal.subject, format!("u{i}"));
        }
        assert_eq!(seen.requests(), 1, "one fetch served them all");
    }

    /// A token verified a moment ago is the principal the verifier keeps for it, shared with
    /// the server (not a copy of its claims per request), and says what the server asked of
    /// its lists; `verify` still hands out a principal of its own, as it always did.
    #[tokio::test]
    async fn a_verified_token_is_shared_not_copied() {
        let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1"}]});
        let (base, _) = serve(Arc::new(move |_: &str| Reply::Now(jwks.to_string()))).await;
        let verifier = JwtVerifier::new(ISSUER, AUDIENCE).jwks_uri(format!("{base}/jwks"));
        let alice = token("k1", "alice");
        let first = verifier.verify_shared(&alice, true).await.unwrap();
        let again = verifier.verify_shared(&alice, true).await.unwrap();
        assert!(
            Arc::ptr_eq(&first.principal, &again.principal),
            "the cached principal, not a copy"
        );
        assert!(again.principal.hides_unauthorized());
        // Both say until when the cache holds it: the same instant, within the token's life.
        let until = first.until.expect("a cached token says until when");
        assert_eq!(again.until, Some(until));
        let shown = verifier.verify_shared(&alice, false).await.unwrap();
        assert!(!shown.principal.hides_unauthorized());
        let own = verifier.verify(&alice).await.unwrap();
        assert_eq!(
            (own.subject.as_str(), own.hides_unauthorized()),
            ("alice", false)
        );
        assert!(
            first.principal.hides_unauthorized(),
            "the kept one is unchanged"
        );
    }

    /// A refetch of the key set (a token named a key id not seen yet) that the issuer never
    /// answers does not hold up tokens whose key is already known (issue #27: the key-set lock
    /// was held across the fetch, up to 10 s per try).
    #[tokio::test]
    async fn a_slow_key_refetch_does_not_hold_up_known_keys() {
        let gets = Arc::new(AtomicUsize::new(0));
        let gets2 = gets.clone();
        let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1"}]});
        let (base, seen) = serve(Arc::new(move |_: &str| {
            if gets2.fetch_add(1, Ordering::SeqCst) == 0 {
                Reply::Now(jwks.to_string())
            } else {
                Reply::Hold
            }
        }))
        .await;
        let verifier = Arc::new(
            JwtVerifier::new(ISSUER, AUDIENCE)
                .jwks_uri(format!("{base}/jwks"))
                .min_refetch_interval(Duration::ZERO),
        );
        assert_eq!(
            verifier
                .check(&token("k1", "alice"), true)
                .await
                .unwrap()
                .principal
                .subject,
            "alice"
        );
        let stuck = {
            let verifier = verifier.clone();
            tokio::spawn(async move { verifier.check(&token("k2", "mallory"), true).await })
        };
        seen.until(2).await;
        // The refetch is open at the issuer; a token of the known key does not wait for it.
        let known = tokio::time::timeout(
            Duration::from_secs(5),
            verifier.check(&token("k1", "bob"), true),
        )
        .await
        .expect("a token of a known key waited for the refetch");
        assert_eq!(known.unwrap().principal.subject, "bob");
        stuck.abort();
    }
}
