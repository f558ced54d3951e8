//! `requestState` for 2026-07-28 multi-round-trip requests: the answers collected in earlier
//! rounds, sealed so a client can carry them but not forge or alter them.
//!
//! A state is `v1.<payload>.<mac>` (base64url): the payload is JSON naming the method, a
//! SHA-256 digest of the request's params (without `_meta`, `inputResponses` and
//! `requestState`) and of its caller (on HTTP, the `Authorization` header), an expiry time, the
//! answers (each with a digest of the question it answers) and digests of the questions still
//! open; the MAC is HMAC-SHA-256 over `v1.<payload>` with the server's key. A state is accepted
//! only for the request and caller it was issued for, before it expires, and with a valid MAC
//! (checked in constant time); an answer is used only for the question it answered. The key is random per process
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
    /// The binding of a request: `params` without the keys that change between rounds, and
    /// who sent it (`principal`: on HTTP, the `Authorization` header), so a state cannot be
    /// replayed by another caller.
    ///
    /// Params that do not read as a JSON value (a number out of range such as `1e400`, nesting
    /// past serde_json's limit) are -32602: binding them to anything (say, `null`) would let a
    /// state issued for one request open for any other that fails to read the same way.
    pub(crate) fn of(
        method: &str,
        params: Option<&str>,
        principal: Option<&[u8]>,
    ) -> Result<Binding, McpError> {
        let mut value: Value = match params {
            None => Value::Null,
            Some(p) => serde_json::from_str(p).map_err(|e| {
                McpError::invalid_params(format!(
                    "Invalid params: {} (a multi-round request's params must be plain JSON values)",
                    crate::protocol::jsonrpc::strip_position(&e)
                ))
            })?,
        };
        if let Some(obj) = value.as_object_mut() {
            for key in ["_meta", "inputResponses", "requestState"] {
                obj.remove(key);
            }
        }
        let mut hasher = Sha256::new();
        hasher.update(canonical(&value));
        if let Some(principal) = principal {
            hasher.update([0u8]);
            hasher.update(Sha256::digest(principal));
        }
        Ok(Binding {
            method: method.to_owned(),
            digest: URL_SAFE_NO_PAD.encode(hasher.finalize()),
        })
    }
}

/// A digest of what an ask asked (its method and params): an answer is used only for the
/// question it answered.
pub(crate) fn ask_digest(method: &str, params: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(method.as_bytes());
    hasher.update([0u8]);
    hasher.update(canonical(params));
    URL_SAFE_NO_PAD.encode(hasher.finalize())
}

/// JSON with object keys sorted at every level, so equal values give equal bytes whatever the
/// order they arrived in (and whether or not serde_json preserves it).
fn canonical(value: &Value) -> Vec<u8> {
    fn write(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push(b'{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend(serde_json::to_vec(key).expect("a string serializes"));
                    out.push(b':');
                    write(&map[key], out);
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write(item, out);
                }
                out.push(b']');
            }
            other => out.extend(serde_json::to_vec(other).expect("a scalar serializes")),
        }
    }
    let mut out = Vec::new();
    write(value, &mut out);
    out
}

/// What a state carries besides its binding.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sealed {
    /// Answers by input key: `{"q": <ask digest>, "v": <answer>}`.
    #[serde(rename = "a")]
    pub(crate) answers: Map<String, Value>,
    /// The asks the state's `InputRequiredResult` sent, by key: their digests.
    #[serde(rename = "p", default)]
    pub(crate) pending: Map<String, Value>,
    /// Values the handler keeps the same on every round (`Context::remember`).
    #[serde(rename = "s", default, skip_serializing_if = "Map::is_empty")]
    pub(crate) memo: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// The method.
    m: String,
    /// The params digest.
    d: String,
    /// Expiry, seconds since the Unix epoch.
    e: u64,
    #[serde(flatten)]
    sealed: Sealed,
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

    /// Seals what a request's next round needs.
    pub(crate) fn seal(&self, binding: &Binding, sealed: Sealed) -> String {
        let payload = Payload {
            m: binding.method.clone(),
            d: binding.digest.clone(),
            e: now().saturating_add(self.ttl.as_secs().max(1)),
            sealed,
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
    pub(crate) fn open(&self, token: &str, binding: &Binding) -> Result<Sealed, McpError> {
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
        Ok(payload.sealed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sealed() -> Sealed {
        Sealed {
            answers: json!({"elicit-0": {"q": "d", "v": {"action": "accept", "content": {"name": "Ada"}}}})
                .as_object()
                .cloned()
                .unwrap(),
            pending: json!({"elicit-1": "d2"}).as_object().cloned().unwrap(),
            memo: json!({"id": "abc"}).as_object().cloned().unwrap(),
        }
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_request_and_key() {
        let sealer = Sealer::random(Duration::from_secs(60));
        let binding = Binding::of(
            "tools/call",
            Some(r#"{"name":"t","arguments":{"x":1,"y":2},"_meta":{"a":1}}"#),
            None,
        )
        .unwrap();
        let token = sealer.seal(&binding, sealed());
        // The same request in another round (other `_meta`, keys in another order, with
        // inputResponses) matches.
        let again = Binding::of(
            "tools/call",
            Some(
                r#"{"arguments":{"y":2,"x":1},"name":"t","inputResponses":{},"requestState":"s"}"#,
            ),
            None,
        )
        .unwrap();
        assert_eq!(sealer.open(&token, &again).unwrap(), sealed());
        let other = Binding::of(
            "tools/call",
            Some(r#"{"name":"t","arguments":{"x":2}}"#),
            None,
        )
        .unwrap();
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

    /// Params serde_json cannot read do not all bind alike (they used to bind as `null`): a
    /// state issued for tool X cannot open for tool Y.
    #[test]
    fn unreadable_params_are_refused_not_bound_as_null() {
        for params in [
            r#"{"name":"x","arguments":{"a":1},"pad":1e400}"#.to_owned(),
            format!(
                r#"{{"name":"x","pad":{}{}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            ),
        ] {
            let e = Binding::of("tools/call", Some(&params), None).unwrap_err();
            assert_eq!(
                e.code,
                crate::protocol::ErrorCode::INVALID_PARAMS,
                "{params}"
            );
        }
    }

    #[test]
    fn a_state_is_bound_to_its_caller() {
        let sealer = Sealer::random(Duration::from_secs(60));
        let params = Some(r#"{"name":"t"}"#);
        let alice = Binding::of("tools/call", params, Some(b"Bearer alice".as_slice())).unwrap();
        let token = sealer.seal(&alice, sealed());
        assert!(sealer.open(&token, &alice).is_ok());
        for other in [Some(b"Bearer mallory".as_slice()), None] {
            let e = sealer
                .open(&token, &Binding::of("tools/call", params, other).unwrap())
                .unwrap_err();
            assert!(e.message.contains("different request"), "{e}");
        }
    }

    #[test]
    fn ask_digests_ignore_key_order_but_not_content() {
        let a = ask_digest(
            "elicitation/create",
            &json!({"message": "m", "requestedSchema": {"a": 1, "b": 2}}),
        );
        let b = ask_digest(
            "elicitation/create",
            &json!({"requestedSchema": {"b": 2, "a": 1}, "message": "m"}),
        );
        let c = ask_digest(
            "elicitation/create",
            &json!({"message": "other", "requestedSchema": {"a": 1, "b": 2}}),
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(
            a,
            ask_digest(
                "sampling/createMessage",
                &json!({"message": "m", "requestedSchema": {"a": 1, "b": 2}})
            )
        );
    }

    #[test]
    fn tampering_is_detected() {
        let sealer = Sealer::with_key(&[7u8; 32], Duration::from_secs(60));
        let binding = Binding::of("tools/call", None, None).unwrap();
        let token = sealer.seal(&binding, sealed());
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
            Sealer::with_key(&[7u8; 32], Duration::from_secs(1))
                .open(&token, &binding)
                .is_ok()
        );
    }

    #[test]
    fn expired_states_are_refused() {
        let sealer = Sealer::random(Duration::from_secs(60));
        let binding = Binding::of("tools/call", None, None).unwrap();
        let json = serde_json::to_vec(&Payload {
            m: binding.method.clone(),
            d: binding.digest.clone(),
            e: now() - 1,
            sealed: Sealed::default(),
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
