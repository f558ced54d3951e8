//! The few HTTP requests a resource server makes to its authorization server: its metadata
//! ([`discover`]), the JWKS, introspection, through the crate's one HTTP client factory
//! (`http_client`): HTTPS with the system's trust roots (rustls), plain HTTP only to a loopback
//! host, bounded in time and size.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{Method, Request, Uri};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use crate::http_client::form_encode;

/// How long one request to the authorization server may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest document accepted (metadata, key sets and introspection answers are small).
const MAX_BYTES: usize = 1024 * 1024;

/// `localhost` or a loopback IP literal.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Checks that `url` may be fetched: https, or http to a loopback host.
pub(crate) fn check_url(url: &str) -> Result<Uri, String> {
    let uri: Uri = url
        .parse()
        .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("https"), Some(_)) => Ok(uri),
        (Some("http"), Some(host)) if is_loopback_host(host) => Ok(uri),
        _ => Err(format!(
            "{url:?}: the authorization server is reached over https:// only (http:// on loopback)"
        )),
    }
}

/// GETs a JSON document.
pub(crate) async fn get_json(url: &str) -> Result<Value, String> {
    let uri = check_url(url)?;
    let req = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .header(ACCEPT, "application/json")
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    send(url, req).await
}

/// POSTs a form (`application/x-www-form-urlencoded`) with HTTP Basic client credentials and
/// reads the JSON answer.
pub(crate) async fn post_form(
    url: &str,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> Result<Value, String> {
    use base64::Engine as _;
    let uri = check_url(url)?;
    let body: String = form
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined.
        let pair = format!("{}:{}", form_encode(id), form_encode(secret));
        let b64 = base64::engine::general_purpose::STANDARD.encode(pair);
        req = req.header(AUTHORIZATION, format!("Basic {b64}"));
    }
    let req = req
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    send(url, req).await
}

async fn send(url: &str, req: Request<Full<Bytes>>) -> Result<Value, String> {
    // The crate's one client factory, with the platform's trust roots.
    let client = crate::http_client::shared()?;
    let host = req.uri().host().unwrap_or_default().to_owned();
    let resp = tokio::time::timeout(TIMEOUT, client.request(req))
        .await
        .map_err(|_| format!("{url}: no answer within {TIMEOUT:?}"))?
        .map_err(|e| match crate::http_client::tls_failure(&e, &host) {
            Some((_, why)) => format!("{url}: TLS error: {why}"),
            None => format!("{url}: {}", crate::http_client::error_chain(&e)),
        })?;
    let status = resp.status();
    let body = tokio::time::timeout(TIMEOUT, Limited::new(resp.into_body(), MAX_BYTES).collect())
        .await
        .map_err(|_| format!("{url}: the answer took longer than {TIMEOUT:?}"))?
        .map_err(|e| format!("{url}: reading the answer failed: {e}"))?
        .to_bytes();
    if !status.is_success() {
        return Err(format!(
            "{url}: HTTP {status}: {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ));
    }
    serde_json::from_slice(&body).map_err(|e| format!("{url}: the answer is not JSON: {e}"))
}

/// The issuer's authorization server metadata.
pub(crate) async fn discover(issuer: &str) -> Result<Value, String> {
    let base = issuer.trim_end_matches('/');
    let uri: http::Uri = base
        .parse()
        .map_err(|e| format!("the issuer {issuer:?} is not a URL: {e}"))?;
    let origin = format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or("")
    );
    let path = uri.path().trim_end_matches('/');
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{base}/.well-known/openid-configuration"),
    ];
    let mut errors = Vec::new();
    for url in candidates {
        match get_json(&url).await {
            Ok(doc) => {
                let named = doc.get("issuer").and_then(Value::as_str);
                if named.map(|n| n.trim_end_matches('/')) != Some(base) {
                    return Err(format!(
                        "{url} names the issuer {named:?}, not {issuer:?}: refused"
                    ));
                }
                return Ok(doc);
            }
            Err(e) => errors.push(e),
        }
    }
    Err(format!(
        "no authorization server metadata for {issuer}: {}",
        errors.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http() {
        assert!(check_url("https://as.example/jwks").is_ok());
        assert!(check_url("http://127.0.0.1:9/jwks").is_ok());
        assert!(check_url("http://[::1]:9/jwks").is_ok());
        assert!(check_url("http://localhost/jwks").is_ok());
        assert!(check_url("http://as.example/jwks").is_err());
        assert!(check_url("http://127.0.0.1.evil.example/jwks").is_err());
        assert_eq!(form_encode("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
    }

    /// The shared factory's TLS errors reach the resource server's messages: a plain HTTP
    /// server on an https:// URL is named as such.
    #[tokio::test]
    async fn a_tls_failure_says_which() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.unwrap();
            let mut hello = [0u8; 512];
            let _ = tcp.read(&mut hello).await;
            let _ = tcp
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        });
        let url = format!("https://127.0.0.1:{port}/jwks");
        let err = get_json(&url).await.unwrap_err();
        assert!(
            err.contains("TLS error") && err.contains("plain http:// server"),
            "{err}"
        );
        server.abort();
    }
}
