//! A protected MCP server and its authorization server, both scripted on [`RawServer`]s (two
//! origins: two ports), for tests of `mcp_runtime::client::oauth`. The MCP server wants
//! `Bearer tok-N` on every `POST` (anything else gets a 401 naming its resource metadata); the
//! authorization server registers clients, redirects straight back with a code, and issues
//! `tok-N`/`ref-N` pairs (N counting up, so rotation shows). Both record every request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use mcp_runtime::client::ClientError;
use mcp_runtime::client::oauth::{AuthorizeFuture, RedirectHandler};
use serde_json::json;

use super::raw_server::{RawRequest, RawServer, answer, session_basics};

/// What the scripted servers publish.
#[derive(Clone)]
pub struct Options {
    /// The `resource` of the protected resource metadata (`{base}` stands for the MCP
    /// server's origin); `None`: the MCP server's own URL.
    pub resource: Option<String>,
    /// `expires_in` of each token.
    pub expires_in: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            resource: None,
            expires_in: 3600,
        }
    }
}

/// The two servers.
pub struct World {
    pub mcp: RawServer,
    pub auth: RawServer,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    pub issued: Arc<AtomicUsize>,
}

fn query(target: &str, name: &str) -> Option<String> {
    let q = target.split_once('?')?.1;
    q.split('&').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k == name).then(|| decode(v))
    })
}

/// Form/query decoding (`+`, `%XX`).
pub fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(b'?'));
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// A form body's field.
pub fn form_field(req: &RawRequest, name: &str) -> Option<String> {
    query(&format!("?{}", String::from_utf8_lossy(&req.body)), name)
}

impl World {
    pub async fn start(options: Options) -> World {
        let issuer: Arc<OnceLock<String>> = Arc::default();
        let issued = Arc::new(AtomicUsize::new(0));
        let (iss, count, expires_in) = (issuer.clone(), issued.clone(), options.expires_in);
        let auth = RawServer::start(move |req, mut conn| {
            let (iss, count) = (iss.clone(), count.clone());
            Box::pin(async move {
                let issuer = iss.get().unwrap().clone();
                let path = req.target.split('?').next().unwrap_or("").to_owned();
                let ok = match (req.method.as_str(), path.as_str()) {
                    ("GET", "/.well-known/oauth-authorization-server") => {
                        conn.json(
                            200,
                            &json!({
                                "issuer": issuer,
                                "authorization_endpoint": format!("{issuer}/authorize"),
                                "token_endpoint": format!("{issuer}/token"),
                                "registration_endpoint": format!("{issuer}/register"),
                                "response_types_supported": ["code"],
                                "code_challenge_methods_supported": ["S256"],
                                "token_endpoint_auth_methods_supported": ["none"],
                                "authorization_response_iss_parameter_supported": true,
                            }),
                        )
                        .await
                    }
                    ("POST", "/register") => {
                        conn.json(201, &json!({"client_id": "test-client"})).await
                    }
                    ("GET", "/authorize") => {
                        let redirect = query(&req.target, "redirect_uri").unwrap();
                        let state = query(&req.target, "state").unwrap();
                        let back = format!(
                            "{redirect}?code=the-code&state={state}&iss={}",
                            issuer.replace(':', "%3A").replace('/', "%2F")
                        );
                        conn.respond(302, &[("Location", &back)], b"").await
                    }
                    ("POST", "/token") => {
                        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                        conn.json(
                            200,
                            &json!({
                                "access_token": format!("tok-{n}"),
                                "token_type": "Bearer",
                                "expires_in": expires_in,
                                "refresh_token": format!("ref-{n}"),
                            }),
                        )
                        .await
                    }
                    _ => conn.respond(404, &[], b"").await,
                };
                ok.ok().map(|()| conn)
            })
        })
        .await;
        issuer.set(auth.url("")).unwrap();

        let own: Arc<OnceLock<String>> = Arc::default();
        let (me, as_url, resource) = (own.clone(), auth.url(""), options.resource.clone());
        let mcp = RawServer::start(move |req, mut conn| {
            let (me, as_url, resource) = (me.clone(), as_url.clone(), resource.clone());
            Box::pin(async move {
                let base = me.get().unwrap().clone();
                if req.method == "GET" && req.target == "/.well-known/oauth-protected-resource/mcp" {
                    let doc = json!({
                        "resource": resource
                            .map(|r| r.replace("{base}", &base))
                            .unwrap_or(format!("{base}/mcp")),
                        "authorization_servers": [as_url],
                    });
                    return conn.json(200, &doc).await.ok().map(|()| conn);
                }
                if req.target != "/mcp" {
                    return conn.respond(404, &[], b"").await.ok().map(|()| conn);
                }
                let authorized = req
                    .header("authorization")
                    .is_some_and(|a| a.starts_with("Bearer tok-"));
                if !authorized {
                    let challenge = format!(
                        "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                    );
                    return conn
                        .respond(401, &[("WWW-Authenticate", &challenge)], b"")
                        .await
                        .ok()
                        .map(|()| conn);
                }
                match session_basics(req, conn).await {
                    Ok(next) => next,
                    Err((req, mut conn)) => {
                        let result = match req.rpc_method().as_deref() {
                            Some("tools/list") => json!({"tools": []}),
                            _ => json!({}),
                        };
                        conn.json(200, &answer(&req, result)).await.ok().map(|()| conn)
                    }
                }
            })
        })
        .await;
        own.set(mcp.url("")).unwrap();
        let url = mcp.url("/mcp");
        World {
            mcp,
            auth,
            url,
            issued,
        }
    }
}

/// `GET url`: the status line and the `Location`, if any.
pub async fn get(url: &str) -> (String, Option<String>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 8192];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text.lines().next().unwrap_or("").to_owned();
    let location = text
        .lines()
        .find_map(|l| l.strip_prefix("Location: ").map(str::to_owned));
    (status, location)
}

/// A user who approves at once: `GET`s the authorization URL and returns where it redirects
/// (the redirect URI itself is never contacted).
pub struct Approve;

pub const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

impl RedirectHandler for Approve {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.into()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let (status, location) = get(url).await;
            location.ok_or_else(|| ClientError::Authorization(format!("no redirect: {status}")))
        })
    }
}

/// Every header value, target and body of `requests`, for looking for a secret in them.
pub fn everything_sent(requests: &[RawRequest]) -> Vec<String> {
    requests
        .iter()
        .flat_map(|r| {
            let mut all = vec![
                r.target.clone(),
                String::from_utf8_lossy(&r.body).into_owned(),
            ];
            all.extend(r.headers.iter().map(|(n, v)| format!("{n}: {v}")));
            all
        })
        .collect()
}
