//! The random values of an authorization request: the PKCE verifier and its S256 challenge
//! (RFC 7636), the `state`, and base64url without padding, which OAuth uses throughout.

use base64::Engine as _;

/// base64url without padding.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `n` random bytes from the OS, base64url.
pub(crate) fn random_token(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    b64url(&bytes)
}

/// A PKCE pair: the verifier kept by the client, the challenge sent to the authorization
/// endpoint.
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    /// 32 random bytes: a 43-character verifier (RFC 7636 §4.1 asks for 43 to 128), and
    /// `BASE64URL(SHA256(verifier))`.
    pub(crate) fn new() -> Pkce {
        let verifier = random_token(32);
        let challenge = s256(&verifier);
        Pkce {
            verifier,
            challenge,
        }
    }
}

/// The S256 transformation of a verifier.
pub(crate) fn s256(verifier: &str) -> String {
    b64url(&hmac_sha256::Hash::hash(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = Pkce::new();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(p.challenge, s256(&p.verifier));
        assert_ne!(Pkce::new().verifier, p.verifier);
    }
}
