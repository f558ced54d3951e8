//! `requestState` tokens (`request_state/seal.rs`), structure-aware: seal a state for a request, then
//! open it as sent, tampered with (one byte changed, cut, extended), rebound (another method,
//! params or caller), forged with a valid MAC over any payload (only the key holder can, so
//! this reaches the checks behind the MAC: audience, expiry, binding, payload shape), or any
//! string. Asserts: a state opens for its own request with what was sealed; any other token
//! text fails; it opens for another request exactly when the bindings are equal, and bindings
//! are equal only for the same method, caller and params (after dropping `_meta`,
//! `inputResponses`, `requestState`), compared as JSON; a forged state opens only when its
//! audience, method, digest and expiry allow it.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::{StateParts, StateSealer};
use serde_json::{Map, Value};

#[derive(Arbitrary, Debug)]
struct Request {
    method: String,
    params: Option<String>,
    principal: Option<Vec<u8>>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    AsSent,
    Tamper {
        at: usize,
        byte: u8,
    },
    Cut {
        at: usize,
    },
    Extend {
        tail: String,
    },
    Rebind(Request),
    Forge {
        payload: Vec<u8>,
    },
    ForgeFields {
        same_audience: bool,
        same_method: bool,
        same_digest: bool,
        expiry: u64,
        answers: Option<String>,
    },
    Raw(String),
}

#[derive(Arbitrary, Debug)]
struct Input {
    key: Vec<u8>,
    ttl: u16,
    request: Request,
    answers: Vec<(String, String)>,
    ops: Vec<Op>,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The params a binding covers, as JSON (`None` if they are not JSON).
fn covered(params: Option<&str>) -> Option<Value> {
    let Some(p) = params else {
        return Some(Value::Null);
    };
    let mut v: Value = serde_json::from_str(p).ok()?;
    if let Some(obj) = v.as_object_mut() {
        for key in ["_meta", "inputResponses", "requestState"] {
            obj.remove(key);
        }
    }
    Some(v)
}

fn parts(answers: &[(String, String)]) -> StateParts {
    let a: Map<String, Value> = answers
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::json!({"q": "digest", "v": v})))
        .collect();
    (a, Map::new(), Map::new())
}

fuzz_target!(|input: Input| {
    let sealer = StateSealer::new(&input.key, u64::from(input.ttl));
    let r = &input.request;
    let (method, params, principal) = (
        r.method.as_str(),
        r.params.as_deref(),
        r.principal.as_deref(),
    );
    let sealed = parts(&input.answers);
    // Params that do not read as JSON values get no state, and open none (they used to bind
    // as `null`: regressions/request_state).
    let Some(token) = sealer.seal(method, params, principal, sealed.clone()) else {
        assert!(
            covered(params).is_none(),
            "readable params got no state: {params:?}"
        );
        assert!(StateSealer::digest(method, params, principal).is_none());
        return;
    };
    assert_eq!(
        sealer.open(&token, method, params, principal),
        Ok(sealed.clone()),
        "a fresh state does not open"
    );
    let digest =
        StateSealer::digest(method, params, principal).expect("a sealed request has a binding");
    for op in input.ops.iter().take(16) {
        match op {
            Op::AsSent => assert!(sealer.open(&token, method, params, principal).is_ok()),
            Op::Tamper { at, byte } => {
                let mut bytes = token.clone().into_bytes();
                let at = at % bytes.len();
                bytes[at] = *byte;
                let Ok(t) = String::from_utf8(bytes) else {
                    continue;
                };
                if t != token {
                    assert!(
                        sealer.open(&t, method, params, principal).is_err(),
                        "a tampered state opened: {t:?}"
                    );
                }
            }
            Op::Cut { at } => {
                let t = &token[..at % token.len()];
                assert!(
                    sealer.open(t, method, params, principal).is_err(),
                    "a cut state opened"
                );
            }
            Op::Extend { tail } => {
                if !tail.is_empty() {
                    let t = format!("{token}{tail}");
                    assert!(
                        sealer.open(&t, method, params, principal).is_err(),
                        "an extended state opened: {t:?}"
                    );
                }
            }
            Op::Rebind(other) => {
                let (m2, p2, c2) = (
                    other.method.as_str(),
                    other.params.as_deref(),
                    other.principal.as_deref(),
                );
                let opened = sealer.open(&token, m2, p2, c2).is_ok();
                let same = StateSealer::digest(m2, p2, c2).as_deref() == Some(digest.as_str())
                    && m2 == method;
                assert_eq!(opened, same, "open disagrees with the binding");
                if same {
                    let (a, b) = (covered(params), covered(p2));
                    let equal_json = a.is_some() && a == b;
                    if !equal_json {
                        panic!("a state for params {params:?} opened for {p2:?}");
                    }
                    assert_eq!(principal, c2, "a state opened for another caller");
                }
            }
            Op::Forge { payload } => {
                let t = sealer.forge(payload);
                if let Ok(opened) = sealer.open(&t, method, params, principal) {
                    let v: Value =
                        serde_json::from_slice(payload).expect("an opened payload is JSON");
                    assert_eq!(
                        v["u"],
                        StateSealer::AUDIENCE,
                        "a forged state for another audience opened"
                    );
                    assert_eq!(v["m"], method, "a forged state for another method opened");
                    assert_eq!(
                        v["d"],
                        digest.as_str(),
                        "a forged state for other params opened"
                    );
                    assert!(
                        v["e"]
                            .as_u64()
                            .is_some_and(|e| e >= now().saturating_sub(1)),
                        "an expired state opened"
                    );
                    let _ = opened;
                }
            }
            Op::ForgeFields {
                same_audience,
                same_method,
                same_digest,
                expiry,
                answers,
            } => {
                let m = if *same_method {
                    method.to_owned()
                } else {
                    format!("{method}x")
                };
                let d = if *same_digest {
                    digest.clone()
                } else {
                    format!("{digest}x")
                };
                let a = answers
                    .as_deref()
                    .and_then(|a| serde_json::from_str::<Value>(a).ok())
                    .unwrap_or(Value::Object(Map::new()));
                let u = if *same_audience {
                    StateSealer::AUDIENCE.to_owned()
                } else {
                    format!("{}x", StateSealer::AUDIENCE)
                };
                let payload = serde_json::json!({"m": m, "d": d, "e": expiry, "u": u, "a": a});
                let t = sealer.forge(payload.to_string().as_bytes());
                let opened = sealer.open(&t, method, params, principal).is_ok();
                let t0 = now();
                let valid_shape = a.is_object();
                if opened {
                    assert!(
                        *same_audience && *same_method && *same_digest && valid_shape,
                        "a forged state opened: {payload}"
                    );
                    assert!(
                        *expiry >= t0.saturating_sub(1),
                        "an expired state opened: {payload}"
                    );
                } else if *same_audience
                    && *same_method
                    && *same_digest
                    && valid_shape
                    && *expiry > t0 + 60
                {
                    panic!("a valid forged state was refused: {payload}");
                }
            }
            Op::Raw(t) => {
                if *t != token {
                    assert!(
                        sealer.open(t, method, params, principal).is_err(),
                        "a made-up state opened: {t:?}"
                    );
                }
            }
        }
    }
});
