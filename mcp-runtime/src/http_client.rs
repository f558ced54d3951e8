//! The crate's one HTTP client factory: the pooled hyper-util client that the client's
//! Streamable HTTP and HTTP+SSE links and the `auth` feature's calls to the authorization
//! server all use. With the `tls` feature it speaks `https://` over rustls (ring provider,
//! the platform's trust roots plus any the caller adds, or the caller's own
//! [`rustls::ClientConfig`]), HTTP/2 or HTTP/1.1 as ALPN settles; `http://` is HTTP/1.1. Where
//! each caller allows `http://` is the caller's rule, not this module's.
//!
//! A TLS failure comes back from hyper as a chain of errors (hyper-util's, hyper-rustls's
//! `io::Error`s, and inside them rustls's own); [`tls_failure`] digs out rustls's and says which
//! check failed, for a message a user can act on.

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

#[cfg(feature = "tls")]
pub(crate) use tls::*;

/// What the crate's HTTP clients connect with.
#[cfg(feature = "tls")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
/// What the crate's HTTP clients connect with (no `tls` feature: `http://` only).
#[cfg(not(feature = "tls"))]
pub(crate) type Connector = HttpConnector;

/// A pooled HTTP client.
pub(crate) type HttpClient = Client<Connector, Full<Bytes>>;

/// A plain TCP connector: no Nagle delay (requests are small and each waits for its answer),
/// and any scheme (the TLS layer above it, when there is one, checks `https`).
fn tcp() -> HttpConnector {
    let mut tcp = HttpConnector::new();
    tcp.set_nodelay(true);
    #[cfg(feature = "tls")]
    tcp.enforce_http(false);
    tcp
}

/// `e` and its sources, `: `-separated (hyper's own message stops at "client error (Connect)").
#[cfg(feature = "auth")]
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// A pooled client for `http://` only.
#[cfg(not(feature = "tls"))]
pub(crate) fn plain() -> HttpClient {
    Client::builder(TokioExecutor::new()).build(tcp())
}

#[cfg(feature = "tls")]
mod tls {
    use std::sync::{Arc, OnceLock};
    use std::time::{Duration, SystemTime};

    use rustls::pki_types::CertificateDer;
    use rustls::{CertificateError, ClientConfig, RootCertStore};

    use super::*;
    use crate::tls_failure::TlsFailure;

    /// Which roots a client trusts, or the whole TLS configuration it was given.
    #[derive(Clone)]
    pub(crate) struct TlsSettings {
        /// Trust the platform's roots (default on).
        pub(crate) platform_roots: bool,
        /// Roots trusted besides (or, without the platform's, instead of) those.
        pub(crate) extra_roots: Vec<CertificateDer<'static>>,
        /// A caller's configuration, used as it is (its ALPN list replaced): the settings
        /// above are then unused.
        pub(crate) config: Option<Arc<ClientConfig>>,
    }

    impl Default for TlsSettings {
        fn default() -> Self {
            TlsSettings {
                platform_roots: true,
                extra_roots: Vec::new(),
                config: None,
            }
        }
    }

    impl TlsSettings {
        /// Adds the certificates of `cert`: PEM (every `CERTIFICATE` block in it) or one DER
        /// certificate (`ClientBuilder::add_root_certificate`).
        #[cfg(feature = "client")]
        pub(crate) fn add_root(&mut self, cert: &[u8]) -> Result<(), String> {
            use rustls::pki_types::pem::PemObject;

            let text = cert.trim_ascii_start();
            if text.starts_with(b"-----BEGIN") {
                let mut found = 0;
                for c in CertificateDer::pem_slice_iter(text) {
                    let c =
                        c.map_err(|e| format!("a root certificate's PEM does not read: {e}"))?;
                    self.extra_roots.push(c);
                    found += 1;
                }
                if found == 0 {
                    return Err("a root certificate's PEM holds no CERTIFICATE block".into());
                }
                return Ok(());
            }
            // DER: a SEQUENCE. The store parses it (and says what is wrong with it).
            let der = CertificateDer::from(cert.to_vec());
            let mut probe = RootCertStore::empty();
            probe
                .add(der.clone())
                .map_err(|e| format!("a root certificate is neither PEM nor DER: {e}"))?;
            self.extra_roots.push(der);
            Ok(())
        }

        /// The rustls configuration these settings make.
        fn config(&self) -> Result<Arc<ClientConfig>, String> {
            if let Some(config) = &self.config {
                return Ok(config.clone());
            }
            if self.platform_roots && self.extra_roots.is_empty() {
                return default_config();
            }
            let mut roots = if self.platform_roots {
                platform_roots()?.clone()
            } else {
                RootCertStore::empty()
            };
            for cert in &self.extra_roots {
                roots
                    .add(cert.clone())
                    .map_err(|e| format!("a root certificate is refused: {e}"))?;
            }
            config_with(roots).map(Arc::new)
        }
    }

    /// The platform's trust roots, read once (rustls-native-certs: the system's store on
    /// Linux and the BSDs, `SSL_CERT_FILE`/`SSL_CERT_DIR` when set, the keychain on macOS, the
    /// certificate store on Windows).
    fn platform_roots() -> Result<&'static RootCertStore, String> {
        static ROOTS: OnceLock<Result<RootCertStore, String>> = OnceLock::new();
        ROOTS
            .get_or_init(|| {
                let found = rustls_native_certs::load_native_certs();
                let mut roots = RootCertStore::empty();
                let (added, _ignored) = roots.add_parsable_certificates(found.certs);
                if added == 0 {
                    let why = found
                        .errors
                        .first()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default();
                    return Err(format!(
                        "no TLS trust roots found on this system{why}: install the CA \
                         certificates (ca-certificates), or add roots to the client"
                    ));
                }
                Ok(roots)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// TLS 1.2 and 1.3 with ring's algorithms, trusting `roots`, no client certificate.
    fn config_with(roots: RootCertStore) -> Result<ClientConfig, String> {
        Ok(
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|e| format!("TLS cannot be set up: {e}"))?
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    }

    /// The platform's roots alone, built once.
    fn default_config() -> Result<Arc<ClientConfig>, String> {
        static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
        CONFIG
            .get_or_init(|| config_with(platform_roots()?.clone()).map(Arc::new))
            .as_ref()
            .map(Arc::clone)
            .map_err(Clone::clone)
    }

    /// A pooled client for `http://` and `https://` under `settings`. `https: false` (every URL
    /// it will be given is `http://`) builds no trust roots: a machine without any can still
    /// reach an `http://` server.
    pub(crate) fn build(settings: &TlsSettings, https: bool) -> Result<HttpClient, String> {
        let config = if https {
            settings.config()?
        } else {
            Arc::new(config_with(RootCertStore::empty())?)
        };
        let mut config = Arc::unwrap_or_clone(config);
        // hyper-rustls sets the ALPN list to what hyper speaks.
        config.alpn_protocols.clear();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http()
            .enable_all_versions()
            .wrap_connector(tcp());
        Ok(Client::builder(TokioExecutor::new()).build(connector))
    }

    /// One client for the whole process, trusting the platform's roots: the resource server's
    /// calls to authorization servers (`auth`). The client's OAuth builds its own from the
    /// `ClientBuilder`'s settings.
    #[cfg(feature = "auth")]
    pub(crate) fn shared() -> Result<&'static HttpClient, String> {
        static CLIENT: OnceLock<Result<HttpClient, String>> = OnceLock::new();
        CLIENT
            .get_or_init(|| build(&TlsSettings::default(), true))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// What rustls (or the handshake) says went wrong, somewhere in `e`'s chain of sources,
    /// with a sentence for a user; `None` when the failure was not TLS's.
    pub(crate) fn tls_failure(
        e: &(dyn std::error::Error + 'static),
        host: &str,
    ) -> Option<(TlsFailure, String)> {
        let mut eof = false;
        let mut next = Some(e);
        while let Some(err) = next {
            // An `io::Error` hides the error it wraps from `source()` (it returns that error's
            // source), and hyper-rustls wraps rustls's in two of them: look inside each.
            let mut inner: &(dyn std::error::Error + 'static) = err;
            loop {
                if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                    return Some(describe(tls, host));
                }
                match inner.downcast_ref::<std::io::Error>() {
                    Some(io) => {
                        if io.kind() == std::io::ErrorKind::UnexpectedEof
                            && io.to_string().contains("tls handshake eof")
                        {
                            eof = true;
                        }
                        match io.get_ref() {
                            Some(wrapped) => inner = wrapped,
                            None => break,
                        }
                    }
                    None => break,
                }
            }
            next = err.source();
        }
        eof.then(|| {
            (
                TlsFailure::Handshake,
                format!(
                    "{host} closed the connection during the TLS handshake (is it serving \
                     https:// on this port?)"
                ),
            )
        })
    }

    fn describe(e: &rustls::Error, host: &str) -> (TlsFailure, String) {
        use TlsFailure::*;
        let cert = match e {
            rustls::Error::InvalidCertificate(cert) => cert,
            rustls::Error::InvalidMessage(_) => {
                return (
                    NotTls,
                    format!(
                        "{host} did not answer in TLS ({e}): is it a plain http:// server? \
                         Use an http:// URL for it"
                    ),
                );
            }
            rustls::Error::AlertReceived(alert) => {
                return (
                    Handshake,
                    format!("{host} refused the TLS handshake (alert: {alert:?})"),
                );
            }
            other => {
                return (
                    Handshake,
                    format!("the TLS handshake with {host} failed: {other}"),
                );
            }
        };
        match cert {
            CertificateError::UnknownIssuer => (
                UnknownIssuer,
                format!(
                    "the certificate {host} presented is not trusted: its issuer is not among \
                     the trust roots (a self-signed certificate, or a private CA: add the CA with \
                     ClientBuilder::add_root_certificate)"
                ),
            ),
            CertificateError::NotValidForName => (
                NameMismatch,
                format!("the certificate {host} presented is not valid for the name {host}"),
            ),
            CertificateError::NotValidForNameContext { presented, .. } => {
                let names: Vec<String> = presented.iter().map(|n| plain_name(n)).collect();
                let names = if names.is_empty() {
                    "no name".to_owned()
                } else {
                    names.join(", ")
                };
                (
                    NameMismatch,
                    format!("the certificate {host} presented is for {names}, not for {host}"),
                )
            }
            CertificateError::Expired => (
                Expired,
                format!("the certificate {host} presented has expired"),
            ),
            CertificateError::ExpiredContext { time, not_after } => (
                Expired,
                format!(
                    "the certificate {host} presented expired at {} (it is now {})",
                    date(not_after.as_secs()),
                    date(time.as_secs())
                ),
            ),
            CertificateError::NotValidYet => (
                NotValidYet,
                format!(
                    "the certificate {host} presented is not valid yet (is this machine's clock right?)"
                ),
            ),
            CertificateError::NotValidYetContext { time, not_before } => (
                NotValidYet,
                format!(
                    "the certificate {host} presented is not valid before {} (it is now {}: is \
                     this machine's clock right?)",
                    date(not_before.as_secs()),
                    date(time.as_secs())
                ),
            ),
            CertificateError::Revoked => (
                Revoked,
                format!("the certificate {host} presented has been revoked"),
            ),
            other => (
                BadCertificate,
                format!("the certificate {host} presented is refused: {other}"),
            ),
        }
    }

    /// `DnsName("a.example")` (how webpki lists a certificate's names) as `a.example`.
    fn plain_name(name: &str) -> String {
        for prefix in ["DnsName(", "IpAddress(", "UniformResourceIdentifier("] {
            if let Some(inner) = name.strip_prefix(prefix).and_then(|n| n.strip_suffix(')')) {
                return inner.trim_matches('"').to_owned();
            }
        }
        name.to_owned()
    }

    fn date(secs: u64) -> String {
        crate::task::time::rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn names_read_plainly() {
            assert_eq!(plain_name("DnsName(\"a.example\")"), "a.example");
            assert_eq!(plain_name("IpAddress(127.0.0.1)"), "127.0.0.1");
            assert_eq!(plain_name("DirectoryName"), "DirectoryName");
        }

        #[test]
        fn rustls_errors_inside_io_errors_are_found() {
            let tls = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
            // As hyper-rustls hands it over: tokio-rustls's io::Error, wrapped in another.
            let inner = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
            let outer: Box<dyn std::error::Error + Send + Sync> =
                Box::new(std::io::Error::other(inner));
            let (failure, text) = tls_failure(outer.as_ref(), "a.example").unwrap();
            assert_eq!(failure, TlsFailure::UnknownIssuer);
            assert!(text.contains("a.example"), "{text}");
            let plain = std::io::Error::other("connection refused");
            assert!(tls_failure(&plain, "a.example").is_none());
        }

        #[test]
        #[cfg(feature = "client")]
        fn roots_read_as_pem_or_der_and_garbage_is_refused() {
            let mut settings = TlsSettings::default();
            assert!(settings.add_root(b"not a certificate").is_err());
            assert!(
                settings
                    .add_root(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
                    .is_err()
            );
            assert!(settings.extra_roots.is_empty());
        }
    }
}

/// `application/x-www-form-urlencoded` encoding of one name or value.
pub(crate) fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
