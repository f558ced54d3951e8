//! CORS (issue #14, browsers): the ticket desk serves HTTP with one listed browser origin
//! (`MCP_ALLOWED_ORIGINS`), and raw requests check what a browser would read: preflights on
//! every route, the CORS headers on every kind of answer, and nothing for any other origin.

mod support;

use serde_json::json;
use support::http::{HttpServer, Req, Response, initialize_request, rpc};

const APP: &str = "https://app.example.com";

fn desk(origins: Option<&str>) -> HttpServer {
    let db = std::env::temp_dir().join(format!("http-cors-{}.sqlite3", std::process::id()));
    let mut env = vec![("TICKETS_DB", db.to_str().unwrap().to_owned())];
    if let Some(o) = origins {
        env.push(("MCP_ALLOWED_ORIGINS", o.to_owned()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    HttpServer::start_with_env(&support::example("tickets"), &env)
}

fn preflight(path: &str, origin: &str, headers: &str) -> Req {
    Req::new("OPTIONS", path)
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", headers)
}

/// No `Access-Control-*` header at all.
fn assert_no_cors(r: &Response) {
    let cors: Vec<_> = r
        .head
        .headers
        .iter()
        .filter(|(n, _)| n.to_ascii_lowercase().starts_with("access-control-"))
        .collect();
    assert!(
        cors.is_empty(),
        "CORS headers for an origin not listed: {r}"
    );
}

/// What a script from [`APP`] needs to read a response.
fn assert_readable(r: &Response) {
    assert_eq!(r.header("access-control-allow-origin"), Some(APP), "{r}");
    assert!(
        r.head
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("vary") && v.contains("Origin")),
        "no Vary: Origin: {r}"
    );
    let exposed = r.header("access-control-expose-headers").unwrap_or("");
    for name in ["Mcp-Session-Id", "WWW-Authenticate", "MCP-Protocol-Version"] {
        assert!(exposed.contains(name), "{name} not exposed: {r}");
    }
    assert_eq!(r.header("access-control-allow-credentials"), None, "{r}");
}

#[test]
fn a_preflight_from_a_listed_origin_names_what_may_be_sent() {
    let server = desk(Some(APP));
    for path in ["/mcp", "/mcp/", "/sse", "/messages"] {
        let r = server.send(&preflight(
            path,
            APP,
            "content-type, mcp-session-id, MCP-Protocol-Version, authorization, Mcp-Param-Region",
        ));
        assert_eq!(r.status(), 204, "{path}: {r}");
        assert_eq!(r.header("access-control-allow-origin"), Some(APP), "{r}");
        assert_eq!(r.header("vary"), Some("Origin"), "{r}");
        let methods = r.header("access-control-allow-methods").unwrap_or("");
        for m in ["GET", "POST", "DELETE", "OPTIONS"] {
            assert!(methods.contains(m), "{m} missing: {r}");
        }
        let headers = r
            .header("access-control-allow-headers")
            .unwrap_or("")
            .to_ascii_lowercase();
        for h in [
            "content-type",
            "accept",
            "authorization",
            "mcp-session-id",
            "mcp-protocol-version",
            "last-event-id",
            "mcp-method",
            "mcp-name",
            "mcp-param-region",
        ] {
            assert!(headers.contains(h), "{h} missing: {r}");
        }
        assert!(r.header("access-control-max-age").is_some(), "{r}");
        assert_eq!(r.header("access-control-allow-credentials"), None, "{r}");
        assert!(r.body.is_empty(), "{r}");
    }
}

#[test]
fn a_preflight_for_a_header_or_method_the_endpoint_never_reads_is_refused() {
    let server = desk(Some(APP));
    let r = server.send(&preflight("/mcp", APP, "content-type, x-evil"));
    assert_eq!(r.status(), 403, "{r}");
    assert!(
        r.text().contains("x-evil"),
        "the refusal names the header: {r}"
    );
    assert_no_cors(&r);
    let r = server.send(
        &Req::new("OPTIONS", "/mcp")
            .header("Origin", APP)
            .header("Access-Control-Request-Method", "PUT"),
    );
    assert_eq!(r.status(), 403, "{r}");
    assert_no_cors(&r);
}

#[test]
fn every_answer_to_a_listed_origin_is_readable() {
    let server = desk(Some(APP));
    let origin = [("Origin", APP)];
    // 200 with a session, as JSON or SSE.
    let r = server.post(&initialize_request("2025-11-25"), &origin);
    assert_eq!(r.status(), 200, "{r}");
    assert_readable(&r);
    let session = r.header("mcp-session-id").unwrap().to_owned();
    // 400 (no session), 404 (unknown session), 405, and the 2026-07-28 path.
    let r = server.post(&rpc(2, "tools/list", json!({})), &origin);
    assert_eq!(r.status(), 400, "{r}");
    assert_readable(&r);
    let r = server.post(
        &rpc(2, "tools/list", json!({})),
        &[("Origin", APP), ("Mcp-Session-Id", "0000")],
    );
    assert_eq!(r.status(), 404, "{r}");
    assert_readable(&r);
    let r = server.send(&Req::new("PUT", "/mcp").header("Origin", APP));
    assert_eq!(r.status(), 405, "{r}");
    assert_readable(&r);
    // The session's SSE stream: the headers are there before the first event.
    let stream = server.open_stream(
        &Req::get("/mcp")
            .header("Origin", APP)
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", "2025-11-25"),
    );
    assert_eq!(stream.head.status, 200, "{}", stream.head);
    assert_eq!(
        stream.head.header("access-control-allow-origin"),
        Some(APP),
        "{}",
        stream.head
    );
}

#[test]
fn other_origins_get_403_and_no_cors() {
    let server = desk(Some(APP));
    for origin in [
        "https://evil.example.com",
        "https://app.example.com.evil.example",
    ] {
        let r = server.send(&preflight("/mcp", origin, "content-type"));
        assert_eq!(r.status(), 403, "{r}");
        assert_no_cors(&r);
        let r = server.post(&initialize_request("2025-11-25"), &[("Origin", origin)]);
        assert_eq!(r.status(), 403, "{r}");
        assert_no_cors(&r);
    }
    // A loopback origin passes the Origin check, as before, but is not a CORS origin unless
    // listed: its script cannot read the answer.
    let r = server.post(
        &initialize_request("2025-11-25"),
        &[("Origin", "http://localhost:3000")],
    );
    assert_eq!(r.status(), 200, "{r}");
    assert_no_cors(&r);
    let r = server.send(&preflight("/mcp", "http://localhost:3000", "content-type"));
    assert_eq!(r.status(), 405, "{r}");
    assert_no_cors(&r);
}

#[test]
fn cors_is_off_unless_origins_are_configured() {
    let server = desk(None);
    let r = server.send(&preflight("/mcp", APP, "content-type"));
    assert_eq!(r.status(), 403, "{r}");
    assert_no_cors(&r);
    let r = server.post(&initialize_request("2025-11-25"), &[]);
    assert_eq!(r.status(), 200, "{r}");
    assert_no_cors(&r);
    assert_eq!(r.header("vary"), None, "{r}");
}

#[test]
fn a_malformed_origin_list_is_a_clear_start_up_error() {
    let out = std::process::Command::new(support::example("tickets"))
        .args(["--http", "127.0.0.1:0"])
        .env(
            "MCP_ALLOWED_ORIGINS",
            "https://ok.example.com, app.example.com",
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("MCP_ALLOWED_ORIGINS") && stderr.contains("\"app.example.com\""),
        "{stderr}"
    );
}
