//! Finding a server's authorization: its protected resource metadata (from the 401's
//! `resource_metadata`, then the RFC 9728 well-known URLs, path-inserted then root), the check
//! that the metadata describes the server being called (GHSA-33f5-2c5q-wgwj), and its
//! authorization server's metadata (RFC 8414 and OpenID Connect Discovery URLs, each checked
//! to name the issuer it was fetched for).

use http::Uri;

use super::super::error::ClientError;
use super::fetch;
use super::metadata::{Challenge, ResourceMetadata, ServerMetadata};

/// `scheme://authority` of a URI, as written.
pub(crate) fn origin(uri: &Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map(|a| a.as_str()).unwrap_or("")
    )
}

/// Whether two URIs share scheme, host and port (host and scheme compared without case).
pub(crate) fn same_origin(a: &Uri, b: &Uri) -> bool {
    let port = |u: &Uri| {
        u.port_u16().or(match u.scheme_str() {
            Some("https") => Some(443),
            Some("http") => Some(80),
            _ => None,
        })
    };
    a.scheme_str().map(str::to_ascii_lowercase) == b.scheme_str().map(str::to_ascii_lowercase)
        && a.host().map(str::to_ascii_lowercase) == b.host().map(str::to_ascii_lowercase)
        && port(a) == port(b)
}

/// The server's path without a trailing `/` (empty for the root).
fn trimmed_path(uri: &Uri) -> &str {
    uri.path().trim_end_matches('/')
}

/// The server's protected resource metadata, or `None` when it publishes none (a 2025-03-26
/// server: its origin is then the authorization server).
pub(crate) async fn resource_metadata(
    fetch: &fetch::Fetch,
    server: &Uri,
    challenge: &Challenge,
) -> Result<Option<ResourceMetadata>, ClientError> {
    let base = origin(server);
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        // Only on the server's own origin: a server cannot make the client fetch from
        // elsewhere (GHSA-c9xm-49cp-xcr9).
        let uri = fetch::parse(url)?;
        if !same_origin(&uri, server) {
            return Err(ClientError::authorization(format!(
                "the server's challenge names resource metadata on another origin ({url}); refused"
            )));
        }
        candidates.push(url.clone());
    }
    let path = trimmed_path(server);
    if !path.is_empty() {
        candidates.push(format!("{base}/.well-known/oauth-protected-resource{path}"));
    }
    candidates.push(format!("{base}/.well-known/oauth-protected-resource"));
    for url in candidates {
        let reply = fetch.get(&url).await?;
        if !reply.ok() {
            tracing::debug!(%url, status = reply.status, "no protected resource metadata here");
            continue;
        }
        let Some(doc) = reply.json() else {
            continue;
        };
        let meta: ResourceMetadata = serde_json::from_value(doc).map_err(|e| {
            ClientError::authorization(format!(
                "{url}: the protected resource metadata does not read: {e}"
            ))
        })?;
        check_resource(server, &meta.resource)?;
        return Ok(Some(meta));
    }
    Ok(None)
}

/// The metadata's `resource` must be the server being called: its URL, or a prefix of it on
/// the same origin (a resource at the origin covers `/mcp`). Anything else is another
/// server's metadata, and a token asked for it would be sent to the wrong audience
/// (GHSA-33f5-2c5q-wgwj).
pub(crate) fn check_resource(server: &Uri, resource: &str) -> Result<(), ClientError> {
    let refuse = || {
        ClientError::authorization(format!(
            "the protected resource metadata names the resource {resource:?}, not the server \
             being called ({server}); refused, no token is asked for or sent"
        ))
    };
    let uri: Uri = resource.parse().map_err(|_| refuse())?;
    if !same_origin(&uri, server) || uri.query().is_some() {
        return Err(refuse());
    }
    let (prefix, path) = (trimmed_path(&uri), trimmed_path(server));
    let covers = path == prefix
        || (path.starts_with(prefix) && path.as_bytes().get(prefix.len()) == Some(&b'/'));
    if covers { Ok(()) } else { Err(refuse()) }
}

/// The metadata URLs of an issuer, in the order the MCP specification gives: RFC 8414 with
/// the path inserted, OpenID Connect with the path inserted, then appended (only the first two
/// when the issuer has no path).
pub(crate) fn metadata_urls(issuer: &Uri) -> Vec<String> {
    let base = origin(issuer);
    let path = trimmed_path(issuer);
    let mut urls = vec![
        format!("{base}/.well-known/oauth-authorization-server{path}"),
        format!("{base}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{base}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// The authorization server's metadata, `None` when none of its URLs has any. A document whose
/// `issuer` is not exactly `issuer` (no normalisation: RFC 8414 §3.3) is refused.
pub(crate) async fn server_metadata(
    fetch: &fetch::Fetch,
    issuer: &str,
) -> Result<Option<ServerMetadata>, ClientError> {
    let uri = fetch::parse(issuer)?;
    for url in metadata_urls(&uri) {
        let reply = fetch.get(&url).await?;
        if !reply.ok() {
            tracing::debug!(%url, status = reply.status, "no authorization server metadata here");
            continue;
        }
        let Some(doc) = reply.json() else {
            continue;
        };
        let meta: ServerMetadata = serde_json::from_value(doc).map_err(|e| {
            ClientError::authorization(format!(
                "{url}: the authorization server metadata does not read: {e}"
            ))
        })?;
        if meta.issuer != issuer {
            return Err(ClientError::authorization(format!(
                "{url} names the issuer {:?}, not {issuer:?}, whose metadata it should be; refused",
                meta.issuer
            )));
        }
        return Ok(Some(meta));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn the_resource_must_be_the_server_or_cover_it() {
        let server = uri("http://localhost:3000/mcp");
        assert!(check_resource(&server, "http://localhost:3000/mcp").is_ok());
        assert!(check_resource(&server, "http://localhost:3000/mcp/").is_ok());
        assert!(check_resource(&server, "http://localhost:3000").is_ok());
        assert!(check_resource(&server, "http://LOCALHOST:3000/").is_ok());
        for other in [
            "https://evil.example.com/mcp",
            "http://localhost:3001/mcp",
            "https://localhost:3000/mcp",
            "http://localhost:3000/mcp2",
            "http://localhost:3000/other",
            "http://localhost:3000/mcp/deeper",
            "not a uri",
        ] {
            let e = check_resource(&server, other).unwrap_err().to_string();
            assert!(e.contains("refused"), "{other}: {e}");
        }
    }

    /// GHSA-c9xm-49cp-xcr9: a challenge's `resource_metadata` on another origin is refused
    /// before anything is fetched (nothing listens on these ports).
    #[tokio::test]
    async fn a_challenge_cannot_send_the_client_elsewhere() {
        let server = uri("http://127.0.0.1:9/mcp");
        for elsewhere in [
            "http://169.254.169.254/latest/meta-data",
            "http://127.0.0.1:10/.well-known/oauth-protected-resource/mcp",
            "http://localhost:9/.well-known/oauth-protected-resource/mcp",
        ] {
            let challenge = Challenge {
                resource_metadata: Some(elsewhere.into()),
                ..Challenge::default()
            };
            // Refused before anything is sent: the client is never used.
            let fetch = fetch::Fetch::new(Err("not used".into()));
            let e = resource_metadata(&fetch, &server, &challenge)
                .await
                .unwrap_err();
            assert!(e.to_string().contains("another origin"), "{elsewhere}: {e}");
        }
    }

    #[test]
    fn metadata_urls_follow_the_spec_order() {
        assert_eq!(
            metadata_urls(&uri("http://as:1/tenant1")),
            [
                "http://as:1/.well-known/oauth-authorization-server/tenant1",
                "http://as:1/.well-known/openid-configuration/tenant1",
                "http://as:1/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls(&uri("http://as:1")),
            [
                "http://as:1/.well-known/oauth-authorization-server",
                "http://as:1/.well-known/openid-configuration",
            ]
        );
    }
}
