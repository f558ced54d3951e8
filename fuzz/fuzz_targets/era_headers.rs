//! The 2026-07-28 checks a POST goes through before dispatch (`transport/http/stateless.rs`:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` against the body, with
//! `=?base64?…?=` values) and era resolution from `_meta` (`server/era.rs`), then the stateless
//! connection itself. Input: header lines `name: value`, a blank line, the body.
//! Asserts: headers that pass agree with the body; the era is 2026-07-28 exactly when the
//! version is, with or without a session; errors are JSON-RPC errors under the request's id;
//! a request that passes is answered with valid JSON-RPC under its id.
#![no_main]

#[path = "common/tools.rs"]
mod tools;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::{Members, block_on, check_response};
use mcp_runtime::fuzzing::{Sent, StatelessConn, stateless_checks, stateless_dispatch};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::Value;

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(tools::server)
}

fn conn() -> &'static StatelessConn {
    static CONN: OnceLock<StatelessConn> = OnceLock::new();
    CONN.get_or_init(|| StatelessConn::new(server().clone()))
}

/// A header as the check reads it: the first value that `http` accepts, if visible ASCII;
/// base64 forms are left to the runtime (compared only in plain form here).
fn header(headers: &[(Vec<u8>, Vec<u8>)], name: &str) -> Option<String> {
    use mcp_runtime::http::{HeaderName, HeaderValue};
    let (_, raw) = headers.iter().find(|(n, v)| {
        HeaderName::from_bytes(n).is_ok_and(|n| n.as_str() == name)
            && HeaderValue::from_bytes(v).is_ok()
    })?;
    let raw = HeaderValue::from_bytes(raw).ok()?.to_str().ok()?.to_owned();
    (!raw.starts_with("=?base64?")).then_some(raw)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (head, body) = text.split_once("\n\n").unwrap_or(("", text));
    let headers: Vec<(Vec<u8>, Vec<u8>)> = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().as_bytes().to_vec(), v.trim().as_bytes().to_vec()))
        .collect();
    let Some(checks) = stateless_checks(server(), &headers, body) else {
        return;
    };
    // The version alone, as the runtime reads it: other members, of params and of `_meta`,
    // are skipped unparsed (a `1e999` in `arguments`, or an unknown `_meta` key holding
    // `5e444…`, must not hide the version from this oracle).
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
        version: Option<Value>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    let version = Members::of(body)
        .and_then(|m| m.one("params").map(|p| p.get().to_owned()))
        .and_then(|p| serde_json::from_str::<Params>(&p).ok())
        .and_then(|p| p.meta)
        .and_then(|m| m.version);
    let id = Members::of(body)
        .and_then(|m| m.value("id"))
        .expect("a request has an id");
    if checks.headers.is_ok() {
        // A valid `http` header map keeps only visible ASCII in what `header` reads.
        let plain_ok =
            |name: &str, want: &str| header(&headers, name).is_none_or(|got| got == want);
        assert!(
            plain_ok("mcp-method", &checks.method),
            "Mcp-Method disagrees with {body:?} but passed"
        );
        if let Some(Value::String(v)) = &version {
            assert!(
                plain_ok("mcp-protocol-version", v),
                "MCP-Protocol-Version disagrees with {body:?} but passed"
            );
        }
    } else {
        assert_eq!(checks.headers, Err(-32020), "header errors are -32020");
    }
    assert_eq!(
        checks.era.is_ok(),
        checks.era_in_session.is_ok(),
        "a session changed a 2026-07-28 request's era: {body:?}"
    );
    for era in [&checks.era, &checks.era_in_session] {
        match era {
            Ok(v) => {
                assert_eq!(*v, ProtocolVersion::V2026_07_28, "{body:?}");
                assert_eq!(
                    version.as_ref().and_then(Value::as_str),
                    Some(v.as_str()),
                    "{body:?}"
                );
            }
            Err(bytes) => {
                let r = check_response(bytes);
                assert_eq!(r["id"], id, "an era error under another id: {body:?}");
                assert!(r.get("error").is_some(), "{r}");
            }
        }
    }
    if checks.headers.is_ok() && checks.era.is_ok() {
        let reply = match stateless_dispatch(conn(), &headers, body) {
            Sent::Reply(b) => Some(b),
            Sent::Later(l) => block_on(l),
            Sent::Nothing => None,
        };
        let r = check_response(&reply.expect("a stateless request is answered"));
        assert_eq!(r["id"], id, "answered under another id: {body:?}");
    }
});
