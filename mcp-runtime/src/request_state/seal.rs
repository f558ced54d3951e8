//! `requestState` for 2026-07-28 multi-round-trip requests: the answers collected in earlier
//! rounds, sealed so a client can carry them but not forge or alter them.
//!
//! A state is `v2.<key id>.<payload>.<mac>` (base64url). The payload is JSON naming the method,
//! a SHA-256 digest of the request's params (without `_meta`, `inputResponses` and
//! `requestState`) and of its caller (on HTTP, the `Authorization` header), the audience (the
//! fleet's name, by default the server's), an expiry time, a nonce when a single-use guard is
//! configured, the answers (each with a digest of the question it answers) and digests of the
//! questions still open. The MAC is HMAC-SHA-256 over `v2.<key id>.<payload>` with the key the
//! key id names.
//!
//! The server holds a key ring ([`ServerBuilder::request_state_keys`]): the first key seals,
//! every key opens. A key id is the first 8 bytes of a SHA-256 of its key (domain-separated),
//! so instances sharing a ring agree on ids without configuring them and an id says nothing
//! about its key; opening picks the key by id instead of trying each. Rotation is `[old]` →
//! `[new, old]` (every instance, then states sealed by `new` open everywhere) → `[new]` (once
//! the states sealed by `old` have expired). A state is accepted only for the request, caller
//! and audience it was issued for, before it expires, and with a valid MAC (checked in constant
//! time); an answer is used only for the question it answered. Without a configured ring each
//! process draws a random key, which replicas behind a load balancer cannot share.
//!
//! [`ServerBuilder::request_state_keys`]: crate::ServerBuilder::request_state_keys

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac_sha256::{HMAC, Hash};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::guard::RequestStateGuard;
use crate::protocol::McpError;

/// Seals request states with the first key of a ring and opens them with any.
pub(crate) struct Sealer {
    /// The ring, in order: the first seals.
    keys: Vec<RingKey>,
    /// Who states are for: every instance of a fleet has the same.
    audience: String,
    pub(crate) ttl: Duration,
    /// Whether the key was drawn at random for this process (no ring was configured).
    ephemeral: bool,
    /// Refuses a state's second use; states carry a nonce only when there is one.
    guard: Option<Arc<dyn RequestStateGuard>>,
}

/// One key of the ring: its id and its HMAC state with the key already absorbed (cloned per
/// use, which saves hashing the key's pads every time).
struct RingKey {
    id: String,
    mac: HMAC,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|k| k.id.as_str()).collect();
        f.debug_struct("Sealer")
            .field("key_ids", &ids)
            .field("audience", &self.audience)
            .field("ttl", &self.ttl)
            .field("ephemeral", &self.ephemeral)
            .field("guarded", &self.guard.is_some())
            .finish()
    }
}

/// The id of a ring key: base64url of the first 8 bytes of SHA-256 over a fixed label and the
/// key. The label keeps the id from being a plain hash of the key that could be looked up
/// elsewhere; 64 bits tell a ring's few keys apart with no chance of collision in practice.
pub(crate) fn key_id(key: &[u8]) -> String {
    let mut hasher = Hash::new();
    hasher.update(b"mcp-runtime requestState key id\0");
    hasher.update(key);
    URL_SAFE_NO_PAD.encode(&hasher.finalize()[..8])
}

/// The length of a key id: 8 bytes in base64url.
const KEY_ID_LEN: usize = 11;

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
        let mut hasher = Hash::new();
        hasher.update(crate::id::canonical_json(&value));
        if let Some(principal) = principal {
            hasher.update([0u8]);
            hasher.update(Hash::hash(principal));
        }
        Ok(Binding {
            method: method.to_owned(),
            digest: URL_SAFE_NO_PAD.encode(hasher.finalize()),
        })
    }
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

/// An opened state: what it carries and, when it has a nonce, what a single-use guard records.
#[derive(Debug, PartialEq)]
pub(crate) struct Opened {
    pub(crate) sealed: Sealed,
    pub(crate) claim: Option<Claim>,
}

/// A state's single use, to record with the guard before the request runs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Claim {
    /// The state's nonce.
    pub(crate) id: String,
    /// When the state stops opening: the guard may forget it then.
    pub(crate) expires: SystemTime,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// The method.
    m: String,
    /// The params digest.
    d: String,
    /// Expiry, seconds since the Unix epoch.
    e: u64,
    /// The audience.
    u: String,
    /// A random nonce, when a single-use guard is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<String>,
    #[serde(flatten)]
    sealed: Sealed,
}

/// The format of every state this version seals: `v2.<key id>.<payload>.<mac>`.
const PREFIX: &str = "v2.";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn invalid(why: &str) -> McpError {
    McpError::invalid_params(format!("Invalid requestState: {why}"))
}

impl Sealer {
    /// A sealer with the ring `keys` (not empty; the builder checks their length), for
    /// `audience`.
    pub(crate) fn new(
        keys: &[impl AsRef<[u8]>],
        audience: impl Into<String>,
        ttl: Duration,
        guard: Option<Arc<dyn RequestStateGuard>>,
    ) -> Sealer {
        assert!(!keys.is_empty(), "a key ring has a key");
        let keys = keys
            .iter()
            .map(|key| RingKey {
                id: key_id(key.as_ref()),
                mac: HMAC::new(key.as_ref()),
            })
            .collect();
        Sealer {
            keys,
            audience: audience.into(),
            ttl,
            ephemeral: false,
            guard,
        }
    }

    /// A sealer with a key from the operating system's CSPRNG.
    pub(crate) fn random(
        audience: impl Into<String>,
        ttl: Duration,
        guard: Option<Arc<dyn RequestStateGuard>>,
    ) -> Sealer {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random source works");
        Sealer {
            ephemeral: true,
            ..Sealer::new(&[key], audience, ttl, guard)
        }
    }

    /// A sealer with one key, as tests and the fuzz targets make them.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn with_key(key: &[u8], audience: &str, ttl: Duration) -> Sealer {
        Sealer::new(&[key], audience, ttl, None)
    }

    /// Whether the key was drawn at random for this process: states it seals open nowhere
    /// else, nor after a restart.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_ephemeral(&self) -> bool {
        self.ephemeral
    }

    /// The single-use guard, if one is configured.
    pub(crate) fn guard(&self) -> Option<&Arc<dyn RequestStateGuard>> {
        self.guard.as_ref()
    }

    /// Seals what a request's next round needs, with the first key of the ring.
    pub(crate) fn seal(&self, binding: &Binding, sealed: Sealed) -> String {
        let nonce = self.guard.is_some().then(|| {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).expect("the OS random source works");
            URL_SAFE_NO_PAD.encode(bytes)
        });
        let payload = Payload {
            m: binding.method.clone(),
            d: binding.digest.clone(),
            e: now().saturating_add(self.ttl.as_secs().max(1)),
            u: self.audience.clone(),
            n: nonce,
            sealed,
        };
        let json = serde_json::to_vec(&payload).expect("a payload serializes");
        let key = &self.keys[0];
        let mut token = String::with_capacity(PREFIX.len() + KEY_ID_LEN + json.len() * 4 / 3 + 48);
        token.push_str(PREFIX);
        token.push_str(&key.id);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(json, &mut token);
        let mut mac = key.mac.clone();
        mac.update(token.as_bytes());
        let tag = mac.finalize();
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(tag, &mut token);
        token
    }

    /// Opens a state the client sent back; any failure is -32602.
    pub(crate) fn open(&self, token: &str, binding: &Binding) -> Result<Opened, McpError> {
        let Some(rest) = token.strip_prefix(PREFIX) else {
            return Err(if token.starts_with("v1.") {
                invalid(
                    "issued in an older format (v1), by a key this server does not hold; \
                     send the request again without it",
                )
            } else {
                invalid("not a state this server issued")
            });
        };
        let mut parts = rest.split('.');
        let (Some(id), Some(body), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid("malformed"));
        };
        let Some(key) = self.keys.iter().find(|k| k.id == id) else {
            return Err(
                if id.len() == KEY_ID_LEN && URL_SAFE_NO_PAD.decode(id).is_ok() {
                    invalid(&format!(
                        "issued by a key this server does not hold (key id {id}); \
                     send the request again without it"
                    ))
                } else {
                    invalid("malformed")
                },
            );
        };
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| invalid("malformed"))?;
        let signed = &token[..PREFIX.len() + id.len() + 1 + body.len()];
        let mut mac = key.mac.clone();
        mac.update(signed.as_bytes());
        // A tag of the wrong length fails as an altered one: the comparison is constant-time.
        let tag: [u8; 32] = tag.try_into().unwrap_or([0; 32]);
        if !mac.finalize_verify(&tag) {
            return Err(invalid("integrity check failed (the state was altered)"));
        }
        let json = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| invalid("malformed"))?;
        let payload: Payload = serde_json::from_slice(&json).map_err(|_| invalid("malformed"))?;
        if payload.u != self.audience {
            return Err(invalid(&format!(
                "issued for another audience ({:?}); this server's is {:?}",
                crate::protocol::error::clip(&payload.u),
                crate::protocol::error::clip(&self.audience),
            )));
        }
        if payload.m != binding.method || payload.d != binding.digest {
            return Err(invalid("it was issued for a different request"));
        }
        if payload.e < now() {
            return Err(invalid("expired; send the request again without it"));
        }
        let claim = match (payload.n, &self.guard) {
            (_, None) => None,
            (Some(id), Some(_)) => Some(Claim {
                id,
                // It opens through second `e`: the guard keeps it until that second is over.
                expires: UNIX_EPOCH + Duration::from_secs(payload.e.saturating_add(1)),
            }),
            (None, Some(_)) => {
                return Err(invalid(
                    "issued without a single-use nonce, which this server requires; \
                     send the request again without it",
                ));
            }
        };
        Ok(Opened {
            sealed: payload.sealed,
            claim,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TTL: Duration = Duration::from_secs(60);

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

    fn random() -> Sealer {
        Sealer::random("fleet", TTL, None)
    }

    /// A token signed by `sealer`'s sealing key over any payload.
    fn sign(sealer: &Sealer, payload: &Value) -> String {
        let key = &sealer.keys[0];
        let mut token = format!("{PREFIX}{}.", key.id);
        URL_SAFE_NO_PAD.encode_string(serde_json::to_vec(payload).unwrap(), &mut token);
        let mut mac = key.mac.clone();
        mac.update(token.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize());
        format!("{token}.{tag}")
    }

    #[test]
    fn a_sealed_state_opens_only_for_its_request_and_key() {
        let sealer = random();
        let binding = Binding::of(
            "tools/call",
            Some(r#"{"name":"t","arguments":{"x":1,"y":2},"_meta":{"a":1}}"#),
            None,
        )
        .unwrap();
        let token = sealer.seal(&binding, sealed());
        assert!(token.starts_with("v2."), "{token}");
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
        let opened = sealer.open(&token, &again).unwrap();
        assert_eq!(opened.sealed, sealed());
        assert_eq!(opened.claim, None);
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
        let e = random().open(&token, &binding).unwrap_err();
        assert!(e.message.contains("a key this server does not hold"), "{e}");
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
        let sealer = random();
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
    fn tampering_is_detected() {
        let sealer = Sealer::with_key(&[7u8; 32], "fleet", TTL);
        let binding = Binding::of("tools/call", None, None).unwrap();
        let token = sealer.seal(&binding, sealed());
        let (signed, tag) = token.rsplit_once('.').unwrap();
        let id = key_id(&[7u8; 32]);
        let forged_payload = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(
                &json!({"m": "tools/call", "d": binding.digest, "e": u64::MAX, "u": "fleet", "a": {}}),
            )
            .unwrap(),
        );
        for bad in [
            format!("v2.{id}.{forged_payload}.{tag}"),
            format!("{signed}.{}", URL_SAFE_NO_PAD.encode([0u8; 32])),
            format!("{token}x"),
            format!("{token}.x"),
            token.replacen("v2.", "v2..", 1),
            "garbage".to_owned(),
            "v2.".to_owned(),
            String::new(),
        ] {
            let e = sealer.open(&bad, &binding).unwrap_err();
            assert_eq!(e.code, crate::protocol::ErrorCode::INVALID_PARAMS, "{bad}");
        }
        // A replica with the same key opens it.
        assert!(
            Sealer::with_key(&[7u8; 32], "fleet", Duration::from_secs(1))
                .open(&token, &binding)
                .is_ok()
        );
    }

    #[test]
    fn expired_states_are_refused() {
        let sealer = random();
        let binding = Binding::of("tools/call", None, None).unwrap();
        let token = sign(
            &sealer,
            &json!({"m": binding.method, "d": binding.digest, "e": now() - 1, "u": "fleet", "a": {}}),
        );
        let e = sealer.open(&token, &binding).unwrap_err();
        assert!(e.message.contains("expired"), "{e}");
    }

    #[test]
    fn the_first_key_seals_and_every_key_opens() {
        let (old, new) = ([1u8; 32], [2u8; 40]);
        let binding = Binding::of("tools/call", Some(r#"{"name":"t"}"#), None).unwrap();
        let before = Sealer::new(&[old.as_slice()], "fleet", TTL, None);
        let during = Sealer::new(&[new.as_slice(), old.as_slice()], "fleet", TTL, None);
        let after = Sealer::new(&[new.as_slice()], "fleet", TTL, None);
        let by_old = before.seal(&binding, sealed());
        let by_new = during.seal(&binding, sealed());
        // The token names the key that sealed it.
        assert!(
            by_old.starts_with(&format!("v2.{}.", key_id(&old))),
            "{by_old}"
        );
        assert!(
            by_new.starts_with(&format!("v2.{}.", key_id(&new))),
            "{by_new}"
        );
        // [old] -> [new, old]: both open during the rotation, on every instance.
        for token in [&by_old, &by_new] {
            assert_eq!(during.open(token, &binding).unwrap().sealed, sealed());
        }
        // An instance still on [old] cannot open what [new, old] sealed, and [new] no longer
        // opens what [old] sealed: a clear error, not an integrity failure.
        for (sealer, token) in [(&before, &by_new), (&after, &by_old)] {
            let e = sealer.open(token, &binding).unwrap_err();
            assert_eq!(e.code, crate::protocol::ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("a key this server does not hold"), "{e}");
        }
        assert!(after.open(&by_new, &binding).is_ok());
    }

    #[test]
    fn key_ids_are_short_stable_and_differ_per_key() {
        let a = key_id(&[1u8; 32]);
        assert_eq!(a.len(), KEY_ID_LEN);
        assert_eq!(a, key_id(&[1u8; 32]));
        assert_ne!(a, key_id(&[2u8; 32]));
        // Not a plain SHA-256 prefix of the key.
        assert_ne!(a, URL_SAFE_NO_PAD.encode(&Hash::hash(&[1u8; 32])[..8]));
    }

    #[test]
    fn a_state_opens_only_for_its_audience() {
        let key = [9u8; 32];
        let binding = Binding::of("tools/call", None, None).unwrap();
        let weather = Sealer::with_key(&key, "weather", TTL);
        let token = weather.seal(&binding, sealed());
        let e = Sealer::with_key(&key, "billing", TTL)
            .open(&token, &binding)
            .unwrap_err();
        assert_eq!(e.code, crate::protocol::ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("another audience"), "{e}");
        assert!(
            e.message.contains("weather") && e.message.contains("billing"),
            "{e}"
        );
        assert!(
            Sealer::with_key(&key, "weather", TTL)
                .open(&token, &binding)
                .is_ok()
        );
    }

    #[test]
    fn old_format_and_foreign_tokens_get_clear_errors() {
        let sealer = random();
        let binding = Binding::of("tools/call", None, None).unwrap();
        let e = sealer.open("v1.eyJtIjoieCJ9.AAAA", &binding).unwrap_err();
        assert!(e.message.contains("older format"), "{e}");
        assert!(e.message.contains("does not hold"), "{e}");
        let e = sealer.open("v3.a.b.c", &binding).unwrap_err();
        assert!(e.message.contains("not a state this server issued"), "{e}");
        // A key id that is not one is malformed, and is not echoed.
        let e = sealer.open("v2.<script>.e30.AAAA", &binding).unwrap_err();
        assert_eq!(e.message, "Invalid requestState: malformed");
    }

    #[derive(Default)]
    struct Always;

    impl RequestStateGuard for Always {
        fn first_use<'a>(
            &'a self,
            _id: &'a str,
            _expires: SystemTime,
        ) -> super::super::guard::GuardFuture<'a> {
            Box::pin(async { Ok(true) })
        }
    }

    #[test]
    fn with_a_guard_states_carry_a_nonce_to_claim() {
        let key = [5u8; 32];
        let binding = Binding::of("tools/call", None, None).unwrap();
        let guarded = Sealer::new(&[key], "fleet", TTL, Some(Arc::new(Always)));
        let a = guarded.seal(&binding, Sealed::default());
        let b = guarded.seal(&binding, Sealed::default());
        let (ca, cb) = (
            guarded.open(&a, &binding).unwrap().claim.unwrap(),
            guarded.open(&b, &binding).unwrap().claim.unwrap(),
        );
        assert_ne!(ca.id, cb.id, "nonces are random");
        assert_eq!(ca.id.len(), 22);
        let until = ca.expires.duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert!(until > now() + 59 && until <= now() + 62, "{until}");
        // A state sealed without a guard has no nonce: a guarded server refuses it.
        let plain = Sealer::with_key(&key, "fleet", TTL).seal(&binding, Sealed::default());
        let e = guarded.open(&plain, &binding).unwrap_err();
        assert!(e.message.contains("single-use nonce"), "{e}");
        // An unguarded server opens a guarded state and claims nothing.
        let opened = Sealer::with_key(&key, "fleet", TTL)
            .open(&a, &binding)
            .unwrap();
        assert_eq!(opened.claim, None);
    }
}
