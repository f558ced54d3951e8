//! The differential between what the checks read and what the dispatcher runs: a request's
//! params (any text, padded with members serde_json's value parser refuses, deep nesting,
//! escapes, repeated members) are decoded as every transport decodes them, and the targets
//! the scope checks read (`fuzzing::decode`, the same `Request::targets` the HTTP scope check
//! calls) are compared with what the dispatcher then runs on an initialized connection.
//! Asserts: a tool or prompt that runs is one the decoded request names, under the lookup
//! the scope check used; a request whose params do not decode, or do not fit the method,
//! runs nothing.
//! Input: one byte choosing the method and protocol era, then the params text.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::block_on;
use mcp_runtime::Server;
use mcp_runtime::fuzzing::{Decoded, Harness, Sent, decode};
use mcp_runtime::prelude::*;

/// What ran: `(lookup, name)` as the scope check names it.
static RAN: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());

fn ran(what: (&'static str, &'static str)) {
    RAN.lock().unwrap().push(what);
}

/// A tool the checks must see.
#[tool]
async fn alpha(n: Option<i64>) -> String {
    ran(("tools/call", "alpha"));
    format!("{n:?}")
}

/// Another, to tell them apart.
#[tool]
async fn beta() -> String {
    ran(("tools/call", "beta"));
    "b".into()
}

/// A prompt.
#[prompt]
fn gamma(topic: Option<String>) -> String {
    ran(("prompts/get", "gamma"));
    topic.unwrap_or_default()
}

/// A resource template.
#[resource("notes://{id}")]
fn note(id: String) -> String {
    ran(("resources/read", "notes://"));
    id
}

const METHODS: [&str; 4] = [
    "tools/call",
    "prompts/get",
    "resources/read",
    "completion/complete",
];

fn harness(version: &str) -> Harness {
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER
        .get_or_init(|| Server::builder().name("fuzz").build().expect("a server"))
        .clone();
    let h = Harness::new(server);
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}}}}}}"#
    );
    match h.send(&init) {
        Sent::Reply(_) => {}
        _ => panic!("initialize is answered at once"),
    }
    h
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(params) = std::str::from_utf8(rest) else {
        return;
    };
    let method = METHODS[usize::from(choice) % METHODS.len()];
    let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
    let checked = decode(&text);
    let h = harness(if choice & 0x80 == 0 {
        "2025-11-25"
    } else {
        "2025-03-26"
    });
    RAN.lock().unwrap().clear();
    let reply = match h.send(&text) {
        Sent::Reply(r) => Some(r),
        Sent::Later(later) => block_on(later),
        Sent::Nothing => None,
    };
    let ran = std::mem::take(&mut *RAN.lock().unwrap());
    match checked {
        Decoded::Request {
            invalid: false,
            targets,
            ..
        } => {
            for (lookup, name) in ran {
                let seen = targets.iter().any(|(l, t)| {
                    l == lookup
                        && (t == name || (lookup == "resources/read" && t.starts_with(name)))
                });
                assert!(
                    seen,
                    "{lookup} {name} ran, but the checks saw {targets:?} in {text:?}"
                );
            }
        }
        other => assert!(
            ran.is_empty(),
            "{ran:?} ran for a request the decode refused ({other:?}): {text:?} -> {reply:?}"
        ),
    }
});
