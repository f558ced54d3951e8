//! The dispatcher through an in-process connection, fed raw messages (one per line, batches
//! included) after an optional `initialize` chosen by the first byte. It asserts: every output
//! is valid JSON-RPC; a request gets at most one response, under its own id; a notification
//! none; a batch at most one response per element; what the server sends on its own is a
//! notification or request; every request finishes (no in-flight entry left behind) once
//! answered or cancelled; and the connection still answers a valid request afterwards.
#![no_main]

#[path = "common/tools.rs"]
mod tools;

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::{
    Expect, block_on, check_fits, check_outbound, check_response, check_response_value, expect_of,
};
use mcp_runtime::Server;
use mcp_runtime::fuzzing::{Harness, Later, Sent};
use serde_json::Value;
use serde_json::value::RawValue;

const VERSIONS: [Option<&str>; 5] = [
    None,
    Some("2025-11-25"),
    Some("2025-06-18"),
    Some("2025-03-26"),
    Some("2024-11-05"),
];

fn server() -> Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(tools::server).clone()
}

fn init(h: &Harness, version: &str) {
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"fuzz","version":"0"}}}}}}"#
    );
    let reply = match h.send(&msg) {
        Sent::Reply(b) => Some(b),
        Sent::Later(l) => block_on(l),
        Sent::Nothing => None,
    };
    let v = check_response(&reply.expect("initialize is answered"));
    assert!(v.get("result").is_some(), "initialize failed: {v}");
    assert!(matches!(
        h.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Sent::Nothing
    ));
}

/// One response's worth of checks for one line.
fn check_reply(line: &str, bytes: &[u8]) {
    if line.trim_start().starts_with('[') {
        let v: Value = serde_json::from_slice(bytes).expect("a batch answer is JSON");
        let Value::Array(responses) = v else {
            // The whole batch refused: one error response.
            check_response_value(&v);
            assert!(v.get("error").is_some(), "a refused batch is an error: {v}");
            return;
        };
        let items: Vec<&RawValue> =
            serde_json::from_str(line).expect("the dispatcher answered it as a batch");
        let expects: Vec<Expect> = items.iter().map(|i| expect_of(i.get())).collect();
        let answerable = expects
            .iter()
            .filter(|e| !matches!(e, Expect::Notification))
            .count();
        assert!(
            !responses.is_empty(),
            "an empty batch answer is sent as nothing: {line:?}"
        );
        assert!(
            responses.len() <= answerable,
            "more responses than requests in a batch: {line:?} -> {responses:?}"
        );
        for r in &responses {
            check_response_value(r);
        }
        // Each id: no more responses under it than elements that hold it.
        for r in &responses {
            let id = &r["id"];
            if id.is_null() {
                continue;
            }
            let holders = expects
                .iter()
                .filter(|e| match e {
                    Expect::Request(want) => want == id,
                    Expect::Other(ids) => ids.contains(id),
                    Expect::Notification => false,
                })
                .count();
            let got = responses.iter().filter(|x| &x["id"] == id).count();
            assert!(
                got <= holders,
                "{got} responses for id {id} held by {holders} elements: {line:?}"
            );
        }
        return;
    }
    let v = check_response(bytes);
    check_fits(&expect_of(line), &v, line);
}

/// `fragile` panics on purpose and the runtime catches it: only that panic is let through
/// (libFuzzer's hook aborts on every panic, caught or not).
fn allow_planned_panics() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let planned = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|m| m.contains("on purpose"));
            if !planned {
                previous(info);
            }
        }));
    });
}

fuzz_target!(|data: &[u8]| {
    allow_planned_panics();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let h = Harness::new(server());
    if let Some(version) = VERSIONS[usize::from(mode) % VERSIONS.len()] {
        init(&h, version);
    }
    let mut later: Vec<(String, Later)> = Vec::new();
    for line in text.split('\n') {
        match h.send(line) {
            Sent::Reply(bytes) => check_reply(line, &bytes),
            Sent::Later(l) => later.push((line.to_owned(), l)),
            Sent::Nothing => {
                if let Expect::Request(id) = expect_of(line) {
                    panic!("a well-formed request (id {id}) got nothing: {line:?}");
                }
            }
        }
    }
    // The requests that run as tasks, concurrently, as a transport runs them.
    let cancelled_somewhere = text.contains("cancel");
    let results = block_on(async {
        let tasks: Vec<_> = later
            .into_iter()
            .map(|(line, l)| (line, tokio::spawn(l)))
            .collect();
        let mut out = Vec::new();
        for (line, task) in tasks {
            let done = match tokio::time::timeout(Duration::from_secs(5), task).await {
                Ok(joined) => joined.expect("a request task does not panic"),
                Err(_) => panic!("a request did not finish within 5 s: {line:?}"),
            };
            out.push((line, done));
        }
        out
    });
    for (line, reply) in results {
        match reply {
            Some(bytes) => check_reply(&line, &bytes),
            None => assert!(
                cancelled_somewhere || !matches!(expect_of(&line), Expect::Request(_)),
                "a request that nobody cancelled finished without a response: {line:?}"
            ),
        }
    }
    for out in h.take_outbound() {
        check_outbound(&out);
    }
    assert_eq!(
        h.in_flight(),
        0,
        "requests left in flight after all were answered"
    );
    // The connection still serves: a 2026-07-28 request needs no session.
    let probe = r#"{"jsonrpc":"2.0","id":"probe","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = match h.send(probe) {
        Sent::Reply(b) => Some(b),
        Sent::Later(l) => block_on(l),
        Sent::Nothing => None,
    };
    let v = check_response(&reply.expect("the probe is answered"));
    assert!(
        v.get("result").is_some(),
        "the connection no longer serves after {text:?}: {v}"
    );
});
