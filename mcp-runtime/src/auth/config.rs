//! [`Auth`]: how an HTTP server checks the bearer tokens of its requests, and what it tells
//! clients about it (RFC 9728 metadata, `WWW-Authenticate` challenges).

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use super::introspect::Introspection;
use super::jwt::JwtVerifier;
use super::verify::TokenVerifier;

/// An HTTP server as an OAuth 2.1 resource server: the authorization server that issues its
/// tokens, its own canonical URI (the audience tokens must name, RFC 8707), the scopes every
/// request needs, and how tokens are verified.
///
/// ```
/// use mcp_runtime::auth::Auth;
/// use mcp_runtime::transport::http::HttpConfig;
///
/// let config = HttpConfig::new("127.0.0.1:8000").auth(
///     Auth::jwt("https://auth.example.com", "https://mcp.example.com/mcp")
///         .required_scopes(["mcp"]),
/// );
/// # drop(config);
/// ```
///
/// Over stdio there is no authorization: the client that starts the server owns it.
#[derive(Clone)]
pub struct Auth {
    pub(crate) issuer: String,
    pub(crate) resource: String,
    pub(crate) scopes: Vec<String>,
    pub(crate) resource_name: Option<String>,
    pub(crate) verifier: Arc<dyn TokenVerifier>,
    pub(crate) hide_unauthorized: bool,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl Auth {
    /// Tokens are JWTs signed by `issuer`, whose keys are found through its RFC 8414 (or
    /// OpenID Connect) metadata; `resource` is this server's canonical URI, e.g.
    /// `https://mcp.example.com/mcp`, which tokens must name in `aud`.
    pub fn jwt(issuer: impl Into<String>, resource: impl Into<String>) -> Auth {
        let (issuer, resource) = (issuer.into(), resource.into());
        let verifier = JwtVerifier::new(issuer.clone(), resource.clone());
        Auth::with_verifier(issuer, resource, verifier)
    }

    /// Tokens are opaque, checked with the issuer's RFC 7662 introspection endpoint.
    pub fn introspection(
        issuer: impl Into<String>,
        resource: impl Into<String>,
        introspection: Introspection,
    ) -> Auth {
        let (issuer, resource) = (issuer.into(), resource.into());
        let verifier = introspection.bind(issuer.clone(), resource.clone());
        Auth::with_verifier(issuer, resource, verifier)
    }

    /// Tokens are checked by `verifier`.
    pub fn with_verifier(
        issuer: impl Into<String>,
        resource: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Auth {
        Auth {
            issuer: issuer.into(),
            resource: resource.into(),
            scopes: Vec::new(),
            resource_name: None,
            verifier: Arc::new(verifier),
            hide_unauthorized: true,
        }
    }

    /// Scopes every request needs (a token without them gets 403 `insufficient_scope`).
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        scopes: I,
    ) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A name for this server in its metadata (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Whether tools, prompts and resources that need scopes the caller lacks are left out of
    /// its lists (default `true`); they are refused with 403 either way.
    pub fn hide_unauthorized(mut self, on: bool) -> Self {
        self.hide_unauthorized = on;
        self
    }

    /// From the environment: `MCP_AUTH_ISSUER` and `MCP_AUTH_RESOURCE` (both, or neither),
    /// `MCP_AUTH_SCOPES` (space-separated, optional). JWTs are verified against the issuer's
    /// keys. `None` when neither is set.
    pub fn from_env() -> Option<Result<Auth, String>> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        match (var("MCP_AUTH_ISSUER"), var("MCP_AUTH_RESOURCE")) {
            (None, None) => None,
            (Some(issuer), Some(resource)) => {
                let scopes = var("MCP_AUTH_SCOPES").unwrap_or_default();
                Some(Ok(Auth::jwt(issuer, resource).required_scopes(
                    scopes.split_whitespace().map(str::to_owned),
                )))
            }
            _ => Some(Err(
                "MCP_AUTH_ISSUER and MCP_AUTH_RESOURCE must be set together".into(),
            )),
        }
    }

    /// Checks the URIs: absolute, `https` (or `http` on a loopback host, for development).
    pub(crate) fn validate(&self) -> Result<(), String> {
        for (what, uri) in [("issuer", &self.issuer), ("resource", &self.resource)] {
            let parsed: http::Uri = uri
                .parse()
                .map_err(|e| format!("the {what} {uri:?} is not a URI: {e}"))?;
            match (parsed.scheme_str(), parsed.host()) {
                (Some("https"), Some(_)) => {}
                (Some("http"), Some(host)) if super::fetch::is_loopback_host(host) => {}
                _ => {
                    return Err(format!(
                        "the {what} {uri:?} must be an https:// URI (http:// only on a loopback host)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The path of the metadata document for this resource (RFC 9728 §3.1: the well-known
    /// prefix inserted before the resource's path).
    pub(crate) fn metadata_path(&self) -> String {
        let path = self
            .resource
            .parse::<http::Uri>()
            .ok()
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        format!("/.well-known/oauth-protected-resource{path}")
    }

    /// The metadata document's URL, for `WWW-Authenticate: Bearer resource_metadata=…`.
    pub(crate) fn metadata_url(&self) -> String {
        let uri = self.resource.parse::<http::Uri>().ok();
        let origin = uri
            .as_ref()
            .and_then(|u| Some(format!("{}://{}", u.scheme_str()?, u.authority()?)))
            .unwrap_or_default();
        format!("{origin}{}", self.metadata_path())
    }

    /// The RFC 9728 document. `scopes_supported`: the required scopes and every scope a
    /// primitive asks for.
    pub(crate) fn metadata(&self, primitive_scopes: &[&str]) -> Value {
        let mut scopes: Vec<&str> = self.scopes.iter().map(String::as_str).collect();
        for s in primitive_scopes {
            if !scopes.contains(s) {
                scopes.push(s);
            }
        }
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": scopes,
        });
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::auth::{TokenError, VerifyFuture};

    struct Never;
    impl TokenVerifier for Never {
        fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
            Box::pin(async { Err(TokenError::Invalid("never".into())) })
        }
    }

    #[test]
    fn metadata_lives_at_the_path_inserted_url() {
        let auth = Auth::with_verifier("https://as.example", "https://mcp.example/mcp", Never)
            .required_scopes(["read"]);
        assert_eq!(
            auth.metadata_path(),
            "/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            auth.metadata_url(),
            "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        );
        let doc = auth.metadata(&["write", "read"]);
        assert_eq!(doc["scopes_supported"], json!(["read", "write"]));
        assert_eq!(doc["authorization_servers"], json!(["https://as.example"]));
        assert!(auth.validate().is_ok());
        let http = Auth::with_verifier("http://as.example", "https://mcp.example/mcp", Never);
        assert!(http.validate().unwrap_err().contains("https://"));
        let local =
            Auth::with_verifier("http://127.0.0.1:9000", "http://localhost:8000/mcp", Never);
        assert!(local.validate().is_ok());
    }
}
