//! Who a request comes from, as an authorization server vouched for it.

use serde_json::{Map, Value};

/// The caller of a request, from its verified access token: the issuer that vouched for it,
/// the subject (user or service), the OAuth client, the granted scopes and every claim.
///
/// A tool gets it by taking a `Principal` parameter (injected, not part of the schema; the
/// request fails if it carries none), or from [`Context::principal`](crate::Context::principal). Requests are only
/// authenticated over HTTP with an authorization configuration
/// ([`HttpConfig::auth`](crate::transport::http::HttpConfig::auth)).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// `iss`: the authorization server.
    pub issuer: String,
    /// `sub`: who the token was issued for.
    pub subject: String,
    /// `client_id` (or `azp`): the OAuth client that obtained it.
    pub client_id: Option<String>,
    /// `scope` (space-separated) or `scp` (a list): what the token allows.
    pub scopes: Vec<String>,
    /// Every claim of the token (or of the introspection answer), as sent.
    pub claims: Map<String, Value>,
    /// Whether this caller's lists leave out what its scopes do not allow (set by the HTTP
    /// layer from the server's configuration).
    pub(crate) hide_unauthorized: bool,
    /// The digest of [`caller_key`](Principal::caller_key), made on first use: a verifier
    /// shares one principal among the requests of a token, and each needs it.
    pub(crate) caller_digest: CallerDigest,
}

/// A principal's memo of its caller's digest: not part of what it is (equal principals are
/// equal whether or not it was made yet).
#[derive(Clone, Default)]
pub(crate) struct CallerDigest(std::sync::OnceLock<[u8; 32]>);

impl PartialEq for CallerDigest {
    fn eq(&self, _: &CallerDigest) -> bool {
        true
    }
}

impl std::fmt::Debug for CallerDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallerDigest")
    }
}

impl Principal {
    /// A principal from a token's claims: `iss` and `sub` are required.
    pub fn from_claims(claims: Map<String, Value>) -> Result<Principal, String> {
        let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
        let issuer = text("iss").ok_or("the token has no `iss`")?;
        let subject = text("sub").ok_or("the token has no `sub`")?;
        let client_id = text("client_id").or_else(|| text("azp"));
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(s)), _) => s.split_whitespace().map(str::to_owned).collect(),
            (_, Some(Value::Array(list))) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            (_, Some(Value::String(s))) => s.split_whitespace().map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        Ok(Principal {
            issuer,
            subject,
            client_id,
            scopes,
            claims,
            hide_unauthorized: false,
            caller_digest: CallerDigest::default(),
        })
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `needed` the token does not grant.
    pub fn missing<'a>(&self, needed: &[&'a str]) -> Vec<&'a str> {
        needed
            .iter()
            .copied()
            .filter(|s| !self.has_scope(s))
            .collect()
    }

    pub(crate) fn hides_unauthorized(&self) -> bool {
        self.hide_unauthorized
    }

    /// A digest of the granted scopes, so that list cursors of one set of scopes are stale
    /// for another.
    pub(crate) fn scopes_fingerprint(&self) -> u64 {
        let mut sorted: Vec<&str> = self.scopes.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, s| {
            s.bytes()
                .chain([0])
                .fold(h, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
        })
    }

    /// What binds sessions, `requestState` and tasks to this caller: issuer and subject,
    /// which stay the same when the client refreshes its token.
    pub(crate) fn caller_key(&self) -> Vec<u8> {
        format!("principal\n{}\n{}", self.issuer, self.subject).into_bytes()
    }

    /// The SHA-256 of [`caller_key`](Self::caller_key), what sessions and tasks are owned by.
    pub(crate) fn caller_digest(&self) -> [u8; 32] {
        *self
            .caller_digest
            .0
            .get_or_init(|| crate::id::sha256(&self.caller_key()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let p = Principal::from_claims(claims(json!({
            "iss": "https://as", "sub": "u1", "azp": "app", "scope": "a b"
        })))
        .unwrap();
        assert_eq!(p.scopes, ["a", "b"]);
        assert_eq!(p.client_id.as_deref(), Some("app"));
        assert!(p.has_scope("b") && !p.has_scope("c"));
        assert_eq!(p.missing(&["a", "c"]), ["c"]);
        let p =
            Principal::from_claims(claims(json!({"iss": "i", "sub": "s", "scp": ["x"]}))).unwrap();
        assert_eq!(p.scopes, ["x"]);
        assert!(Principal::from_claims(claims(json!({"iss": "i"}))).is_err());
    }
}
