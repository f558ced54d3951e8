//! The client's requests to authorization servers (and to the MCP server's metadata URLs):
//! one method, [`Fetch::send`], that every OAuth request goes through, on the crate's one HTTP
//! client factory (`https://` with the `tls` feature, under the same TLS settings as the MCP
//! server's connection: a root added to the `ClientBuilder` is trusted here too). Redirects are
//! never followed; each request and its body are bounded in time and size.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use http::{Method, Request, Uri};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use super::super::error::ClientError;

/// How long one request to an authorization server may take, body included.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read (metadata, registrations and token answers are small).
const MAX_BYTES: usize = 1024 * 1024;

/// An answer: its status, headers and (bounded) body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Reply {
    /// The body as a JSON object, if it is one.
    pub(crate) fn json(&self) -> Option<Value> {
        serde_json::from_slice::<Value>(&self.body)
            .ok()
            .filter(Value::is_object)
    }

    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The start of the body, for an error message.
    pub(crate) fn text(&self) -> String {
        let body = String::from_utf8_lossy(&self.body[..self.body.len().min(300)]).into_owned();
        body.trim().to_owned()
    }
}

/// The HTTP client of one authorizer's requests to authorization servers. Built from the
/// `ClientBuilder`'s TLS settings (with the `tls` feature), so the roots added there, or a whole
/// rustls config given there, hold for the authorization server as for the MCP server; a
/// settings error (no platform roots) is reported at the first request, as the MCP server's
/// own would be at connect.
#[derive(Clone)]
pub(crate) struct Fetch {
    client: Result<crate::http_client::HttpClient, String>,
}

impl Fetch {
    /// Requests on `client` (see `client::http::authorization_client`), or failing with its
    /// error.
    pub(crate) fn new(client: Result<crate::http_client::HttpClient, String>) -> Fetch {
        Fetch { client }
    }

    fn client(&self) -> Result<&crate::http_client::HttpClient, ClientError> {
        self.client.as_ref().map_err(ClientError::authorization)
    }

    /// Sends one request and reads its answer (at most 1 MiB, within 30 s). The one place OAuth
    /// requests leave the client.
    pub(crate) async fn send(&self, req: Request<Full<Bytes>>) -> Result<Reply, ClientError> {
        let what = format!("{} {}", req.method(), req.uri());
        let uri = req.uri().clone();
        let exchange = async {
            let resp = self
                .client()?
                .request(req)
                .await
                .map_err(|e| ClientError::request_failed(&what, &uri, &e))?;
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, MAX_BYTES)
                .collect()
                .await
                .map_err(|e| {
                    ClientError::transport(format!("{what}: reading the answer failed: {e}"))
                })?
                .to_bytes();
            Ok(Reply {
                status: parts.status.as_u16(),
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .unwrap_or(Err(ClientError::Timeout(TIMEOUT)))
    }

    /// `GET url` for a JSON document.
    pub(crate) async fn get(&self, url: &str) -> Result<Reply, ClientError> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(parse(url)?)
            .header(ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(ClientError::transport)?;
        self.send(req).await
    }

    /// `POST url` with a body of `content_type` and extra headers.
    pub(crate) async fn post(
        &self,
        url: &str,
        content_type: &str,
        body: String,
        headers: &[(String, String)],
    ) -> Result<Reply, ClientError> {
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(parse(url)?)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, content_type);
        for (name, value) in headers {
            req = req.header(name.as_str(), value.as_str());
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| ClientError::authorization(format!("cannot build the request: {e}")))?;
        self.send(req).await
    }
}

/// Parses an authorization server's (or metadata) URL: `http://`, or `https://` with the `tls`
/// feature.
pub(crate) fn parse(url: &str) -> Result<Uri, ClientError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| ClientError::authorization(format!("{url:?} is not a URL: {e}")))?;
    match uri.scheme_str() {
        Some("http") if uri.host().is_some() => Ok(uri),
        Some("https") if cfg!(feature = "tls") && uri.host().is_some() => Ok(uri),
        Some("https") => Err(ClientError::authorization(format!(
            "{url}: https:// needs the `tls` feature of mcp-runtime"
        ))),
        _ => Err(ClientError::authorization(format!(
            "{url:?} is not an http(s):// URL"
        ))),
    }
}

pub(crate) use crate::http_client::form_encode;

/// A form body from its pairs.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes one component of a query string (`+` is a space, `%XX` a byte).
pub(crate) fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The pairs of a query string, decoded, in order.
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (form_decode(k), form_decode(v)),
            None => (form_decode(p), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_round_trip() {
        assert_eq!(form_encode("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(form_decode("a+b%26c%3Dd%2F%C3%A9"), "a b&c=d/é");
        assert_eq!(form_decode("100%"), "100%");
        assert_eq!(form_decode("%zz%4"), "%zz%4");
        assert_eq!(
            query_pairs("code=x%2By&state=s&iss=http%3A%2F%2Fa&flag"),
            vec![
                ("code".into(), "x+y".into()),
                ("state".into(), "s".into()),
                ("iss".into(), "http://a".into()),
                ("flag".into(), String::new())
            ]
        );
        assert_eq!(parse("https://as.example").is_ok(), cfg!(feature = "tls"));
        assert!(parse("ftp://as.example").is_err());
        assert!(parse("http://127.0.0.1:9/token").is_ok());
    }
}
