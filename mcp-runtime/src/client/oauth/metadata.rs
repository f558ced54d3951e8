//! What the client reads about a server's authorization: the `WWW-Authenticate` challenge of a
//! 401 or 403, the protected resource metadata (RFC 9728) and the authorization server
//! metadata (RFC 8414, or OpenID Connect Discovery).

use serde::Deserialize;

/// The parameters of a `Bearer` (or `DPoP`) challenge.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Challenge {
    /// `Bearer` or `DPoP`, as the server wrote it.
    pub(crate) scheme: String,
    pub(crate) error: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) resource_metadata: Option<String>,
}

impl Challenge {
    /// Reads every `WWW-Authenticate` value: the first `Bearer` or `DPoP` challenge's
    /// parameters (a later one fills only what an earlier one left out).
    pub(crate) fn parse<'a>(values: impl Iterator<Item = &'a str>) -> Challenge {
        let mut out = Challenge::default();
        for value in values {
            for (scheme, params) in challenges(value) {
                if !scheme.eq_ignore_ascii_case("bearer") && !scheme.eq_ignore_ascii_case("dpop") {
                    continue;
                }
                if out.scheme.is_empty() {
                    out.scheme = scheme;
                }
                for (name, value) in params {
                    let slot = match name.to_ascii_lowercase().as_str() {
                        "error" => &mut out.error,
                        "scope" => &mut out.scope,
                        "resource_metadata" => &mut out.resource_metadata,
                        _ => continue,
                    };
                    slot.get_or_insert(value);
                }
            }
        }
        out
    }
}

/// The challenges of one header value (RFC 9110 §11.6.1): a scheme, then `name=value` or
/// `name="quoted value"` parameters separated by commas; a token after a comma that is not
/// followed by `=` starts the next challenge.
fn challenges(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let s = value.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize, set: &[u8]| {
        while *i < s.len() && set.contains(&s[*i]) {
            *i += 1;
        }
    };
    let token = |i: &mut usize| {
        let start = *i;
        while *i < s.len() && !b" \t,=\"".contains(&s[*i]) {
            *i += 1;
        }
        value[start..*i].to_owned()
    };
    while i < s.len() {
        skip(&mut i, b" \t,");
        let word = token(&mut i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        let save = i;
        skip(&mut i, b" \t");
        if i < s.len() && s[i] == b'=' && !out.is_empty() {
            // A parameter of the current challenge (or token68 padding, ignored).
            i += 1;
            skip(&mut i, b" \t");
            let v = if i < s.len() && s[i] == b'"' {
                i += 1;
                let mut v = Vec::new();
                while i < s.len() && s[i] != b'"' {
                    if s[i] == b'\\' && i + 1 < s.len() {
                        i += 1;
                    }
                    v.push(s[i]);
                    i += 1;
                }
                i += 1;
                String::from_utf8_lossy(&v).into_owned()
            } else {
                token(&mut i)
            };
            if let Some(last) = out.last_mut() {
                last.1.push((word, v));
            }
        } else {
            i = save;
            out.push((word, Vec::new()));
        }
    }
    out
}

/// RFC 9728 protected resource metadata (the fields this client uses).
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ResourceMetadata {
    pub(crate) resource: String,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 authorization server metadata (the fields this client uses).
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct ServerMetadata {
    #[serde(default)]
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) authorization_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) grant_types_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    #[serde(default)]
    #[cfg_attr(not(feature = "client-jwt"), allow(dead_code))]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(list) => list.iter().any(|m| m == method),
            // RFC 8414 §2: absent means client_secret_basic.
            None => method == "client_secret_basic",
        }
    }

    /// Whether it issues refresh tokens, as far as its metadata says (absent: maybe).
    pub(crate) fn may_refresh(&self) -> bool {
        self.grant_types_supported
            .as_ref()
            .is_none_or(|g| g.iter().any(|t| t == "refresh_token"))
    }

    pub(crate) fn offers_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_read_quoted_and_bare_parameters() {
        let c = Challenge::parse(
            [r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="no \"way\"""#]
                .into_iter(),
        );
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        let two = Challenge::parse(
            [r#"Basic realm="x", DPoP error=use_dpop_nonce, resource_metadata="http://m""#]
                .into_iter(),
        );
        assert_eq!(two.scheme, "DPoP");
        assert_eq!(two.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(two.resource_metadata.as_deref(), Some("http://m"));
        assert_eq!(Challenge::parse(["Bearer"].into_iter()).scheme, "Bearer");
        assert_eq!(Challenge::parse(std::iter::empty()), Challenge::default());
    }
}
