//! [`TlsFailure`]: which check of a TLS connection failed. Its own module, compiled with the
//! client (whose [`ClientError`](crate::client::ClientError) names it, with or without the
//! `tls` feature, so that matching on it does not depend on the features) and with `tls` (whose
//! connections make it).

/// Which check of a TLS connection failed (in
/// [`ClientError::Tls`](crate::client::ClientError::Tls)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TlsFailure {
    /// The certificate does not chain to a trusted root: self-signed, or issued by a
    /// private CA the client was not given (`ClientBuilder::add_root_certificate`).
    UnknownIssuer,
    /// The certificate is not valid for the host name (or IP address) of the URL.
    NameMismatch,
    /// The certificate has expired.
    Expired,
    /// The certificate is not valid yet (or this machine's clock is behind).
    NotValidYet,
    /// The certificate has been revoked.
    Revoked,
    /// Another problem with the certificate (a bad signature, an unsupported algorithm,
    /// not issued for TLS servers, badly encoded).
    BadCertificate,
    /// What the server sent is not TLS: most likely a plain `http://` server on this
    /// port.
    NotTls,
    /// The handshake failed otherwise: the server refused it (a TLS alert), no protocol
    /// version or cipher suite in common, the connection closed during it.
    Handshake,
}
