//! `requestState` for 2026-07-28 multi-round-trip requests: the answers collected in earlier
//! rounds, sealed so a client can carry them but not forge or alter them.
//!
//! A state is `v1.<payload>.<mac>` (base64url): the payload is JSON naming the method, a
//! SHA-256 digest of the request's params (without `_meta`, `inputResponses` and
//! `requestState`), an expiry time and the answers; the MAC is HMAC-SHA-256 over `v1.<payload>`
//! with the server's key. A state is accepted only for the request it was issued for, before
//! it expires, and with a valid MAC (checked in constant time). The key is random per process
//! unless set with [`ServerBuilder::request_state_key`](crate::ServerBuilder::request_state_key),
//! which replicas behind a load balancer must share.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::protocol::McpError;

/// Seals and opens request states with one key.
pub(crate) struct Sealer {
    key: Vec<u8>,
    pub(crate) ttl: Duration,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// What a state is bound to: the method and a digest of the request's own params.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) method: String,
    pub(crate) digest: String,
}

impl Binding {
    /// The binding of a request: `params` without the keys that change between rounds.
    pub(crate) fn of(method: &str, params: Option<&str>) -> Binding {
        let mut value: Value = params
            .and_then(|p| serde_json::from_str(p).ok())
            .unwrap_or(Value::Null);
        if let Some(obj) = value.as_object_mut() {
            for key in ["_meta", "inputResponses", "requestState"] {
                obj.remove(key);
            }
        }
        // serde_json's maps are sorted, so equal params give equal bytes.
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        let digest = Sha256::digest(&bytes);
        Binding {
            method: method.to_owned(),
            digest: URL_SAFE_NO_PAD.encode(digest),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// The method.
    m: String,
    /// The params digest.
    d: String,
    /// Expiry, seconds since the Unix epoch.
    e: u64,
    /// Answers by input key.
    a: Map<String, Value>,
}

const PREFIX: &str = "v1.";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Sealer {
    /// A sealer with a key from the operating system's CSPRNG.
    pub(crate) fn random(ttl: Duration) -> Sealer {
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source works");
        Sealer { key, ttl }
    }

    pub(crate) fn with_key(key: &[u8], ttl: Duration) -> Sealer {
        Sealer {
            key: key.to_vec(),
            ttl,
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes keys of any length")
    }

    /// Seals `answers` for a request.
    pub(crate) fn seal(&self, binding: &Binding, answers: Map<String, Value>) -> String {
        let payload = Payload {
            m: binding.method.clone(),
            d: binding.digest.clone(),
            e: now().saturating_add(self.ttl.as_secs().max(1)),
            a: answers,
        };
        let json = serde_json::to_vec(&payload).expect("a payload serializes");
        let mut token = String::from(PREFIX);
        URL_SAFE_NO_PAD.encode_string(json, &mut token);
        let mut mac = self.mac();
        mac.update(token.as_bytes());
        let tag = mac.finalize().into_bytes();
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(tag, &mut token);
        token
    }

    /// Opens a state the client sent back; any failure is -32602.
    pub(crate) fn open(
        &self,
        token: &str,
        binding: &Binding,
    ) -> Result<Map<String, Value>, McpError> {
        let invalid = |why: &str| McpError::invalid_params(format!("Invalid requestState: {why}"));
        let (signed, tag) = token
            .rsplit_once('.')
            .filter(|(signed, _)| signed.starts_with(PREFIX))
            .ok_or_else(|| invalid("not a state this server issued"))?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| invalid("malformed"))?;
        let mut mac = self.mac();
        mac.update(signed.as_bytes());
        mac.verify_slice(&tag)
            .map_err(|_| invalid("integrity check failed (altered, or issued by another key)"))?;
        let json = URL_SAFE_NO_PAD
            .decode(&signed[PREFIX.len()..])
            .map_err(|_| invalid("malformed"))?;
        let payload: Payload = serde_json::from_slice(&json).map_err(|_| invalid("malformed"))?;
        if payload.m != binding.method || payload.d != binding.digest {
            return Err(invalid("it was issued for a different request"));
        }
        if payload.e < now() {
            return Err(invalid("expired; send the request again without it"));
        }
        Ok(payload.a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answers() -> Map<String, Value> {
        json!({"elicit-0": {"action": "accept", "content": {"name": "Ada"}}})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_request_and_key() {
        let sealer = Sealer::random(Duration::from_secs(60));
        let binding = Binding::of(
            "tools/call",
            Some(r#"{"name":"t","arguments":{"x":1},"_meta":{"a":1}}"#),
        );
        let token = sealer.seal(&binding, answers());
        // The same request in another round (other `_meta`, with inputResponses) matches.
        let again = Binding::of(
            "tools/call",
            Some(r#"{"arguments":{"x":1},"name":"t","inputResponses":{},"requestState":"s"}"#),
        );
        assert_eq!(sealer.open(&token, &again).unwrap(), answers());
        let other = Binding::of("tools/call", Some(r#"{"name":"t","arguments":{"x":2}}"#));
        assert!(sealer.open(&token, &other).is_err());
        let prompt = Binding {
            method: "prompts/get".into(),
            ..binding.clone()
        };
        assert!(sealer.open(&token, &prompt).is_err());
        assert!(
            Sealer::random(Duration::from_secs(60))
                .open(&token, &binding)
                .is_err()
        );
    }

    #[test]
    fn tampering_is_detected() {
        let sealer = Sealer::with_key(b"shared", Duration::from_secs(60));
        let binding = Binding::of("tools/call", None);
        let token = sealer.seal(&binding, answers());
        let (signed, tag) = token.rsplit_once('.').unwrap();
        let forged_payload = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(
                &json!({"m": "tools/call", "d": binding.digest, "e": u64::MAX, "a": {}}),
            )
            .unwrap(),
        );
        for bad in [
            format!("v1.{forged_payload}.{tag}"),
            format!("{signed}.{}", URL_SAFE_NO_PAD.encode([0u8; 32])),
            format!("{token}x"),
            "garbage".to_owned(),
        ] {
            let e = sealer.open(&bad, &binding).unwrap_err();
            assert_eq!(e.code, crate::protocol::ErrorCode::INVALID_PARAMS);
        }
        // A replica with the same key opens it.
        assert!(
            Sealer::with_key(b"shared", Duration::from_secs(1))
                .open(&token, &binding)
                .is_ok()
        );
    }

    #[test]
    fn expired_states_are_refused() {
        let sealer = Sealer::random(Duration::from_secs(60));
        let binding = Binding::of("tools/call", None);
        let json = serde_json::to_vec(&Payload {
            m: binding.method.clone(),
            d: binding.digest.clone(),
            e: now() - 1,
            a: Map::new(),
        })
        .unwrap();
        let mut token = String::from(PREFIX);
        URL_SAFE_NO_PAD.encode_string(json, &mut token);
        let mut mac = sealer.mac();
        mac.update(token.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        let e = sealer
            .open(&format!("{token}.{tag}"), &binding)
            .unwrap_err();
        assert!(e.message.contains("expired"));
    }
}
