//! `mcp_runtime::client` over `https://` (issue #28 §1): this framework's own endpoint
//! (`McpService`, in process) behind a TLS terminator (tokio-rustls) with a certificate from a
//! CA the test makes (rcgen). A call works in both eras, over HTTP/2 and over HTTP/1.1 (as ALPN
//! settles), and over the legacy HTTP+SSE transport; every refused certificate is a
//! `ClientError::Tls` that says which check failed and names the host.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::{Service as _, service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::rustls;
use mcp_runtime::client::{Client, ClientBuilder, ClientError, ProtocolChoice, TlsFailure};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, McpService};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const SESSION: ProtocolChoice = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);
const H2_AND_H1: &[&[u8]] = &[b"h2", b"http/1.1"];
const H1_ONLY: &[&[u8]] = &[b"http/1.1"];

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The test's certificate authority.
struct Ca {
    pem: String,
    der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

fn ca() -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "mcp-runtime test CA");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        der: cert.der().clone(),
        issuer: Issuer::new(params, key),
    }
}

/// A server certificate for `names` from `ca`; `expired`: valid only during 2019.
fn leaf(
    ca: &Ca,
    names: &[&str],
    expired: bool,
) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "mcp-runtime test server");
    if expired {
        params.not_before = rcgen::date_time_ymd(2019, 1, 1);
        params.not_after = rcgen::date_time_ymd(2020, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (vec![cert.der().clone(), ca.der.clone()], key)
}

/// The MCP endpoint behind TLS on 127.0.0.1, offering `alpn`; notes each request's HTTP
/// version. Stops when dropped.
struct TlsServer {
    port: u16,
    versions: Arc<Mutex<Vec<hyper::Version>>>,
    accept: JoinHandle<()>,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl TlsServer {
    async fn start(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        alpn: &[&[u8]],
    ) -> TlsServer {
        TlsServer::start_with(chain, key, alpn, false).await
    }

    /// [`start`](Self::start), and with `protected` also its own authorization server on the
    /// same origin (see [`guarded`]): `POST /mcp` wants `Bearer the-token`.
    async fn start_with(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        alpn: &[&[u8]],
        protected: bool,
    ) -> TlsServer {
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mcp = McpService::new(server(), HttpConfig::default());
        let versions = Arc::new(Mutex::new(Vec::new()));
        let seen = versions.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, mcp, seen) = (acceptor.clone(), mcp.clone(), seen.clone());
                tokio::spawn(async move {
                    // The refused certificates fail here too (the client's alert).
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = service_fn(move |req: hyper::Request<Incoming>| {
                        seen.lock().unwrap().push(req.version());
                        guarded(mcp.clone(), req, protected, port)
                    });
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection_with_upgrades(TokioIo::new(tls), svc)
                        .await;
                });
            }
        });
        TlsServer {
            port,
            versions,
            accept,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    fn versions(&self) -> Vec<hyper::Version> {
        self.versions.lock().unwrap().clone()
    }
}

type Body =
    http_body_util::combinators::BoxBody<bytes::Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// The MCP endpoint, and when `protected` a scripted OAuth world on the same origin: the
/// protected resource metadata and the authorization server's metadata (`https://localhost:PORT`
/// as issuer), a token endpoint granting client credentials `id`/`secret`, and `POST /mcp`
/// refused with a 401 naming the metadata unless it carries `Bearer the-token`.
async fn guarded(
    mcp: McpService,
    req: hyper::Request<Incoming>,
    protected: bool,
    port: u16,
) -> Result<hyper::Response<Body>, std::convert::Infallible> {
    use http_body_util::{BodyExt, Full};
    let json = |status: u16, doc: serde_json::Value| {
        let body = Full::new(bytes::Bytes::from(doc.to_string()))
            .map_err(|never| match never {})
            .boxed();
        Ok(hyper::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(body)
            .unwrap())
    };
    let base = format!("https://localhost:{port}");
    if protected {
        match (req.method().as_str(), req.uri().path()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => {
                return json(
                    200,
                    json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
                );
            }
            ("GET", "/.well-known/oauth-authorization-server") => {
                return json(
                    200,
                    json!({
                        "issuer": base,
                        "token_endpoint": format!("{base}/token"),
                        "grant_types_supported": ["client_credentials"],
                        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                    }),
                );
            }
            ("POST", "/token") => {
                use base64::Engine as _;
                let basic = base64::engine::general_purpose::STANDARD.encode("id:secret");
                let authenticated = req
                    .headers()
                    .get("authorization")
                    .is_some_and(|v| v.as_bytes() == format!("Basic {basic}").as_bytes());
                return if authenticated {
                    json(
                        200,
                        json!({"access_token": "the-token", "token_type": "Bearer", "expires_in": 3600}),
                    )
                } else {
                    json(401, json!({"error": "invalid_client"}))
                };
            }
            ("POST", "/mcp")
                if req
                    .headers()
                    .get("authorization")
                    .is_none_or(|v| v.as_bytes() != b"Bearer the-token") =>
            {
                let mut refused = json(401, json!({}))?;
                let challenge = format!(
                    r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
                );
                refused
                    .headers_mut()
                    .insert("www-authenticate", challenge.parse().unwrap());
                return Ok(refused);
            }
            _ => {}
        }
    }
    let resp = mcp.call(req).await?;
    Ok(resp.map(|body| body.map_err(Into::into).boxed()))
}

fn server() -> mcp_runtime::Server {
    mcp_runtime::Server::builder()
        .name("tls")
        .version("1")
        .build()
        .unwrap()
}

fn builder(protocol: ProtocolChoice) -> ClientBuilder {
    Client::builder()
        .info("tls-test", "1.0.0")
        .protocol(protocol)
        .request_timeout(Duration::from_secs(20))
        .connect_timeout(Duration::from_secs(30))
}

/// Connects, adds, closes; returns the era the client spoke.
async fn add_over(client: Client) -> ProtocolVersion {
    let sum: i64 = client
        .call_tool_as("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum, 5);
    let version = client.protocol_version();
    client.close().await;
    version
}

/// What a connection that must fail failed with.
async fn refused(builder: ClientBuilder, url: &str) -> ClientError {
    match builder.connect(url).await {
        Ok(_) => panic!("{url}: connected, but the certificate should have been refused"),
        Err(e) => e,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn https_works_in_both_eras_over_http2_and_http1() {
    let ca = ca();
    for alpn in [H2_AND_H1, H1_ONLY] {
        let (chain, key) = leaf(&ca, &["localhost"], false);
        let server = TlsServer::start(chain, key, alpn).await;
        let expected = if alpn == H2_AND_H1 {
            hyper::Version::HTTP_2
        } else {
            hyper::Version::HTTP_11
        };
        for protocol in [ProtocolChoice::Stateless, SESSION] {
            let client = builder(protocol)
                .add_root_certificate(&ca.pem)
                .connect(&server.url("/mcp"))
                .await
                .unwrap_or_else(|e| panic!("{protocol:?} over {expected:?}: {e}"));
            let stateless = protocol == ProtocolChoice::Stateless;
            assert_eq!(client.session_id().is_none(), stateless);
            let version = add_over(client).await;
            assert_eq!(version == ProtocolVersion::V2026_07_28, stateless);
        }
        let versions = server.versions();
        assert!(!versions.is_empty());
        assert!(
            versions.iter().all(|v| *v == expected),
            "ALPN {alpn:?}: the server saw {versions:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_legacy_sse_transport_works_over_https() {
    let ca = ca();
    let (chain, key) = leaf(&ca, &["localhost"], false);
    let server = TlsServer::start(chain, key, H2_AND_H1).await;
    // Asked for, and reached by connect()'s fallback (the stream URL refuses POST).
    let client = builder(SESSION)
        .add_root_certificate(ca.der.as_ref())
        .connect_sse(&server.url("/sse"))
        .await
        .unwrap();
    assert_eq!(add_over(client).await, ProtocolVersion::V2025_11_25);
    let client = builder(ProtocolChoice::Auto)
        .add_root_certificate(&ca.pem)
        .connect(&server.url("/sse"))
        .await
        .unwrap();
    assert_ne!(add_over(client).await, ProtocolVersion::V2026_07_28);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_rustls_config_can_be_given() {
    let ca = ca();
    let (chain, key) = leaf(&ca, &["localhost"], false);
    let server = TlsServer::start(chain, key, H2_AND_H1).await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der.clone()).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    // Replaced by what hyper speaks (hyper-rustls refuses a config that sets its own).
    config.alpn_protocols = vec![b"something-else".to_vec()];
    let client = builder(ProtocolChoice::Stateless)
        .tls_config(config)
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    add_over(client).await;
    assert!(server.versions().contains(&hyper::Version::HTTP_2));
}

fn tls_error(e: &ClientError) -> (&str, TlsFailure, &str) {
    match e {
        ClientError::Tls {
            host,
            failure,
            detail,
        } => (host, *failure, detail),
        other => panic!("expected a TLS error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_is_a_clear_error() {
    let ca = ca();
    let (chain, key) = leaf(&ca, &["localhost"], false);
    let server = TlsServer::start(chain, key, H2_AND_H1).await;
    // The platform's roots only: the test CA is not among them.
    let e = refused(builder(ProtocolChoice::Stateless), &server.url("/mcp")).await;
    let (host, failure, detail) = tls_error(&e);
    assert_eq!((host, failure), ("localhost", TlsFailure::UnknownIssuer));
    assert!(detail.contains("not trusted"), "{detail}");
    assert!(e.to_string().contains("localhost"), "{e}");
    // The same through the legacy transport, and with no platform roots at all.
    let e = match builder(SESSION)
        .trust_platform_roots(false)
        .connect_sse(&server.url("/sse"))
        .await
    {
        Ok(_) => panic!("connected to an untrusted server"),
        Err(e) => e,
    };
    assert_eq!(tls_error(&e).1, TlsFailure::UnknownIssuer);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_for_another_name_is_a_clear_error() {
    let ca = ca();
    let (chain, key) = leaf(&ca, &["other.example"], false);
    let server = TlsServer::start(chain, key, H2_AND_H1).await;
    let e = refused(
        builder(ProtocolChoice::Stateless).add_root_certificate(&ca.pem),
        &server.url("/mcp"),
    )
    .await;
    let (host, failure, detail) = tls_error(&e);
    assert_eq!((host, failure), ("localhost", TlsFailure::NameMismatch));
    assert!(
        detail.contains("is for other.example, not for localhost"),
        "{detail}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_certificate_is_a_clear_error() {
    let ca = ca();
    let (chain, key) = leaf(&ca, &["localhost"], true);
    let server = TlsServer::start(chain, key, H2_AND_H1).await;
    let e = refused(
        builder(SESSION).add_root_certificate(&ca.pem),
        &server.url("/mcp"),
    )
    .await;
    let (host, failure, detail) = tls_error(&e);
    assert_eq!((host, failure), ("localhost", TlsFailure::Expired));
    assert!(
        detail.contains("expired") && detail.contains("2020-01-01"),
        "{detail}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_http_server_on_an_https_url_is_a_clear_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let serving = tokio::spawn(mcp_runtime::transport::serve_http_on(
        server(),
        listener,
        HttpConfig::default(),
    ));
    let e = refused(
        builder(ProtocolChoice::Stateless),
        &format!("https://127.0.0.1:{port}/mcp"),
    )
    .await;
    let (host, failure, detail) = tls_error(&e);
    assert_eq!((host, failure), ("127.0.0.1", TlsFailure::NotTls));
    assert!(detail.contains("plain http:// server"), "{detail}");
    serving.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_root_certificate_that_does_not_read_fails_connect() {
    let e = refused(
        builder(ProtocolChoice::Stateless).add_root_certificate(b"not a certificate"),
        "https://localhost:9/mcp",
    )
    .await;
    assert!(
        matches!(&e, ClientError::Transport(why) if why.contains("add_root_certificate")),
        "{e:?}"
    );
}

/// The roots added to the builder hold for the authorization server too: an MCP server and its
/// authorization server with certificates from the test's CA (not a platform root) are both
/// reached, and the token the client credentials got is what the MCP server sees.
#[tokio::test(flavor = "multi_thread")]
async fn added_roots_hold_for_the_authorization_server_too() {
    use mcp_runtime::client::oauth::OAuthConfig;
    let ca = ca();
    let (chain, key) = leaf(&ca, &["localhost"], false);
    let server = TlsServer::start_with(chain, key, H2_AND_H1, true).await;
    for protocol in [ProtocolChoice::Stateless, SESSION] {
        let client = builder(protocol)
            .add_root_certificate(&ca.pem)
            .oauth(OAuthConfig::client_credentials("id", "secret"))
            .connect(&server.url("/mcp"))
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
        add_over(client).await;
    }
    // Without the root, the MCP server's certificate is refused first: a clear TLS error.
    let e = refused(
        builder(SESSION).oauth(OAuthConfig::client_credentials("id", "secret")),
        &server.url("/mcp"),
    )
    .await;
    assert!(matches!(e, ClientError::Tls { .. }), "{e}");
}
