//! Signatures for the client's OAuth (the `client-jwt` feature): `private_key_jwt` client
//! assertions (RFC 7523 §2.2) with a key given as PEM, and DPoP proofs (RFC 9449) with an
//! ES256 key the client makes for itself.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{Value, json};

use super::super::error::ClientError;
use super::pkce::{b64url, random_token};
use super::store::now;

/// A private key for `private_key_jwt` client authentication (RFC 7523): the client signs a
/// short-lived assertion (`iss` and `sub` its client id, `aud` the authorization server's
/// issuer) for each token request.
#[derive(Clone)]
pub struct PrivateKey {
    key: EncodingKey,
    alg: Algorithm,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKey")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

impl PrivateKey {
    /// A key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) for `ES256`, `ES384` and `EdDSA`, PKCS#1
    /// (`BEGIN RSA PRIVATE KEY`) for `RS256`/`RS384`/`RS512`/`PS256`/`PS384`/`PS512`.
    pub fn from_pem(pem: &str, algorithm: &str) -> Result<PrivateKey, ClientError> {
        let bad = |why: String| ClientError::authorization(format!("the private key: {why}"));
        let alg: Algorithm = algorithm
            .parse()
            .map_err(|_| bad(format!("{algorithm:?} is not a JWS algorithm")))?;
        let body: String = pem
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("-----"))
            .collect();
        use base64::Engine as _;
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|e| bad(format!("not PEM: {e}")))?;
        let key = match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_der(&der),
            Algorithm::EdDSA => EncodingKey::from_ed_der(&der),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_der(&der),
            _ => return Err(bad(format!("{algorithm} is not an asymmetric algorithm"))),
        };
        let key = PrivateKey { key, alg };
        // A key that does not sign is found now, not at the first token request.
        key.sign("check", "check")?;
        Ok(key)
    }

    /// A client assertion for `client_id`, for the authorization server `audience`.
    pub(crate) fn sign(&self, client_id: &str, audience: &str) -> Result<String, ClientError> {
        let iat = now();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": iat,
            "exp": iat + 300,
            "jti": random_token(16),
        });
        jsonwebtoken::encode(&Header::new(self.alg), &claims, &self.key)
            .map_err(|e| ClientError::authorization(format!("signing the client assertion: {e}")))
    }
}

/// The client's DPoP key (P-256), made when the client is: its tokens are bound to it.
pub(crate) struct DpopKey {
    key: SigningKey,
    jwk: Value,
}

impl DpopKey {
    pub(crate) fn generate() -> DpopKey {
        let key = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).expect("the OS random source works");
            // Fails only for zero or a value past the group order (about 2^-32).
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                break key;
            }
        };
        let point = key.verifying_key().to_sec1_point(false);
        let bytes = point.as_bytes();
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(&bytes[1..33]),
            "y": b64url(&bytes[33..65]),
        });
        DpopKey { key, jwk }
    }

    /// A proof for one request: `htm` its method, `htu` its URL (without query and
    /// fragment), `ath` the hash of the access token it carries, `nonce` the server's.
    pub(crate) fn proof(
        &self,
        htm: &str,
        htu: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> String {
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let htu = htu.split(['?', '#']).next().unwrap_or(htu);
        let mut claims = json!({
            "jti": random_token(16),
            "htm": htm,
            "htu": htu,
            "iat": now(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(b64url(&hmac_sha256::Hash::hash(token.as_bytes())));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", b64url(&signature.to_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpop_proofs_verify_with_their_jwk() {
        let key = DpopKey::generate();
        let proof = key.proof("POST", "http://a/mcp?x=1", Some("tok"), Some("n"));
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        use base64::Engine as _;
        let dec = |s: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .unwrap()
        };
        let claims: Value = serde_json::from_slice(&dec(parts[1])).unwrap();
        assert_eq!(claims["htu"], "http://a/mcp");
        assert_eq!(claims["nonce"], "n");
        assert_eq!(claims["ath"], b64url(&hmac_sha256::Hash::hash(b"tok")));
        let header: Value = serde_json::from_slice(&dec(parts[0])).unwrap();
        // Verify with jsonwebtoken from the JWK in the header.
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(header["jwk"].clone()).unwrap();
        let dk = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut v = jsonwebtoken::Validation::new(Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        jsonwebtoken::decode::<Value>(&proof, &dk, &v).expect("the proof verifies");
        assert_ne!(
            key.proof("POST", "http://a/mcp", None, None),
            key.proof("POST", "http://a/mcp", None, None)
        );
    }
}
