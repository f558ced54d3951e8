//! Tool arguments into the structs `#[tool]` generates (`common/tools.rs`), through the
//! dispatcher's `tools/call`, in the session era and 2026-07-28. Input: the first byte picks
//! the tool, the rest is the `arguments` JSON as sent (duplicates, escapes and all).
//! Asserts: the call is answered with valid JSON-RPC under its id; a JSON object of arguments
//! is accepted exactly when a plain serde struct with the same fields accepts it, and the
//! tool then got exactly those values (it echoes them as `structuredContent`); refused
//! arguments are a tool error (`isError`), not a protocol error; anything that is not an
//! object, `null` or absent is refused.
#![no_main]

#[path = "common/tools.rs"]
mod tools;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::{block_on, check_response};
use mcp_runtime::Server;
use mcp_runtime::fuzzing::{Harness, Sent};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

fn server() -> Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(tools::server).clone()
}

fn session() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let h = Harness::new(server());
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
        match h.send(init) {
            Sent::Reply(b) => assert!(check_response(&b).get("result").is_some()),
            _ => panic!("initialize is answered at once"),
        }
        let _ = h.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        h
    })
}

/// What a plain serde struct with the tool's fields makes of the arguments.
fn mirror<T: DeserializeOwned + Serialize>(text: &str) -> Result<Value, String> {
    serde_json::from_str::<T>(text)
        // Through bytes, as the response is: serde_json (without `float_roundtrip`) may read
        // a float it printed back 1 ULP off, on both sides alike.
        .map(|t| {
            let bytes = serde_json::to_vec(&t).expect("a mirror serializes");
            serde_json::from_slice(&bytes).expect("a mirror reads back")
        })
        .map_err(|e| e.to_string())
}

const TOOLS: [&str; 4] = ["primitives", "collections", "nested", "blocking"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(args) = std::str::from_utf8(rest) else {
        return;
    };
    // What a transport would pass on: one JSON value (else the envelope is a parse error).
    let Ok(raw) = serde_json::from_str::<&RawValue>(args) else {
        return;
    };
    let args = raw.get();
    let tool = TOOLS[usize::from(pick) % TOOLS.len()];
    let stateless = pick & 0x80 != 0;
    let meta = if stateless {
        r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
    } else {
        ""
    };
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{{"name":"{tool}","arguments":{args}{meta}}}}}"#
    );
    let h = session();
    let reply = match h.send(&msg) {
        Sent::Reply(b) => Some(b),
        Sent::Later(l) => block_on(l),
        Sent::Nothing => None,
    };
    let r = check_response(&reply.expect("tools/call is answered"));
    assert_eq!(r["id"], "call");
    let text = if args == "null" { "{}" } else { args };
    if !text.trim_start().starts_with('{') {
        // Not an object: invalid params (-32602, the bad-input corpus' case 17).
        assert_eq!(
            r["error"]["code"], -32602,
            "non-object arguments {args}: {r}"
        );
        return;
    }
    let result = r
        .get("result")
        .unwrap_or_else(|| panic!("arguments {args} gave a protocol error: {r}"));
    let is_error = result["isError"] == true;
    let want = match tool {
        "primitives" => mirror::<tools::MirrorPrimitives>(text),
        "collections" => mirror::<tools::MirrorCollections>(text),
        "nested" => mirror::<tools::MirrorNested>(text),
        _ => mirror::<tools::MirrorBlocking>(text),
    };
    match want {
        Ok(v) => {
            assert!(
                !is_error,
                "{tool}: serde accepts {args} but the tool refused it: {r}"
            );
            assert_eq!(
                result["structuredContent"], v,
                "{tool}: the tool got other values from {args}"
            );
        }
        Err(e) => assert!(
            is_error,
            "{tool}: serde refuses {args} ({e}) but the tool accepted it: {r}"
        ),
    }
});
