//! The JSON-RPC envelope decoder every transport calls first (`server/envelope.rs`), on any
//! UTF-8 text, single messages and each element of a batch, against a strict reference reader:
//! exact member names (no case folding, no `"method\u0000"`), duplicates refused, `params`
//! kept as sent, the right kind of message, and only -32700/-32600 for what does not decode
//! (-32602 for object params whose `_meta` does not read).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::Members;
use mcp_runtime::fuzzing::{Decoded, decode};
use mcp_runtime::protocol::RequestId;
use serde_json::Value;
use serde_json::value::RawValue;

fn id_value(id: &RequestId) -> Value {
    serde_json::to_value(id).expect("an id serializes")
}

fn check(text: &str) {
    let decoded = decode(text);
    let members = Members::of(text);
    match (&decoded, &members) {
        (Decoded::Error { code, .. }, _) => {
            // -32602 only for a request whose object params may carry a `_meta` the decoder
            // cannot read as one (a string, a repeated `_meta`): the era is decided by it.
            let meta_params = members
                .as_ref()
                .and_then(|m| m.one("params"))
                .is_some_and(|p| {
                    let p = p.get();
                    p.starts_with('{') && (p.contains("_meta") || p.contains("\\u"))
                });
            assert!(
                *code == -32700 || *code == -32600 || (*code == -32602 && meta_params),
                "decode error code {code} for {text:?}"
            );
        }
        (_, None) => panic!("decoded a non-object: {text:?} -> {decoded:?}"),
        (_, Some(m)) => {
            assert!(
                !m.has_duplicates(),
                "decoded despite duplicate members: {text:?}"
            );
            assert_eq!(m.value("jsonrpc"), Some(Value::from("2.0")), "{text:?}");
        }
    }
    let Some(m) = members else { return };
    match decoded {
        Decoded::Request {
            id, method, params, ..
        } => {
            assert_eq!(m.value("id"), Some(id_value(&id)), "id of {text:?}");
            assert_eq!(
                m.value("method"),
                Some(Value::from(method)),
                "method of {text:?}"
            );
            assert_eq!(
                m.one("params")
                    .filter(|p| p.get() != "null")
                    .map(|p| p.get().to_owned()),
                params,
                "params of {text:?}"
            );
            assert!(
                m.present("result").is_empty() && m.present("error").is_empty(),
                "{text:?}"
            );
        }
        Decoded::Notification { method, params } => {
            assert!(
                m.all("id").is_empty(),
                "a notification with an id: {text:?}"
            );
            assert_eq!(
                m.value("method"),
                Some(Value::from(method)),
                "method of {text:?}"
            );
            assert_eq!(
                m.one("params")
                    .filter(|p| p.get() != "null")
                    .map(|p| p.get().to_owned()),
                params,
                "params of {text:?}"
            );
        }
        Decoded::Response { id, ok } => {
            assert!(m.present("method").is_empty(), "{text:?}");
            assert_eq!(m.value("id"), Some(id_value(&id)), "id of {text:?}");
            assert_eq!(m.present("result").len(), usize::from(ok), "{text:?}");
            assert_eq!(m.present("error").len(), usize::from(!ok), "{text:?}");
        }
        Decoded::Error {
            id, notification, ..
        } => {
            if notification {
                assert!(
                    m.all("id").is_empty(),
                    "an error for a message with an id is answered: {text:?}"
                );
            }
            if let Some(id) = id {
                assert!(
                    m.all("id").iter().any(|r| serde_json::from_str::<Value>(r.get()).ok() == Some(id_value(&id))),
                    "error under an id the message does not hold: {text:?}"
                );
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Transports refuse what is not UTF-8 before decoding.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check(text);
    // A batch is taken apart by the dispatcher and each element decoded alone.
    if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) {
        for item in items {
            check(item.get());
        }
    }
});
