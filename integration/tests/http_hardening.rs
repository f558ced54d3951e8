//! Holes an audit found in the Streamable HTTP entry (issue #11 §1), each pinned by a raw
//! HTTP/1.1 request against the conformance example: the 2026-07-28 header checks cannot be
//! skipped by spelling the body differently (escaped keys, numbers or nesting serde_json
//! refuses), and the headers they read cannot be sent twice.

mod support;

use serde_json::{Value, json};
use support::http::{HttpServer, Req, Response, rpc, stateless_meta};

fn conformance() -> HttpServer {
    HttpServer::start("conformance")
}

fn stateless_headers(method: &str, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = name {
        h.push(("Mcp-Name", name.to_owned()));
    }
    h
}

fn post_raw(server: &HttpServer, body: &str, headers: &[(&str, String)]) -> Response {
    let mut req = Req::post("/mcp").body(body.to_owned());
    for (n, v) in headers {
        req = req.header(n, v);
    }
    server.send(&req)
}

fn assert_refused(r: &Response, code: i64) {
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), code, "{r}");
}

/// A `tools/call` of the echo-free tool `test_simple_text`, as raw JSON with `meta` spliced in.
fn tools_call_with(meta_key: &str, extra: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"{meta_key}":{meta},"name":"test_simple_text","arguments":{{}}{extra}}}}}"#,
        meta = stateless_meta()
    )
}

/// An escaped `/` in the protocol-version key still makes the request 2026-07-28, so its
/// headers are checked: `Mcp-Method: tools/list` on a `tools/call` body is refused.
#[test]
fn an_escaped_meta_key_does_not_skip_the_header_checks() {
    let server = conformance();
    let meta = r#"{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol\/clientCapabilities":{}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{meta},"name":"test_simple_text","arguments":{{}}}}}}"#
    );
    let r = post_raw(&server, &body, &stateless_headers("tools/list", None));
    assert_refused(&r, -32020);
    let r = post_raw(
        &server,
        &body,
        &stateless_headers("tools/call", Some("test_simple_text")),
    );
    assert_eq!(r.status(), 200, "{r}");
    assert_eq!(r.json()["result"]["resultType"], "complete", "{r}");
}

/// `_meta` spelled with a `\u` escape is `_meta` to serde_json, so the request is 2026-07-28
/// (and its headers checked), not a session-era request without a session.
#[test]
fn a_unicode_escaped_meta_member_is_meta() {
    let server = conformance();
    let body = tools_call_with(r"_m\u0065ta", "");
    let r = post_raw(&server, &body, &stateless_headers("tools/list", None));
    assert_refused(&r, -32020);
    let r = post_raw(
        &server,
        &body,
        &stateless_headers("tools/call", Some("test_simple_text")),
    );
    assert_eq!(r.status(), 200, "{r}");
}

/// A `uri` serde_json cannot read (`1e400`) never reaches the checks as a request without a
/// URI: the one decode cannot read the params, so the request is refused outright (-32700).
#[test]
fn an_unreadable_uri_is_refused_before_the_header_checks() {
    let server = conformance();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"_meta":{},"uri":1e400}}}}"#,
        stateless_meta()
    );
    let r = post_raw(
        &server,
        &body,
        &stateless_headers("resources/read", Some("test://static-text")),
    );
    assert_refused(&r, -32700);
}

/// Params with members serde_json will not read as values (`1e400`, nesting past its depth
/// limit) still have their headers checked. Where such a member is one nobody reads (`pad`),
/// every reader skips it alike and the request is served; in `name` the request is refused
/// before any check (-32700 for a number serde_json cannot read, -32602 for a `name` that is
/// not a string), never served as if it named nothing; in `_meta` the request is refused
/// (-32700: serde_json cannot read it), never served as if it had no `_meta`.
#[test]
fn params_serde_json_balks_at_still_have_their_headers_checked() {
    let server = conformance();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let good = stateless_headers("tools/call", Some("test_simple_text"));
    for bad in ["1e400", deep.as_str()] {
        let body = tools_call_with("_meta", &format!(r#","pad":{bad}"#));
        let r = post_raw(&server, &body, &stateless_headers("tools/list", None));
        assert_eq!(r.status(), 400, "{r}");
        assert_eq!(r.error_code(), -32020, "{r}");
        assert_eq!(post_raw(&server, &body, &good).status(), 200);

        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{},"name":{bad}}}}}"#,
            stateless_meta()
        );
        let r = post_raw(&server, &body, &good);
        if bad == "1e400" {
            assert_refused(&r, -32700);
        } else {
            assert_eq!(r.error_code(), -32602, "{r}");
        }
        assert!(r.json()["result"].is_null(), "{r}");

        let meta = format!(
            r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"x":{bad}}}}}"#
        );
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{meta},"name":"test_simple_text"}}}}"#
        );
        let r = post_raw(&server, &body, &good);
        assert_eq!(r.status(), 400, "{r}");
        assert_eq!(r.error_code(), -32700, "{r}");
        assert!(r.json()["result"].is_null(), "{r}");
    }
}

/// Arguments serde_json cannot read as values do not hide an `x-mcp-header` argument from
/// its `Mcp-Param-*` check: the tool never runs without the matching header.
#[test]
fn unreadable_arguments_do_not_skip_the_param_headers() {
    let server = conformance();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{},"name":"test_custom_header","arguments":{{"value":"x","pad":1e400}}}}}}"#,
        stateless_meta()
    );
    let r = post_raw(
        &server,
        &body,
        &stateless_headers("tools/call", Some("test_custom_header")),
    );
    assert_eq!(r.status(), 400, "no Mcp-Param-Value header: {r}");
    assert!(r.json()["result"].is_null(), "the tool ran: {r}");
}

/// `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` sent twice are refused, whichever copy
/// agrees with the body (two hops could each read a different one).
#[test]
fn repeated_mcp_headers_are_refused() {
    let server = conformance();
    let body = rpc(
        1,
        "tools/call",
        json!({"_meta": stateless_meta(), "name": "test_simple_text", "arguments": {}}),
    );
    let good = stateless_headers("tools/call", Some("test_simple_text"));
    let send = |name: &str, other: &str| {
        let mut req = Req::post("/mcp").json(&body);
        for (n, v) in &good {
            req = req.header(n, v);
        }
        server.send(&req.also(name, other))
    };
    let ok = server.send(
        &good
            .iter()
            .fold(Req::post("/mcp").json(&body), |r, (n, v)| r.header(n, v)),
    );
    assert_eq!(ok.status(), 200, "{ok}");
    for (name, other) in [
        ("Mcp-Method", "tools/list"),
        ("Mcp-Name", "test_error_handling"),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Method", "tools/call"),
    ] {
        let r = send(name, other);
        assert_eq!(r.status(), 400, "{name} twice: {r}");
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("repeated")),
            "{name} twice: {r}"
        );
    }
    // A session id twice, in the session era.
    let session = server.open_session();
    let r = server.send(
        &Req::post("/mcp")
            .json(&rpc(2, "tools/list", json!({})))
            .header("Mcp-Session-Id", &session)
            .also("Mcp-Session-Id", "other")
            .header("MCP-Protocol-Version", "2025-11-25"),
    );
    assert_eq!(r.status(), 400, "Mcp-Session-Id twice: {r}");
}

/// `Host` or `Origin` sent twice is refused before anything else, even when one copy is
/// loopback.
#[test]
fn repeated_host_or_origin_is_403() {
    let server = conformance();
    let authority = server.authority();
    for (name, first, second) in [
        ("Host", authority.as_str(), "evil.example"),
        ("Origin", "http://localhost", "http://evil.example"),
    ] {
        let r = server.send(
            &Req::post("/mcp")
                .json(&rpc(
                    1,
                    "server/discover",
                    json!({"_meta": stateless_meta()}),
                ))
                .header(name, first)
                .also(name, second),
        );
        assert_eq!(r.status(), 403, "{name} twice: {r}");
    }
    let _: Value = json!(null);
}

/// The legacy HTTP+SSE transport sent each response from a task of its own that waited for
/// room on the session's stream: a client that opened `GET /sse`, stopped reading, and kept
/// posting `tools/call` grew the server's memory without bound (a waiting task and a response
/// per POST). Now a response that finds the stream full ends the session: later POSTs are 404.
#[test]
fn a_legacy_client_that_stops_reading_loses_its_session() {
    use std::io::{Read, Write};
    let server = conformance();
    let mut sse = std::net::TcpStream::connect(server.authority()).unwrap();
    write!(
        sse,
        "GET /sse HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
        server.authority()
    )
    .unwrap();
    // Read up to the `endpoint` event, then never again.
    let mut seen = Vec::new();
    let endpoint = loop {
        let mut buf = [0u8; 512];
        let n = sse.read(&mut buf).unwrap();
        assert!(n > 0, "the stream closed early");
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen);
        if let Some(rest) = text.split("data: /messages").nth(1)
            && let Some(query) = rest.split('\n').next()
        {
            break format!("/messages{}", query.trim_end());
        }
    };
    let post = |body: &Value| server.send(&Req::post(&endpoint).json(body));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "slow", "version": "0"}}});
    assert_eq!(post(&init).status(), 202);
    assert_eq!(
        post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).status(),
        202
    );
    // Each result echoes 16 KiB: the socket buffers (a few MiB) and the stream's 256 slots
    // fill after a few hundred calls.
    let value = "x".repeat(16 * 1024);
    let mut ended_after = None;
    for i in 1..=4000 {
        let call = rpc(
            i,
            "tools/call",
            json!({"name": "test_custom_header", "arguments": {"value": value}}),
        );
        let r = post(&call);
        if r.status() == 404 {
            ended_after = Some(i);
            eprintln!("session ended after {i} calls");
            break;
        }
        assert_eq!(r.status(), 202, "{r}");
    }
    assert!(
        ended_after.is_some(),
        "4000 calls posted to a session whose client reads nothing, all accepted"
    );
    server.assert_still_serving();
    drop(sse);
}

/// A legacy POST that is not UTF-8 is a parse error, not decoded lossily.
#[test]
fn a_legacy_post_that_is_not_utf8_is_a_parse_error() {
    let server = conformance();
    let mut sse = server.open_stream(&Req::get("/sse").header("Accept", "text/event-stream"));
    let endpoint = loop {
        let event = sse.expect_event("the endpoint event");
        if event.event.as_deref() == Some("endpoint") {
            break event.data;
        }
    };
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
    body.extend_from_slice(&[0xC3, 0x28]);
    body.extend_from_slice(br#""}}"#);
    let r = server.send(&Req::post(&endpoint).body(body));
    assert_eq!(r.status(), 400, "{r}");
    assert_eq!(r.error_code(), -32700, "{r}");
}

/// HTTP/2 (cleartext, prior knowledge) had no limits of its own: hyper's HTTP/1 header timeout
/// does not apply to it. The server now pings HTTP/2 peers (every 30 s, 20 s to answer: not
/// waited for here) and bounds the requests one connection multiplexes, which its first
/// SETTINGS frame announces: SETTINGS_MAX_CONCURRENT_STREAMS = 256.
#[test]
fn http2_connections_announce_a_stream_limit() {
    use std::io::{Read, Write};
    let server = conformance();
    let mut conn = std::net::TcpStream::connect(server.authority()).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    conn.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    // An empty SETTINGS frame: length 0, type 4, no flags, stream 0.
    conn.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    let mut head = [0u8; 9];
    conn.read_exact(&mut head).unwrap();
    assert_eq!(head[3], 4, "the server's first frame is SETTINGS: {head:?}");
    let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let mut payload = vec![0u8; len];
    conn.read_exact(&mut payload).unwrap();
    let settings: Vec<(u16, u32)> = payload
        .chunks_exact(6)
        .map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
        .collect();
    assert!(
        settings.contains(&(0x3, 256)),
        "no SETTINGS_MAX_CONCURRENT_STREAMS of 256: {settings:?}"
    );
}
