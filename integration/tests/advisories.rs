//! One regression test per published advisory or incident that applies to an MCP server
//! framework (the research notes, `reliability-security.md` §1). Each test is named after the
//! advisory, says in its doc comment what went wrong upstream and what we assert, and drives a
//! real server: an example binary over stdio or raw HTTP/1.1, or, where the test needs tools of
//! its own (a panicking handler, a chatty one), a server built in this process with a real
//! listener. SECURITY.md lists the advisories, the tests and their status.

mod support;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::transport::http::EventFuture;
use mcp_runtime::transport::{EventStore, HttpConfig, MemoryEventStore, serve_http_on};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};
use support::Proc;
use support::http::{
    Endpoint, HttpServer, Req, SseStream, TIMEOUT, initialize_request, notification, rpc,
    stateless_meta,
};

// ---------------------------------------------------------------------------------------------
// Tools, resources and prompts of the in-process servers
// ---------------------------------------------------------------------------------------------

/// Reports progress with `tag` as the message, waits `ms`, reports again, answers `tag`.
#[tool]
async fn tagged(tag: String, ms: u64, ctx: Context) -> String {
    ctx.progress(1.0, Some(2.0), Some(&tag));
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ctx.progress(2.0, Some(2.0), Some(&tag));
    tag
}

/// A name to greet.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Who {
    name: String,
}

/// Asks the client for a name, then greets it.
#[tool]
async fn ask_name(ctx: Context) -> Result<String, McpError> {
    let answer = ctx.elicit::<Who>("Who are you?").await?;
    Ok(format!(
        "Hi {}",
        answer.accepted().map_or("?".into(), |w| w.name)
    ))
}

/// How many `chatter` calls are running.
static CHATTERING: AtomicUsize = AtomicUsize::new(0);

struct Chattering;

impl Chattering {
    fn start() -> Chattering {
        CHATTERING.fetch_add(1, Ordering::SeqCst);
        Chattering
    }
}

impl Drop for Chattering {
    fn drop(&mut self) {
        CHATTERING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reports progress 40 times, 10 ms apart, then answers.
#[tool]
async fn chatter(ctx: Context) -> &'static str {
    let _running = Chattering::start();
    for step in 0..40 {
        ctx.progress(f64::from(step), Some(40.0), Some("still going"));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    "done chattering"
}

/// Panics before its first `.await`.
#[tool]
async fn panic_now() -> String {
    panic!("panic_now: a bug in a tool")
}

/// Panics after an `.await`.
#[tool]
async fn panic_later() -> String {
    tokio::time::sleep(Duration::from_millis(1)).await;
    panic!("panic_later: a bug in a tool")
}

/// A sync tool that panics (it runs on the blocking pool).
#[tool]
fn panic_sync() -> String {
    panic!("panic_sync: a bug in a tool")
}

/// A resource whose handler panics.
#[resource("panic://resource")]
fn panic_resource() -> String {
    panic!("panic_resource: a bug in a resource")
}

/// A prompt whose handler panics.
#[prompt]
fn panic_prompt() -> String {
    panic!("panic_prompt: a bug in a prompt")
}

/// An exploded path-segment variable (the CVE-2026-0621 pattern).
#[resource("redos://a{/id*}")]
fn redos_path(id: String) -> String {
    id
}

/// An exploded simple variable.
#[resource("redos://b/{id*}")]
fn redos_simple(id: String) -> String {
    id
}

/// A reserved variable that may span slashes, then a literal that must follow it.
#[resource("redos://c/{+path}/end")]
fn redos_reserved(path: String) -> String {
    path
}

/// Starts a server built from this file's registrations on `config` (its address unused) on
/// `bind`, on a runtime of its own; returns where to reach it.
fn start_on(bind: &'static str, config: HttpConfig) -> Endpoint {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind(bind).await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let server = Server::builder()
                .name("advisories")
                .version("1")
                .build()
                .unwrap();
            let _ = serve_http_on(server, listener, config).await;
        });
    });
    Endpoint {
        port: rx.recv().unwrap(),
    }
}

fn start(config: HttpConfig) -> Endpoint {
    start_on("127.0.0.1:0", config)
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

fn quickstart() -> HttpServer {
    HttpServer::start("quickstart")
}

fn add_call(id: i64) -> Value {
    rpc(
        id,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
}

fn session_headers(id: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]
}

/// Headers of a 2026-07-28 `tools/call` of `tool`.
fn stateless_headers(tool: &str) -> [(&'static str, String); 3] {
    [
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", tool.to_owned()),
    ]
}

fn with_headers(req: Req, headers: &[(&'static str, String)]) -> Req {
    headers.iter().fold(req, |r, (n, v)| r.header(n, v))
}

/// A 2026-07-28 `tools/call` of `tool` with `arguments` (and `extra` `_meta` members).
fn stateless_call(id: i64, tool: &str, arguments: Value, extra_meta: Value) -> Req {
    let mut meta = stateless_meta();
    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra_meta.as_object()) {
        meta.extend(extra.clone());
    }
    let body = rpc(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments, "_meta": meta}),
    );
    with_headers(Req::post("/mcp"), &stateless_headers(tool)).json(&body)
}

/// The text of a `tools/call` result.
fn result_text(message: &Value) -> &str {
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result with text: {message}"))
}

/// The JSON-RPC messages of an SSE response, up to and including the response to a request
/// (the first message with a `result` or an `error`).
fn messages_until_response(stream: &mut SseStream) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let event = stream.expect_event("a message");
        if event.data.trim().is_empty() {
            continue;
        }
        let message = event.json();
        let done = message.get("result").is_some() || message.get("error").is_some();
        out.push(message);
        if done {
            return out;
        }
    }
}

/// Every event a stream carries until it ends or is quiet for `quiet`.
fn drain(stream: &mut SseStream, quiet: Duration) -> Vec<support::http::Event> {
    let mut out = Vec::new();
    while let Ok(event) = stream.next_event(quiet) {
        out.push(event);
    }
    out
}

/// Opens an HTTP+SSE session (`GET /sse`): its stream and the endpoint it announced.
fn open_legacy(ep: &Endpoint) -> (SseStream, String) {
    let mut stream = ep.open_stream(&Req::get("/sse").header("Accept", "text/event-stream"));
    assert_eq!(stream.head.status, 200, "GET /sse:\n{}", stream.seen());
    loop {
        let event = stream.expect_event("the endpoint event");
        if event.event.as_deref() == Some("endpoint") {
            return (stream, event.data);
        }
    }
}

/// [`open_legacy`], then the 2024-11-05 handshake on it; returns a function that POSTs a
/// message to the session (asserting 202) with the stream.
fn legacy_session(ep: &Endpoint) -> (SseStream, impl Fn(&Value) + '_) {
    let (mut stream, endpoint) = open_legacy(ep);
    let post = move |body: &Value| {
        let r = ep.send(&Req::post(&endpoint).json(body));
        assert_eq!(r.status(), 202, "POST {endpoint} {body}: {r}");
    };
    post(&initialize_request("2024-11-05"));
    let init = messages_until_response(&mut stream);
    assert_eq!(init.last().unwrap()["id"], 0, "{init:?}");
    post(&notification("notifications/initialized"));
    (stream, post)
}

/// Peak resident memory of a process in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

const MIB: usize = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// 1.1 Transport perimeter: DNS rebinding
// ---------------------------------------------------------------------------------------------

const EVIL_HOST: &str = "evil.example";
const EVIL_ORIGIN: &str = "http://evil.example";

/// Sends `req` as is (it must succeed), then with a foreign `Host`, then with a foreign
/// `Origin` (both must be 403), naming `what` in failures.
fn assert_rebinding_refused(ep: &Endpoint, what: &str, req: Req, ok: impl Fn(u16) -> bool) {
    let r = ep.send(&req.clone().header("Host", EVIL_HOST));
    assert_eq!(r.status(), 403, "{what} with Host: {EVIL_HOST}: {r}");
    assert_eq!(r.header("mcp-session-id"), None, "{what}: {r}");
    let r = ep.send(&req.clone().header("Origin", EVIL_ORIGIN));
    assert_eq!(r.status(), 403, "{what} with Origin: {EVIL_ORIGIN}: {r}");
    // The same request from a loopback page, and from a non-browser client, goes through.
    let loopback = format!("http://127.0.0.1:{}", ep.port);
    let r = ep.send(&req.clone().header("Origin", &loopback));
    assert!(ok(r.status()), "{what} with Origin: {loopback}: {r}");
    let r = ep.send(
        &req.header("Host", &format!("localhost:{}", ep.port))
            .header("Origin", &format!("http://localhost:{}", ep.port)),
    );
    assert!(ok(r.status()), "{what} with Host and Origin localhost: {r}");
}

/// GHSA-w48q-cv73-mx4w / CVE-2025-66414 (TS SDK), GHSA-89vp-x53w-74fx / CVE-2026-42559 (rmcp),
/// CVE-2026-35568 (Java): the Streamable HTTP transport had no Host/Origin check, or one that
/// was off by default, so a web page that rebinds its name to 127.0.0.1 could call tools.
///
/// We assert, against the quickstart example with its defaults: every method on `/mcp`
/// (initialize, an in-session POST, GET, DELETE, a 2026-07-28 stateless call) answers 403 to
/// `Host: evil.example` and to `Origin: http://evil.example`, and succeeds from loopback names
/// and without an `Origin`.
#[test]
fn cve_2025_66414_dns_rebinding_streamable_http() {
    let server = quickstart();
    let ok = |s: u16| (200..300).contains(&s);
    assert_rebinding_refused(
        &server,
        "POST /mcp initialize",
        Req::post("/mcp").json(&initialize_request("2025-11-25")),
        ok,
    );
    let session = server.open_session();
    assert_rebinding_refused(
        &server,
        "POST /mcp tools/call in a session",
        Req::post("/mcp")
            .headers(&session_headers(&session))
            .json(&add_call(1)),
        ok,
    );
    assert_rebinding_refused(
        &server,
        "POST /mcp 2026-07-28 tools/call",
        stateless_call(1, "add", json!({"a": 2, "b": 3}), json!({})),
        ok,
    );
    // A GET stream stays open: only its status line is read.
    for (what, host, origin, want) in [
        ("Host", EVIL_HOST, None, 403),
        ("Origin", "127.0.0.1", Some(EVIL_ORIGIN), 403),
        ("neither", "127.0.0.1", None, 200),
    ] {
        let mut req = Req::get("/mcp")
            .headers(&session_headers(&session))
            .header("Accept", "text/event-stream")
            .header("Host", host);
        if let Some(origin) = origin {
            req = req.header("Origin", origin);
        }
        let stream = server.open_stream(&req);
        assert_eq!(stream.head.status, want, "GET /mcp, foreign {what}");
    }
    for (host, origin) in [(EVIL_HOST, None), ("127.0.0.1", Some(EVIL_ORIGIN))] {
        let mut req = Req::new("DELETE", "/mcp")
            .headers(&session_headers(&session))
            .header("Host", host);
        if let Some(origin) = origin {
            req = req.header("Origin", origin);
        }
        let r = server.send(&req);
        assert_eq!(r.status(), 403, "DELETE /mcp: {r}");
    }
    // The refused DELETEs did not end the session.
    let r = server.post(&add_call(2), &session_headers(&session));
    assert_eq!(result_text(&r.json()), "5", "{r}");
    // Without an Origin (a non-browser client) the request goes through.
    let r = server.send(&Req::post("/mcp").json(&initialize_request("2025-11-25")));
    assert_eq!(r.status(), 200, "{r}");
}

/// CVE-2026-59950 (Python SDK): Host/Origin checks guarded the Streamable HTTP endpoint but not
/// another listener (the WebSocket transport). CVE-2025-49596 (MCP Inspector): a local dev
/// endpoint reachable from browsers.
///
/// We ship one more listener, the deprecated HTTP+SSE transport: `GET /sse` and
/// `POST /messages?sessionId=…`. Both answer 403 to a foreign `Host` or `Origin`, in both the
/// quickstart and the conformance example, and so does any other path on the port.
#[test]
fn cve_2026_59950_dns_rebinding_every_listener() {
    for example in ["quickstart", "conformance"] {
        let server = HttpServer::start(example);
        let sse = Req::get("/sse").header("Accept", "text/event-stream");
        for (what, req) in [
            ("Host", sse.clone().header("Host", EVIL_HOST)),
            ("Origin", sse.clone().header("Origin", EVIL_ORIGIN)),
        ] {
            let mut stream = server.open_stream(&req);
            assert_eq!(
                stream.head.status,
                403,
                "{example}: GET /sse with a foreign {what}:\n{}",
                stream.seen()
            );
            assert!(
                drain(&mut stream, Duration::from_millis(200))
                    .iter()
                    .all(|e| e.event.as_deref() != Some("endpoint")),
                "{example}: a refused GET /sse announced an endpoint:\n{}",
                stream.seen()
            );
        }
        // A live legacy session, so that only the guard stands between the request and a 202.
        let (mut stream, endpoint) = open_legacy(&server);
        let post = Req::post(&endpoint).json(&initialize_request("2024-11-05"));
        for (what, req) in [
            ("Host", post.clone().header("Host", EVIL_HOST)),
            ("Origin", post.clone().header("Origin", EVIL_ORIGIN)),
        ] {
            let r = server.send(&req);
            assert_eq!(
                r.status(),
                403,
                "{example}: POST {endpoint} with a foreign {what}: {r}"
            );
        }
        assert!(
            stream.next_event(Duration::from_millis(200)).is_err(),
            "{example}: a refused POST was answered on the stream:\n{}",
            stream.seen()
        );
        let r = server.send(&post);
        assert_eq!(
            r.status(),
            202,
            "{example}: the same POST from loopback: {r}"
        );
        for path in ["/", "/other", "/mcp/extra"] {
            let r = server.send(&Req::get(path).header("Host", EVIL_HOST));
            assert_eq!(
                r.status(),
                403,
                "{example}: GET {path} with a foreign Host: {r}"
            );
        }
    }
}

/// GHSA-9h52-p55h-vw2f / CVE-2025-66416 (Python SDK): the protection was enabled only for
/// servers bound to loopback names; one bound to `0.0.0.0` got nothing, yet a browser on the
/// same machine reaches it as 127.0.0.1.
///
/// We bind the quickstart to `0.0.0.0` (and to `[::]`, where the connection's local address
/// is the v4-mapped `::ffff:127.0.0.1`), connect through 127.0.0.1, and assert that a foreign
/// `Origin` is still 403 on `/mcp` and on `/sse` (the origin check does not depend on the
/// bind). The `Host` half is [`ghsa_xw59_hvm2_8pj6_loopback_connection_requires_loopback_host`].
#[test]
fn ghsa_9h52_p55h_vw2f_wildcard_bind_still_checks_origin() {
    for bind in ["0.0.0.0:0", "[::]:0"] {
        let server = HttpServer::start_on(&support::example("quickstart"), bind);
        let r = server.send(
            &Req::post("/mcp")
                .header("Origin", EVIL_ORIGIN)
                .json(&initialize_request("2025-11-25")),
        );
        assert_eq!(r.status(), 403, "POST /mcp on a {bind} bind: {r}");
        let stream = server.open_stream(
            &Req::get("/sse")
                .header("Accept", "text/event-stream")
                .header("Origin", EVIL_ORIGIN),
        );
        assert_eq!(
            stream.head.status,
            403,
            "GET /sse on a {bind} bind:\n{}",
            stream.seen()
        );
        server.assert_still_serving();
    }
}

/// GHSA-xw59-hvm2-8pj6 (go-sdk), fixed by go-sdk #760: "if the *local* address of the
/// connection is loopback, `Host` must be loopback", with no configuration. The research notes
/// call it the best default to copy. A server bound to `0.0.0.0` and reached through
/// 127.0.0.1 with `Host: evil.example` is a rebinding attack whatever the bind was.
///
/// We assert 403 for that request (POST /mcp, and GET /sse, which a browser sends without an
/// `Origin`), on `0.0.0.0` and on `[::]` (whose loopback connections have the v4-mapped local
/// address `::ffff:127.0.0.1`, which `Ipv6Addr::is_loopback` does not count as loopback).
#[test]
fn ghsa_xw59_hvm2_8pj6_loopback_connection_requires_loopback_host() {
    for bind in ["0.0.0.0:0", "[::]:0"] {
        let server = HttpServer::start_on(&support::example("quickstart"), bind);
        let r = server.send(
            &Req::post("/mcp")
                .header("Host", EVIL_HOST)
                .json(&initialize_request("2025-11-25")),
        );
        assert_eq!(
            r.status(),
            403,
            "POST /mcp on a {bind} bind via 127.0.0.1, Host {EVIL_HOST}: {r}"
        );
        let stream = server.open_stream(
            &Req::get("/sse")
                .header("Accept", "text/event-stream")
                .header("Host", EVIL_HOST),
        );
        assert_eq!(
            stream.head.status,
            403,
            "GET /sse on a {bind} bind via 127.0.0.1, Host {EVIL_HOST}:\n{}",
            stream.seen()
        );
        server.assert_still_serving();
    }
}

// ---------------------------------------------------------------------------------------------
// 1.2 Session, tenant and stream isolation
// ---------------------------------------------------------------------------------------------

/// Fails unless `ids` look like independent draws of at least 128 bits: visible ASCII only
/// (0x21–0x7E, the spec's rule for `Mcp-Session-Id`), no repeats, and no position that keeps
/// the same few characters across ids (a counter, a pointer or a timestamp would).
fn assert_unguessable(what: &str, ids: &[String]) {
    let mut seen = HashSet::new();
    for id in ids {
        assert!(
            id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "{what}: {id:?} has a byte outside 0x21–0x7E"
        );
        // 128 bits are 32 hex digits, or 22 characters of base64.
        let min = if id.bytes().all(|b| b.is_ascii_hexdigit()) {
            32
        } else {
            22
        };
        assert!(id.len() >= min, "{what}: {id:?} is shorter than 128 bits");
        assert!(seen.insert(id.clone()), "{what}: {id:?} was issued twice");
    }
    let shortest = ids.iter().map(String::len).min().unwrap_or(0);
    for pos in 0..shortest {
        let distinct: HashSet<u8> = ids.iter().map(|id| id.as_bytes()[pos]).collect();
        // Random hex over 200 ids shows all 16 digits at every position (the chance of fewer
        // than 8 is below 1e-60); a counter or a pointer shows one or two.
        assert!(
            distinct.len() >= 8,
            "{what}: position {pos} takes only {distinct:?} across {} ids, e.g. {:?}",
            ids.len(),
            &ids[..3]
        );
    }
}

/// Session ids are `<route>-<random>`: the route token is the instance's, the same in every
/// id it mints by design (a load balancer routes on it), so the randomness is in what follows
/// it. Every id must have that form, with one route.
fn random_parts(ids: &[String]) -> Vec<String> {
    let routes: HashSet<&str> = ids
        .iter()
        .map(|id| id.split_once('-').expect("<route>-<random>").0)
        .collect();
    assert_eq!(routes.len(), 1, "one route per instance: {routes:?}");
    ids.iter()
        .map(|id| id.split_once('-').unwrap().1.to_owned())
        .collect()
}

/// CVE-2025-6515 (oatpp-mcp, "prompt hijacking"): the session id was the address of the
/// session object; addresses are recycled and predictable, so an attacker could attach to a
/// victim's SSE stream.
///
/// We collect 200 Streamable HTTP session ids and 50 HTTP+SSE ones from the quickstart and
/// assert each set is unguessable: visible ASCII, ≥128 bits, unique, no fixed positions.
#[test]
fn cve_2025_6515_session_ids_are_unguessable() {
    let server = quickstart();
    let ids: Vec<String> = (0..200)
        .map(|_| {
            let r = server.post(&initialize_request("2025-11-25"), &[]);
            r.header("mcp-session-id")
                .unwrap_or_else(|| panic!("no Mcp-Session-Id: {r}"))
                .to_owned()
        })
        .collect();
    assert_unguessable("Mcp-Session-Id", &random_parts(&ids));
    let legacy: Vec<String> = (0..50)
        .map(|_| {
            let (_stream, endpoint) = open_legacy(&server);
            let id = endpoint.split("sessionId=").nth(1).unwrap_or("");
            id.split('&').next().unwrap_or("").to_owned()
        })
        .collect();
    assert_unguessable("HTTP+SSE sessionId", &random_parts(&legacy));
    let all: HashSet<&String> = ids.iter().chain(&legacy).collect();
    assert_eq!(all.len(), ids.len() + legacy.len(), "an id was reused");
}

/// CVE-2026-33946 (Ruby SDK) and CVE-2026-52869 (Python SDK, fixed in python-sdk #2718/#2719
/// with a session-owner map): a session id was usable by any caller, not only by the one that
/// created it.
///
/// The runtime has a caller identity (`ServerBuilder::request_state_caller`, by default the
/// `Authorization` header), so a session opened with `Authorization: Bearer alice` must
/// answer a request with `Bearer mallory`, or with none, exactly as an unknown session: 404
/// (no oracle). The owner keeps using it.
#[test]
fn cve_2026_33946_session_bound_to_principal() {
    let server = quickstart();
    let alice = [("Authorization", "Bearer alice")];
    let r = server.post(&initialize_request("2025-11-25"), &alice);
    assert_eq!(r.status(), 200, "{r}");
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let headers = |auth: Option<&'static str>| {
        let mut h: Vec<(&str, &str)> = session_headers(&session).to_vec();
        if let Some(auth) = auth {
            h.push(("Authorization", auth));
        }
        h
    };
    let r = server.post(
        &notification("notifications/initialized"),
        &headers(Some("Bearer alice")),
    );
    assert_eq!(r.status(), 202, "{r}");
    for intruder in [Some("Bearer mallory"), None] {
        let r = server.post(&add_call(1), &headers(intruder));
        assert_eq!(
            r.status(),
            404,
            "session of alice used with {intruder:?}: {r}"
        );
        let stream = server.open_stream(
            &Req::get("/mcp")
                .headers(&headers(intruder))
                .header("Accept", "text/event-stream"),
        );
        assert_eq!(
            stream.head.status,
            404,
            "GET stream of alice's session with {intruder:?}:\n{}",
            stream.seen()
        );
        let r = server.send(&Req::new("DELETE", "/mcp").headers(&headers(intruder)));
        assert_eq!(
            r.status(),
            404,
            "DELETE of alice's session with {intruder:?}: {r}"
        );
    }
    let r = server.post(&add_call(2), &headers(Some("Bearer alice")));
    assert_eq!(
        result_text(&r.json()),
        "5",
        "the owner's session still works: {r}"
    );
}

/// Calls `tagged` with `tag` as request id 1 and progress token 1 on `req`'s stream; returns
/// the messages up to the response.
fn tagged_call_on(ep: &Endpoint, req: Req) -> Vec<Value> {
    let mut stream = ep.open_stream(&req);
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    assert_eq!(
        stream.head.content_type().as_deref(),
        Some("text/event-stream"),
        "{}",
        stream.seen()
    );
    messages_until_response(&mut stream)
}

/// Fails unless `messages` are `tag`'s own: progress with its message, then its result, all
/// for request id 1.
fn assert_own_messages(what: &str, tag: &str, messages: &[Value]) {
    let (last, progress) = messages.split_last().expect("a response");
    assert_eq!(last["id"], 1, "{what} ({tag}): {messages:?}");
    assert_eq!(result_text(last), tag, "{what} ({tag}) got: {messages:?}");
    assert_eq!(
        progress.len(),
        2,
        "{what} ({tag}): two progress notifications: {messages:?}"
    );
    for note in progress {
        assert_eq!(
            note["method"], "notifications/progress",
            "{what}: {messages:?}"
        );
        assert_eq!(
            note["params"]["message"], tag,
            "{what} ({tag}) got another client's progress: {messages:?}"
        );
    }
}

/// Runs `call(tag)` for four tags at once (released together by a barrier); returns each
/// tag with what its call returned.
fn concurrently<T: Send>(call: impl Fn(&str) -> T + Sync) -> Vec<(&'static str, T)> {
    let tags = ["alice", "bob", "carol", "dave"];
    let barrier = Barrier::new(tags.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = tags
            .into_iter()
            .map(|tag| {
                let (barrier, call) = (&barrier, &call);
                s.spawn(move || {
                    barrier.wait();
                    (tag, call(tag))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// [`concurrently`], then each tag must have its own messages.
fn concurrently_own(what: &str, call: impl Fn(&str) -> Vec<Value> + Sync) {
    for (tag, messages) in concurrently(call) {
        assert_own_messages(what, tag, &messages);
    }
}

/// GHSA-345p-7cg4-v4c7 / CVE-2026-25536 (TS SDK 1.10.0–1.25.3, CVSS 7.1): one transport or
/// one server object shared by several clients routed responses and progress by JSON-RPC id
/// alone, so two clients using `id: 1` at once could get each other's results, progress and
/// elicitations.
///
/// Four clients send `tools/call` with `id: 1` and `progressToken: 1` at the same moment, with
/// different arguments, in each era and transport that multiplexes clients: Streamable HTTP
/// sessions, 2026-07-28 stateless requests (one shared connection inside the server), and
/// HTTP+SSE sessions. Each gets its own two progress notifications and its own result.
#[test]
fn ghsa_345p_7cg4_v4c7_colliding_ids_across_clients() {
    let ep = start(HttpConfig::default());
    let args = |tag: &str| json!({"tag": tag, "ms": 150});

    concurrently_own("Streamable HTTP sessions", |tag| {
        let session = ep.open_session();
        let body = rpc(
            1,
            "tools/call",
            json!({"name": "tagged", "arguments": args(tag), "_meta": {"progressToken": 1}}),
        );
        tagged_call_on(
            &ep,
            Req::post("/mcp")
                .headers(&session_headers(&session))
                .json(&body),
        )
    });

    concurrently_own("2026-07-28 stateless", |tag| {
        tagged_call_on(
            &ep,
            stateless_call(1, "tagged", args(tag), json!({"progressToken": 1})),
        )
    });

    concurrently_own("HTTP+SSE sessions", |tag| {
        let (mut stream, post) = legacy_session(&ep);
        let body = rpc(
            1,
            "tools/call",
            json!({"name": "tagged", "arguments": args(tag), "_meta": {"progressToken": 1}}),
        );
        post(&body);
        messages_until_response(&mut stream)
    });
}

/// GHSA-345p-7cg4-v4c7 / CVE-2026-25536, the other half (typescript-sdk #1483): with one
/// server object connected to many transports, server-to-client requests (elicitation,
/// sampling) went to the last client connected, and their answers were matched by id alone.
///
/// Four sessions call `ask_name` at the same moment. Each receives its own
/// `elicitation/create` on its own stream (the server's request ids may well coincide across
/// sessions), answers it with its own name, and gets `Hi <its name>`.
#[test]
fn cve_2026_25536_server_requests_route_to_their_own_client() {
    let ep = start(HttpConfig::default());
    let answers = concurrently(|tag| {
        let init = rpc(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": tag, "version": "1"}}),
        );
        let r = ep.post(&init, &[]);
        let session = r.header("mcp-session-id").expect("a session id").to_owned();
        let h = session_headers(&session);
        assert_eq!(
            ep.post(&notification("notifications/initialized"), &h)
                .status(),
            202
        );
        let mut stream = ep.open_stream(&Req::post("/mcp").headers(&h).json(&rpc(
            1,
            "tools/call",
            json!({"name": "ask_name"}),
        )));
        let ask = loop {
            let event = stream.expect_event("elicitation/create");
            if !event.data.trim().is_empty() {
                break event.json();
            }
        };
        assert_eq!(ask["method"], "elicitation/create", "{tag}: {ask}");
        let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
                            "result": {"action": "accept", "content": {"name": tag}}});
        assert_eq!(ep.post(&answer, &h).status(), 202, "{tag}: answering {ask}");
        let done = messages_until_response(&mut stream);
        result_text(done.last().unwrap()).to_owned()
    });
    for (tag, text) in answers {
        assert_eq!(
            text,
            format!("Hi {tag}"),
            "{tag} got another client's answer"
        );
    }
}

/// One `tagged` call in `session` on a stream of its own: the ids and JSON of its events.
fn tagged_stream(ep: &Endpoint, session: &str, id: i64, tag: &str) -> Vec<(String, Value)> {
    let body = rpc(
        id,
        "tools/call",
        json!({"name": "tagged", "arguments": {"tag": tag, "ms": 10}, "_meta": {"progressToken": tag}}),
    );
    let mut stream = ep.open_stream(
        &Req::post("/mcp")
            .headers(&session_headers(session))
            .json(&body),
    );
    let mut out = Vec::new();
    loop {
        let event = stream.expect_event("an event");
        let id = event
            .id
            .clone()
            .unwrap_or_else(|| panic!("an event without an id:\n{}", stream.seen()));
        let message = if event.data.trim().is_empty() {
            Value::Null
        } else {
            event.json()
        };
        let done = message.get("result").is_some();
        out.push((id, message));
        if done {
            return out;
        }
    }
}

/// Resumes `session` after `last_event_id`: the text of everything replayed (until the stream
/// ends, or is quiet for 300 ms).
fn resume(ep: &Endpoint, session: &str, last_event_id: &str) -> String {
    let mut stream = ep.open_stream(
        &Req::get("/mcp")
            .headers(&session_headers(session))
            .header("Accept", "text/event-stream")
            .header("Last-Event-ID", last_event_id),
    );
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    drain(&mut stream, Duration::from_millis(300));
    stream.seen()
}

/// fastmcp #4402, modelcontextprotocol/servers #4087/#4099, mcp-lite #74, mcp_dart #131: event
/// stores keyed replay by stream or request id alone, or replayed "everything after this id",
/// so a `Last-Event-ID` from one session replayed another session's (or another stream's)
/// events. The spec: a server MUST NOT replay messages that belong to a different stream.
///
/// Session A runs three calls (tags `alice-*`), session B one (`bob`). We assert: no event
/// id is issued in both sessions (stream ids carry random bits per session); A's event ids
/// presented in B replay nothing of A's; the same ids in A replay A's events (so they did name something); and within A,
/// resuming one of two interleaved streams replays only that stream.
#[test]
fn fastmcp_4402_cross_session_event_replay() {
    let ep = start(HttpConfig::default());
    let a = ep.open_session();
    let b = ep.open_session();
    let a0 = tagged_stream(&ep, &a, 1, "alice-0");
    let _a1 = tagged_stream(&ep, &a, 2, "alice-1");
    let a2 = tagged_stream(&ep, &a, 3, "alice-2");
    let b0 = tagged_stream(&ep, &b, 1, "bob");

    // Positive control: in A, A's ids replay A's events.
    let replay = resume(&ep, &a, &a2[0].0);
    assert!(replay.contains("alice-2"), "A's own replay: {replay}");

    // An id of A's that B never issued, and one whose text B also issued.
    assert!(
        b0.iter().all(|(id, _)| *id != a2[0].0),
        "the test needs an id of A's unknown to B: {a2:?} {b0:?}"
    );
    // Stream ids carry random bits per session, so no id of A's is one B issued too (the
    // collision the advisories exploited cannot arise).
    assert!(
        a0.iter()
            .all(|(id, _)| b0.iter().all(|(other, _)| id != other)),
        "an event id issued in both sessions: {a0:?} {b0:?}"
    );
    for id in [&a2[0].0, &a2[1].0, &a0[0].0] {
        let replay = resume(&ep, &b, id);
        assert!(
            !replay.contains("alice"),
            "session B, Last-Event-ID {id} (from session A), replayed A's events: {replay}"
        );
    }

    // Two interleaved streams in one session: resuming one replays only its own events.
    let (first, second) = std::thread::scope(|s| {
        let one = s.spawn(|| tagged_stream(&ep, &a, 10, "alice-x"));
        let two = s.spawn(|| tagged_stream(&ep, &a, 11, "alice-y"));
        (one.join().unwrap(), two.join().unwrap())
    });
    for (stream, own, other) in [
        (&first, "alice-x", "alice-y"),
        (&second, "alice-y", "alice-x"),
    ] {
        let replay = resume(&ep, &a, &stream[0].0);
        assert!(replay.contains(own), "resuming {own}'s stream: {replay}");
        assert!(
            !replay.contains(other),
            "resuming {own}'s stream replayed {other}'s events: {replay}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 1.3 Parser differentials
// ---------------------------------------------------------------------------------------------

/// A 2026-07-28 `tools/call` of `add` written by hand, with `headers` as given (repeats
/// included); returns the status line.
fn stateless_add_with_headers(port: u16, headers: &[(&str, &str)]) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}}"#,
        add_params(&format!(r#","_meta":{}"#, stateless_meta()))
    );
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    status_of_raw(port, head, move |w| {
        let _ = w.write_all(body.as_bytes());
    })
}

/// GHSA-wvj2-96wp-fq3f / CVE-2026-27896 at the HTTP layer: a proxy and the server must not
/// read different values of one field. 2026-07-28 routes on `Mcp-Method`, `Mcp-Name` and
/// `MCP-Protocol-Version` headers (a gateway may route or authorize on them), and a session
/// on `Mcp-Session-Id`; if the server takes the first of two values and a proxy the last, the
/// check is bypassed.
///
/// A request with any of these headers repeated (the body agreeing with one of the values)
/// is 400, while the same request with each header once succeeds. (`Mcp-Session-Id`:
/// [`ghsa_wvj2_96wp_fq3f_repeated_session_id_header`].)
#[test]
fn ghsa_wvj2_96wp_fq3f_repeated_routing_headers() {
    let server = quickstart();
    let port = server.port;
    let once = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "add"),
    ];
    let status = stateless_add_with_headers(port, &once);
    assert!(status.contains(" 200 "), "each header once: {status}");
    for (name, other) in [
        ("Mcp-Method", "tools/list"),
        ("Mcp-Name", "divide"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ] {
        for other_first in [false, true] {
            let mut headers = once.to_vec();
            let extra = (name, other);
            if other_first {
                headers.insert(0, extra);
            } else {
                headers.push(extra);
            }
            let status = stateless_add_with_headers(port, &headers);
            assert!(
                status.contains(" 400 "),
                "{name} repeated ({other} {}): {status}",
                if other_first { "first" } else { "last" }
            );
        }
    }
}

/// GHSA-wvj2-96wp-fq3f / CVE-2026-27896's case folding, at the HTTP layer: `Mcp-Method` and
/// `Mcp-Name` must equal the body's `method` and `name` exactly, and be present.
///
/// A 2026-07-28 `tools/call` of `add` with `Mcp-Name: ADD`, `Mcp-Method: TOOLS/CALL` or
/// `Tools/Call`, or without one of the headers, is 400; with the exact values it is 200.
#[test]
fn ghsa_wvj2_96wp_fq3f_routing_headers_match_exactly() {
    let server = quickstart();
    let port = server.port;
    let version = ("MCP-Protocol-Version", "2026-07-28");
    let exact = stateless_add_with_headers(
        port,
        &[version, ("Mcp-Method", "tools/call"), ("Mcp-Name", "add")],
    );
    assert!(exact.contains(" 200 "), "exact headers: {exact}");
    for headers in [
        vec![version, ("Mcp-Method", "tools/call"), ("Mcp-Name", "ADD")],
        vec![version, ("Mcp-Method", "TOOLS/CALL"), ("Mcp-Name", "add")],
        vec![version, ("Mcp-Method", "Tools/Call"), ("Mcp-Name", "add")],
        vec![version, ("Mcp-Method", "tools/call")],
        vec![version, ("Mcp-Name", "add")],
    ] {
        let status = stateless_add_with_headers(port, &headers);
        assert!(status.contains(" 400 "), "{headers:?}: {status}");
    }
}

/// [`ghsa_wvj2_96wp_fq3f_repeated_routing_headers`] for the session era: two `Mcp-Session-Id`
/// headers. A gateway that binds sessions to users and checks the last value would let a
/// request run in the session named first (someone else's). The request is 400.
#[test]
fn ghsa_wvj2_96wp_fq3f_repeated_session_id_header() {
    let server = quickstart();
    let port = server.port;
    let (a, b) = (server.open_session(), server.open_session());
    for pair in [[&a, &b], [&b, &a]] {
        let body = add_call(1).to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {}\r\nMcp-Session-Id: {}\r\n\
             Connection: close\r\n\r\n",
            body.len(),
            pair[0],
            pair[1]
        );
        let status = status_of_raw(port, head, move |w| {
            let _ = w.write_all(body.as_bytes());
        });
        assert!(
            status.contains(" 400 "),
            "Mcp-Session-Id repeated: {status}"
        );
    }
}

/// The `add 2 3` params as JSON text, with `meta` (`""` or `,"_meta":{…}`) inside.
fn add_params(meta: &str) -> String {
    format!(r#"{{"name":"add","arguments":{{"a":2,"b":3}}{meta}}}"#)
}

/// Messages whose member names only resemble the envelope's (case-folded, `ſ` for `s`, a NUL
/// suffix) or repeat one: none may run `add` (whose result would be `5`); those without a real
/// `method` and those with a repeated member must be -32600.
fn differential_cases(meta: &str) -> Vec<(&'static str, String, bool)> {
    let p = add_params(meta);
    vec![
        // (what, message, must be -32600)
        (
            "`Method`",
            format!(r#"{{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{p}}}"#),
            true,
        ),
        (
            "`METHOD`",
            format!(r#"{{"jsonrpc":"2.0","id":2,"METHOD":"tools/call","params":{p}}}"#),
            true,
        ),
        (
            "`method\\u0000`",
            format!(r#"{{"jsonrpc":"2.0","id":3,"method\u0000":"tools/call","params":{p}}}"#),
            true,
        ),
        (
            "`method` then `Method`",
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","Method":"tools/call","params":{p}}}"#
            ),
            false,
        ),
        (
            "`method` then `method\\u0000`",
            format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","method\u0000":"tools/call","params":{p}}}"#
            ),
            false,
        ),
        (
            "`paramſ`",
            format!(r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","paramſ":{p}}}"#),
            false,
        ),
        (
            "`PARAMS`",
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","PARAMS":{p}}}"#),
            false,
        ),
        (
            "two `method`s",
            format!(
                r#"{{"jsonrpc":"2.0","id":8,"method":"tools/list","method":"tools/call","params":{p}}}"#
            ),
            true,
        ),
        (
            "two `params`",
            format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"divide","arguments":{{"a":1,"b":0}}}},"params":{p}}}"#
            ),
            true,
        ),
        (
            "two `id`s",
            format!(r#"{{"jsonrpc":"2.0","id":10,"id":11,"method":"tools/call","params":{p}}}"#),
            true,
        ),
        (
            "two `jsonrpc`s",
            format!(
                r#"{{"jsonrpc":"1.0","jsonrpc":"2.0","id":12,"method":"tools/call","params":{p}}}"#
            ),
            true,
        ),
    ]
}

fn assert_differential(what: &str, transport: &str, response: &Value, invalid_request: bool) {
    let text = response.to_string();
    assert!(
        response["result"]["content"].is_null(),
        "{transport}: {what} ran tools/call: {text}"
    );
    if invalid_request {
        assert_eq!(
            response["error"]["code"], -32600,
            "{transport}: {what} must be an invalid request: {text}"
        );
    }
}

/// GHSA-wvj2-96wp-fq3f / CVE-2026-27896 (go-sdk #805/#807): `encoding/json` matched member
/// names case-insensitively and folded `ſ` to `s`, so `{"method":"tools/list","Method":
/// "tools/call"}` passed a proxy that read the first and ran the second. GHSA-q382-vc8q-7jhj
/// (go-sdk 1.3.1, #841): the replacement parser read `"method\u0000"` as `method`, and with
/// duplicates the last one won. Rul1an/assay #2776/#3041: serde_json `Value` maps are
/// last-duplicate-wins too.
///
/// On stdio (session era) and on HTTP (2026-07-28 stateless) we assert: look-alike names never
/// bind to `method` or `params`, and any repeated envelope member is -32600; none of the
/// messages runs `add`.
#[test]
fn ghsa_wvj2_96wp_fq3f_and_ghsa_q382_vc8q_7jhj_member_name_differentials() {
    let mut proc = Proc::spawn("quickstart", &[], &[]);
    proc.initialize();
    for (what, message, invalid) in differential_cases("") {
        proc.send_line(&message);
        let response = proc.recv();
        assert_differential(what, "stdio", &response, invalid);
    }
    proc.send(add_call(99));
    assert_eq!(result_text(&proc.recv()), "5", "stdio still serves");

    let server = quickstart();
    let meta = format!(r#","_meta":{}"#, stateless_meta());
    for (what, message, invalid) in differential_cases(&meta) {
        // The headers agree with the body's real `method`, so that only the body decides.
        let headers = if message.contains(r#""method":"tools/list""#) {
            vec![
                ("MCP-Protocol-Version", "2026-07-28".to_owned()),
                ("Mcp-Method", "tools/list".to_owned()),
            ]
        } else {
            stateless_headers("add").to_vec()
        };
        let req = with_headers(Req::post("/mcp"), &headers).body(message);
        let r = server.send(&req);
        assert_differential(what, "HTTP 2026-07-28", &r.json(), invalid);
    }
    let session = server.open_session();
    for (what, message, invalid) in differential_cases("") {
        let r = server.send(
            &Req::post("/mcp")
                .headers(&session_headers(&session))
                .body(message),
        );
        assert_differential(what, "HTTP session", &r.json(), invalid);
    }
}

/// GHSA-q382-vc8q-7jhj's "last duplicate wins", one level down: `{"a":2,"a":100}` in a tool's
/// arguments. Whichever value a proxy or log shows, the tool must not silently see another:
/// the call is refused (an error, not the sum with either `a`).
#[test]
fn ghsa_q382_vc8q_7jhj_duplicate_argument_members() {
    let mut proc = Proc::spawn("quickstart", &[], &[]);
    proc.initialize();
    proc.send_line(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"a":100,"b":3}}}"#,
    );
    let r = proc.recv();
    let refused = r["error"]["code"] == -32602 || r["result"]["isError"] == true;
    assert!(refused, "duplicate argument `a` was accepted: {r}");
    proc.send_line(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","name":"divide","arguments":{"a":1,"b":0}}}"#,
    );
    let r = proc.recv();
    assert_eq!(
        r["error"]["code"], -32602,
        "duplicate `name` in params was accepted: {r}"
    );
}

// ---------------------------------------------------------------------------------------------
// 1.4 Crash or hang on bad input
// ---------------------------------------------------------------------------------------------

/// Requests whose params are missing or of the wrong shape; each must be answered with an
/// error for its id.
fn bad_params() -> Vec<(&'static str, Option<Value>)> {
    vec![
        ("initialize", None),
        ("initialize", Some(json!(null))),
        ("initialize", Some(json!([]))),
        ("initialize", Some(json!({"protocolVersion": 5}))),
        ("tools/call", None),
        ("tools/call", Some(json!(null))),
        ("tools/call", Some(json!(1))),
        ("tools/call", Some(json!("greet"))),
        ("tools/call", Some(json!({"name": 5}))),
        (
            "tools/call",
            Some(json!({"name": "greet", "arguments": "name=Ada"})),
        ),
        (
            "tools/call",
            Some(json!({"name": "greet", "arguments": {"name": ["Ada"]}})),
        ),
        ("resources/read", None),
        ("resources/read", Some(json!({"uri": 7}))),
        ("prompts/get", None),
        ("prompts/get", Some(json!({"name": ["x"]}))),
        ("completion/complete", Some(json!({"ref": 1}))),
        ("logging/setLevel", Some(json!({"level": "loudest"}))),
    ]
}

fn greet_call(id: i64) -> Value {
    rpc(
        id,
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    )
}

fn bad_request(id: i64, method: &str, params: &Option<Value>) -> Value {
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        msg["params"] = p.clone();
    }
    msg
}

fn assert_refused(transport: &str, request: &Value, response: &Value) {
    assert_eq!(
        response["id"], request["id"],
        "{transport}: {request} → {response}"
    );
    let refused = response["error"]["code"].is_i64() || response["result"]["isError"] == true;
    assert!(
        refused,
        "{transport}: {request} was not refused: {response}"
    );
    if request.get("params").is_none() {
        assert_eq!(
            response["error"]["code"], -32602,
            "{transport}: {request} (no params) → {response}"
        );
    }
}

/// GHSA-3qhf-m339-9g5v / CVE-2025-53366 (Python SDK < 1.9.4): a request whose params failed
/// validation raised out of the session loop and killed the session (and the server). The fix
/// (#822) answers -32602; its regression test sends `initialize` and `tools/call` without
/// params 10 times in a row.
///
/// Against the conformance example (tools, resources, prompts, completion, logging), over
/// stdio (before and after the handshake) and in a Streamable HTTP session: the same 10×,
/// then a catalogue of wrongly shaped params; each is answered with an error for its id, and
/// afterwards a valid handshake and call on the same connection or session succeed.
#[test]
fn cve_2025_53366_bad_params_keep_the_session() {
    let mut proc = Proc::spawn("conformance", &[], &[]);
    let mut id = 100;
    for _ in 0..10 {
        id += 1;
        let req = bad_request(id, "initialize", &None);
        proc.send(req.clone());
        assert_refused("stdio, before initialize", &req, &proc.recv());
    }
    let init = proc.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    for (method, params) in std::iter::repeat_n(("tools/call", None), 10).chain(bad_params()) {
        id += 1;
        let req = bad_request(id, method, &params);
        proc.send(req.clone());
        assert_refused("stdio", &req, &proc.recv());
    }
    proc.send(greet_call(1));
    assert_eq!(
        result_text(&proc.recv()),
        "Hello, Ada!",
        "stdio: the session still works"
    );

    let server = HttpServer::start("conformance");
    let session = server.open_session();
    for (method, params) in std::iter::repeat_n(("tools/call", None), 10).chain(bad_params()) {
        id += 1;
        let req = bad_request(id, method, &params);
        let r = server.post(&req, &session_headers(&session));
        // Invalid params travel in a 200; a message that is not JSON-RPC at all (`params:
        // null` is -32600) is a 400.
        let expected = if r.json()["error"]["code"] == -32600 {
            400
        } else {
            200
        };
        assert_eq!(r.status(), expected, "{r}");
        assert_refused("HTTP session", &req, &r.json());
    }
    let r = server.post(&greet_call(1), &session_headers(&session));
    assert_eq!(
        result_text(&r.json()),
        "Hello, Ada!",
        "HTTP: the session still works: {r}"
    );
}

/// Opens `req` (an SSE response) and reads its first event with data, then drops the
/// connection while the server is still writing.
fn abort_after_first_event(ep: &Endpoint, req: &Req) {
    let mut stream = ep.open_stream(req);
    assert_eq!(stream.head.status, 200, "{}", stream.seen());
    stream.expect_event("a first event");
}

/// GHSA-j975-95f5-7wqh / CVE-2025-53365 (Python SDK < 1.10.0, CVSS 8.7): a client that
/// disconnected mid-stream raised an uncaught `ClosedResourceError` that crashed the server.
/// The fix's test (#967): bad clients N times, then a good client lists tools.
///
/// Against a server whose `chatter` tool writes a progress event every 10 ms, we abort 100
/// SSE responses after their first event: 40 session-era POST streams (the tool runs on), 40
/// stateless ones (closing cancels the tool), 10 GET streams and 10 HTTP+SSE streams. Then a
/// new client is served, and no `chatter` is left running (none leaked, none stuck writing).
#[test]
fn cve_2025_53365_client_disconnect_mid_stream() {
    let ep = start(HttpConfig::default());
    let session = ep.open_session();
    let chatter = |id: i64| {
        rpc(
            id,
            "tools/call",
            json!({"name": "chatter", "_meta": {"progressToken": id}}),
        )
    };
    std::thread::scope(|s| {
        for worker in 0..4 {
            let session = &session;
            s.spawn(move || {
                for i in 0..10 {
                    let id = worker * 10 + i;
                    abort_after_first_event(
                        &ep,
                        &Req::post("/mcp")
                            .headers(&session_headers(session))
                            .json(&chatter(id)),
                    );
                    abort_after_first_event(
                        &ep,
                        &stateless_call(id, "chatter", json!({}), json!({"progressToken": id})),
                    );
                }
            });
        }
    });
    for _ in 0..10 {
        abort_after_first_event(
            &ep,
            &Req::get("/mcp")
                .headers(&session_headers(&session))
                .header("Accept", "text/event-stream"),
        );
        abort_after_first_event(&ep, &Req::get("/sse").header("Accept", "text/event-stream"));
    }
    ep.assert_still_serving();
    let fresh = ep.open_session();
    let r = ep.post(&rpc(1, "tools/list", json!({})), &session_headers(&fresh));
    assert!(r.json()["result"]["tools"].is_array(), "tools/list: {r}");
    // The session-era calls finish on their own (400 ms of chatter); the stateless ones were
    // cancelled by the disconnect.
    let deadline = Instant::now() + Duration::from_secs(5);
    while CHATTERING.load(Ordering::SeqCst) > 0 {
        assert!(
            Instant::now() < deadline,
            "{} chatter calls still running 5 s after their clients left",
            CHATTERING.load(Ordering::SeqCst)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = ep.post(
        &rpc(
            2,
            "tools/call",
            json!({"name": "tagged", "arguments": {"tag": "ok", "ms": 0}}),
        ),
        &session_headers(&session),
    );
    assert_eq!(
        result_text(&r.json()),
        "ok",
        "the first session still works: {r}"
    );
}

/// The requests that reach a panicking handler, and a harmless one to send after each.
fn panicking_requests() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/call", json!({"name": "panic_now"})),
        ("tools/call", json!({"name": "panic_later"})),
        ("tools/call", json!({"name": "panic_sync"})),
        ("resources/read", json!({"uri": "panic://resource"})),
        ("prompts/get", json!({"name": "panic_prompt"})),
    ]
}

fn ok_call() -> Value {
    json!({"name": "tagged", "arguments": {"tag": "after", "ms": 0}})
}

fn assert_internal_error(transport: &str, what: &Value, response: &Value) {
    assert_eq!(
        response["error"]["code"], -32603,
        "{transport}: a panic in {what} must be answered -32603: {response}"
    );
}

/// rust-sdk #106 (rmcp, closed "won't fix"): a `panic!` in a tool killed the spawned task and
/// nothing answered the request; the client waited until its timeout.
///
/// Through the in-process client in both eras, over Streamable HTTP in a session and
/// stateless, and over HTTP+SSE: a panic in a tool (before its first `.await`, after one, in a sync tool), in a
/// resource and in a prompt is answered -32603 for that id, and the next call works.
#[test]
fn rust_sdk_106_panicking_handlers_are_answered() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
            let server = Server::builder().build().unwrap();
            let client = TestClient::connect_to(server, version).await.unwrap();
            for (i, (method, mut params)) in panicking_requests().into_iter().enumerate() {
                if version == ProtocolVersion::V2026_07_28 {
                    params["_meta"] = stateless_meta();
                }
                let id = json!(i);
                let r = tokio::time::timeout(
                    TIMEOUT,
                    client.send_request(id.clone(), method, params.clone()),
                )
                .await
                .unwrap_or_else(|_| panic!("{version:?}: no answer in time to {method} {params}"))
                .unwrap_or_else(|| panic!("{version:?}: no answer at all to {method} {params}"));
                assert_internal_error(&format!("in-process {version:?}"), &params, &r);
                assert_eq!(r["id"], id, "{r}");
                let after = client.request("tools/call", ok_call()).await.unwrap();
                assert_eq!(after["content"][0]["text"], "after", "{version:?}");
            }
        }
    });

    let ep = start(HttpConfig::default());
    let session = ep.open_session();
    for (i, (method, params)) in panicking_requests().into_iter().enumerate() {
        let id = i as i64 + 1;
        let r = ep.post(&rpc(id, method, params.clone()), &session_headers(&session));
        assert_internal_error("HTTP session", &params, &r.json());
        assert_eq!(r.json()["id"], id, "{r}");
        let r = ep.post(
            &rpc(100 + id, "tools/call", ok_call()),
            &session_headers(&session),
        );
        assert_eq!(result_text(&r.json()), "after", "HTTP session: {r}");
    }
    for tool in ["panic_now", "panic_later", "panic_sync"] {
        let r = ep.send(&stateless_call(1, tool, json!({}), json!({})));
        assert_internal_error("HTTP 2026-07-28", &json!(tool), &r.json());
        let r = ep.send(&stateless_call(
            2,
            "tagged",
            json!({"tag": "after", "ms": 0}),
            json!({}),
        ));
        assert_eq!(result_text(&r.json()), "after", "HTTP 2026-07-28: {r}");
    }
    let (mut stream, post) = legacy_session(&ep);
    for (i, (method, params)) in panicking_requests().into_iter().enumerate() {
        let id = i as i64 + 1;
        post(&rpc(id, method, params.clone()));
        let answer = messages_until_response(&mut stream);
        let answer = answer.last().unwrap();
        assert_internal_error("HTTP+SSE", &params, answer);
        assert_eq!(answer["id"], id, "{answer}");
        post(&rpc(100 + id, "tools/call", ok_call()));
        let after = messages_until_response(&mut stream);
        assert_eq!(
            result_text(after.last().unwrap()),
            "after",
            "HTTP+SSE: {after:?}"
        );
    }
}

/// tower-mcp #1230/#1236: a panic in a handler (`SystemTime + Duration::MAX`) ended the stdio
/// server, and catching panics was opt-in. On our stdio transport a call is polled once on the
/// reader thread itself, so a panic there would take the reader down with it.
///
/// Over `serve_lines` (the stdio transport on a socket pair): every panicking handler is
/// answered -32603 for its id, the next line is answered, and the transport is still running.
#[test]
fn tower_mcp_1230_panic_does_not_end_the_stdio_server() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let input = theirs.try_clone().unwrap();
    let done = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = Server::builder().build().unwrap();
        rt.block_on(mcp_runtime::transport::serve_lines(server, input, theirs))
    });
    ours.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut reader = std::io::BufReader::new(ours.try_clone().unwrap());
    let mut writer = ours;
    let mut exchange = |message: Value| -> Value {
        writeln!(writer, "{message}").unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut reader, &mut line)
            .unwrap_or_else(|e| panic!("no answer to {message}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?} for {message}"))
    };
    let init = exchange(initialize_request("2025-11-25"));
    assert!(init["result"].is_object(), "{init}");
    for (i, (method, params)) in panicking_requests().into_iter().enumerate() {
        let id = i as i64 + 1;
        let r = exchange(rpc(id, method, params.clone()));
        assert_internal_error("stdio", &params, &r);
        assert_eq!(r["id"], id, "{r}");
        let r = exchange(rpc(100 + id, "tools/call", ok_call()));
        assert_eq!(
            result_text(&r),
            "after",
            "stdio after a panic in {params}: {r}"
        );
    }
    assert!(!done.is_finished(), "the stdio transport ended");
}

// ---------------------------------------------------------------------------------------------
// 1.5 Unbounded memory
// ---------------------------------------------------------------------------------------------

/// rust-sdk #1030 (rmcp): the stdio codec's default `max_length` is `usize::MAX`, so a peer
/// that never sends `\n` grows the read buffer until the process runs out of memory.
///
/// We send the quickstart 48 MiB without a newline (the line limit is 4 MiB), then `\n` and a
/// `ping`. We assert exactly one error for the long line (-32600, `id: null`), then the ping's
/// answer (the reader resynchronised at the newline), and a peak RSS that grew by far less
/// than what was sent.
#[test]
fn rust_sdk_1030_stdio_line_is_bounded() {
    let mut proc = Proc::spawn("quickstart", &[], &[]);
    proc.initialize();
    let pid = proc.child.id();
    let before = peak_rss_kib(pid);
    let chunk = vec![b'x'; MIB];
    for _ in 0..48 {
        proc.send_bytes(&chunk);
    }
    proc.send_line("");
    proc.send(rpc(7, "ping", json!({})));
    let error = proc.recv();
    assert_eq!(error["error"]["code"], -32600, "the long line: {error}");
    assert_eq!(error["id"], Value::Null, "{error}");
    let pong = proc.recv();
    assert_eq!(pong["id"], 7, "the ping after the long line: {pong}");
    assert!(pong["result"].is_object(), "{pong}");
    assert_eq!(
        proc.silent_for(Duration::from_millis(100)),
        None,
        "only one error"
    );
    let grew = peak_rss_kib(pid).saturating_sub(before);
    assert!(
        grew < 24 * 1024,
        "peak RSS grew by {grew} KiB while reading a 48 MiB line (limit 4 MiB)"
    );
}

/// Writes `head` and then `body` (from another thread, ignoring write errors: the server may
/// answer and close before it has read everything), and returns the response's status line.
fn status_of_raw(
    port: u16,
    head: String,
    body: impl FnOnce(&mut TcpStream) + Send + 'static,
) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let feeding = std::thread::spawn(move || body(&mut writer));
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(2).any(|w| w == b"\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    drop(stream);
    let _ = feeding.join();
    let text = String::from_utf8_lossy(&got);
    text.lines().next().unwrap_or("").to_owned()
}

fn post_head(port: u16, target: &str, framing: &str) -> String {
    format!(
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{framing}\r\nConnection: close\r\n\r\n"
    )
}

/// go-sdk #1055, rust-sdk #970, python-sdk #3095/#3336: POST bodies were read whole, without
/// a limit (Python even removed an earlier cap); all three now refuse more than 4 MiB with 413.
///
/// Against the quickstart (limit 4 MiB): an announced `Content-Length` of 4 MiB + 1 is 413 on
/// `/mcp` and on the HTTP+SSE `/messages` endpoint; a chunked body of 40 MiB is 413 and the
/// server's peak RSS grows by less than 2× the limit; a body of exactly 4 MiB is accepted.
#[test]
fn go_sdk_1055_request_body_is_capped() {
    let server = quickstart();
    let port = server.port;
    let limit = 4 * MIB;
    let pid = server.proc.child.id();
    let over = format!("Content-Length: {}", limit + 1);
    let status = status_of_raw(port, post_head(port, "/mcp", &over), |w| {
        let _ = w.write_all(b"{");
    });
    assert!(
        status.contains(" 413 "),
        "Content-Length over the limit: {status}"
    );

    let (_stream, endpoint) = open_legacy(&server);
    let status = status_of_raw(port, post_head(port, &endpoint, &over), |w| {
        let _ = w.write_all(b"{");
    });
    assert!(
        status.contains(" 413 "),
        "POST {endpoint} over the limit: {status}"
    );

    let before = peak_rss_kib(pid);
    let status = status_of_raw(
        port,
        post_head(port, "/mcp", "Transfer-Encoding: chunked"),
        |w| {
            let chunk = vec![b' '; MIB];
            for _ in 0..40 {
                let sent = write!(w, "{:x}\r\n", chunk.len())
                    .and_then(|()| w.write_all(&chunk))
                    .and_then(|()| w.write_all(b"\r\n"));
                if sent.is_err() {
                    return;
                }
            }
            let _ = w.write_all(b"0\r\n\r\n");
        },
    );
    assert!(status.contains(" 413 "), "40 MiB chunked: {status}");
    let grew = peak_rss_kib(pid).saturating_sub(before);
    assert!(
        grew < 8 * 1024,
        "peak RSS grew by {grew} KiB for a refused 40 MiB body (limit 4 MiB)"
    );

    // Exactly at the limit is allowed.
    let mut body = initialize_request("2025-11-25").to_string().into_bytes();
    body.resize(limit, b' ');
    let r = server.send(&Req::post("/mcp").body(body));
    assert_eq!(r.status(), 200, "a body of exactly 4 MiB: {r}");
    server.assert_still_serving();
}

/// rust-sdk #1244 (rmcp 2.1.0–3.2.0), python-sdk #1283/#1994/#3300, mark3labs/mcp-go #723,
/// go-sdk #1136: sessions of clients that never send DELETE (most clients) stayed in the
/// session map forever; rmcp and go-sdk have no cap at all.
///
/// With a cap of 4, we initialize 40 sessions without DELETE and assert at most 4 of the
/// issued ids are live afterwards (a `ping` in each: 404 for the rest).
#[test]
fn rust_sdk_1244_session_table_is_capped() {
    let ep = start(HttpConfig::default().max_sessions(4));
    let ids: Vec<String> = (0..40)
        .filter_map(|_| {
            let r = ep.post(&initialize_request("2025-11-25"), &[]);
            r.header("mcp-session-id").map(str::to_owned)
        })
        .collect();
    let live = ids
        .iter()
        .filter(|id| {
            let r = ep.post(&rpc(1, "ping", json!({})), &session_headers(id));
            r.status() == 200
        })
        .count();
    assert!(
        live <= 4,
        "{live} sessions live with a cap of 4 ({} issued)",
        ids.len()
    );
}

/// GHSA-9pj6-vhgr-3mwh (rmcp before 2.2, HIGH): an unauthenticated client could grow the
/// Streamable HTTP session table without bound, a remote denial of service.
///
/// The class, not only the instance: with a cap of 8, one unauthenticated client opens
/// sessions every way a session can be left behind (initialized and never used; opened with a
/// GET stream and abandoned by dropping the connection; a handshake never finished; deleted),
/// 25 rounds of each. The table stays within the cap, and afterwards a new client still gets a
/// session and can use it.
#[test]
fn ghsa_9pj6_vhgr_3mwh_unauthenticated_sessions_stay_bounded() {
    let cap = 8;
    let ep = start(HttpConfig::default().max_sessions(cap));
    let mut issued = Vec::new();
    for _ in 0..25 {
        // Initialized, then never used again.
        issued.push(ep.open_session());
        // A GET stream opened on the session, then the connection dropped.
        let id = ep.open_session();
        let stream = ep.open_stream(
            &Req::get("/mcp")
                .headers(&session_headers(&id))
                .header("Accept", "text/event-stream"),
        );
        assert_eq!(stream.head.status, 200, "GET stream: {}", stream.seen());
        drop(stream);
        issued.push(id);
        // `initialize` answered, `notifications/initialized` never sent.
        let r = ep.post(&initialize_request("2025-11-25"), &[]);
        assert_eq!(r.status(), 200, "initialize: {r}");
        issued.push(r.header("mcp-session-id").expect("a session id").to_owned());
        // Deleted.
        let id = ep.open_session();
        let r = ep.send(&Req::new("DELETE", "/mcp").headers(&session_headers(&id)));
        assert!(matches!(r.status(), 200 | 204), "DELETE: {r}");
        issued.push(id);
    }
    let live = issued
        .iter()
        .filter(|id| {
            ep.post(&rpc(1, "ping", json!({})), &session_headers(id))
                .status()
                == 200
        })
        .count();
    assert!(
        live <= cap,
        "{live} of {} sessions live with a cap of {cap}",
        issued.len()
    );
    let id = ep.open_session();
    let r = ep.post(&rpc(2, "ping", json!({})), &session_headers(&id));
    assert_eq!(r.status(), 200, "a new client after the flood: {r}");
    assert!(r.text().contains("\"result\""), "{r}");
}

/// PrefectHQ/fastmcp #5210: a cap with no way to free room (fastmcp disabled the SDK's idle
/// timeout) hit 10 000 sessions and answered 503 to everyone, for good: "a cap without
/// reaping is an outage". python-sdk #3395 caps and reaps.
///
/// With a cap of 4 and the default idle timeout (30 min), four idle sessions must not lock a
/// fifth client out: its `initialize` succeeds (an idle session makes room) and the table
/// stays within the cap.
#[test]
fn fastmcp_5210_a_full_session_table_evicts_idle_sessions() {
    let ep = start(HttpConfig::default().max_sessions(4));
    let ids: Vec<String> = (0..4).map(|_| ep.open_session()).collect();
    let r = ep.post(&initialize_request("2025-11-25"), &[]);
    assert_eq!(
        r.status(),
        200,
        "a fifth client with four idle sessions: {r}"
    );
    let fifth = r.header("mcp-session-id").expect("a session id").to_owned();
    let live = ids
        .iter()
        .chain([&fifth])
        .filter(|id| {
            ep.post(&rpc(1, "ping", json!({})), &session_headers(id))
                .status()
                == 200
        })
        .count();
    assert!(live <= 4, "{live} sessions live with a cap of 4");
}

/// python-sdk #3395, from its review: a half-open `initialize` (headers sent, body trickled or
/// never finished) pinned a session slot forever.
///
/// With a cap of 1, a client sends the head of an `initialize` and 10 of its 1000 body bytes,
/// then stalls; another client's `initialize` still gets the one slot (a session exists only
/// once a whole request has been read).
#[test]
fn python_sdk_3395_half_open_initialize_holds_no_slot() {
    let ep = start(HttpConfig::default().max_sessions(1));
    let mut stalled = TcpStream::connect(("127.0.0.1", ep.port)).unwrap();
    stalled
        .write_all(post_head(ep.port, "/mcp", "Content-Length: 1000").as_bytes())
        .unwrap();
    stalled.write_all(br#"{"jsonrpc"#).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let r = ep.post(&initialize_request("2025-11-25"), &[]);
    assert_eq!(
        r.status(),
        200,
        "initialize while another is half-open: {r}"
    );
    drop(stalled);
}

/// The TS SDK's example event store (`examples/shared/src/inMemoryEventStore.ts`) is an
/// unbounded `Map` of every event ever sent; the Python example keeps `deque(maxlen=100)` per
/// stream.
///
/// Through the public `EventStore` API of the default store: 10 000 events on one stream keep
/// at most the per-stream bound (newest last), 1 000 streams of one session keep at most 32,
/// and removing the session forgets all of it.
#[tokio::test]
async fn ts_sdk_example_event_store_is_bounded() {
    let store = MemoryEventStore::new(256);
    store.open("s", 0).await.unwrap();
    for seq in 1..=10_000u64 {
        store
            .append("s", 0, seq, bytes::Bytes::from(format!("event {seq}")))
            .await
            .unwrap();
    }
    let replay = store
        .replay("s", 0, 10_000 - 256)
        .await
        .unwrap()
        .expect("the stream is known");
    assert_eq!(replay.events.len(), 256, "events kept of one stream");
    assert_eq!(replay.events.last().map(|e| e.seq), Some(10_000));
    assert!(
        store.replay("s", 0, 0).await.unwrap().is_none(),
        "a resume from before the evicted events gets nothing, not a replay with a gap"
    );
    for stream in 1..=1_000u64 {
        // Streams are opened before their first event, as the server opens them.
        store.open("t", stream).await.unwrap();
        store
            .append("t", stream, stream, bytes::Bytes::from_static(b"x"))
            .await
            .unwrap();
    }
    let mut kept = 0;
    for s in 1..=1_000u64 {
        kept += usize::from(store.replay("t", s, 0).await.unwrap().is_some());
    }
    assert!(kept <= 32, "{kept} streams kept of one session");
    assert!(
        store.replay("t", 1_000, 0).await.unwrap().is_some(),
        "the newest stream is kept"
    );
    store.remove_session("s").await.unwrap();
    store.remove_session("t").await.unwrap();
    assert!(store.replay("s", 0, 0).await.unwrap().is_none());
    assert!(store.replay("t", 1_000, 0).await.unwrap().is_none());
}

/// The default store, noting which sessions it holds anything of.
struct WatchedStore {
    inner: MemoryEventStore,
    sessions: std::sync::Mutex<HashSet<String>>,
}

impl WatchedStore {
    fn new() -> WatchedStore {
        WatchedStore {
            inner: MemoryEventStore::new(256),
            sessions: Default::default(),
        }
    }

    fn inner(&self) -> &MemoryEventStore {
        &self.inner
    }

    fn note(&self, session: &str) {
        self.sessions.lock().unwrap().insert(session.to_owned());
    }

    fn holds(&self, session: &str) -> bool {
        self.sessions.lock().unwrap().contains(session)
    }
}

impl EventStore for WatchedStore {
    fn open<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        self.note(session);
        self.inner().open(session, stream)
    }

    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        event: bytes::Bytes,
    ) -> EventFuture<'a, ()> {
        self.note(session);
        self.inner().append(session, stream, seq, event)
    }

    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> EventFuture<'a, ()> {
        self.note(session);
        self.inner().finish(session, stream)
    }

    fn replay<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> EventFuture<'a, Option<mcp_runtime::transport::http::EventReplay>> {
        self.inner().replay(session, stream, after)
    }

    fn wait<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> mcp_runtime::transport::http::WaitFuture<'a> {
        self.inner().wait(session, stream, after)
    }

    /// Takes 50 ms, as a store across the network does: a `DELETE` answered before the
    /// removal finished would leave the session's events behind for a moment.
    fn remove_session<'a>(&'a self, session: &'a str) -> EventFuture<'a, ()> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            self.sessions.lock().unwrap().remove(session);
            self.inner().remove_session(session).await
        })
    }
}

/// Starts a server on a [`WatchedStore`] (sessions idle for 1 s expire).
fn start_watched() -> (Endpoint, std::sync::Arc<WatchedStore>) {
    let store = std::sync::Arc::new(WatchedStore::new());
    let ep = start(
        HttpConfig::default()
            .event_store(store.clone())
            .session_idle_timeout(Duration::from_secs(1)),
    );
    (ep, store)
}

fn delete_session(ep: &Endpoint, session: &str) {
    let r = ep.send(&Req::new("DELETE", "/mcp").headers(&session_headers(session)));
    assert_eq!(r.status(), 200, "DELETE: {r}");
}

/// The TS example store keeps events forever; rmcp #1244 and python-sdk #3300 kept per-session
/// state after the session ended. An event store must forget a session when it ends.
///
/// Through a store that notes which sessions it holds: a session that ran a streamed call and
/// was deleted, and one that expired while idle, are both forgotten.
#[test]
fn ts_sdk_example_event_store_forgets_ended_sessions() {
    let (ep, store) = start_watched();
    let done = ep.open_session();
    tagged_stream(&ep, &done, 1, "done");
    assert!(store.holds(&done), "the streamed call was recorded");
    delete_session(&ep, &done);
    assert!(!store.holds(&done), "a deleted session's events are kept");

    let idle = ep.open_session();
    tagged_stream(&ep, &idle, 1, "idle");
    let deadline = Instant::now() + Duration::from_secs(4);
    while store.holds(&idle) {
        assert!(
            Instant::now() < deadline,
            "an expired session's events are kept"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The same leak by another door: a session deleted while one of its calls is still
/// streaming. Whatever the stream still writes after the DELETE must not bring the session
/// back into the store, where nothing would ever remove it again.
#[test]
fn ts_sdk_example_event_store_forgets_sessions_deleted_mid_stream() {
    let (ep, store) = start_watched();
    let busy = ep.open_session();
    let mut stream = ep.open_stream(&Req::post("/mcp").headers(&session_headers(&busy)).json(
        &rpc(
            1,
            "tools/call",
            json!({"name": "chatter", "_meta": {"progressToken": 1}}),
        ),
    ));
    stream.expect_event("a first event");
    delete_session(&ep, &busy);
    drop(stream);
    // `chatter` runs 400 ms; give it time to write whatever it still would.
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        !store.holds(&busy),
        "events of a session deleted mid-call are kept"
    );
}

// ---------------------------------------------------------------------------------------------
// 1.6 URI templates: ReDoS and path traversal
// ---------------------------------------------------------------------------------------------

/// GHSA-8r9q-7v3j-jr4g / CVE-2026-0621 (TS SDK < 1.25.2): the regex for an exploded variable,
/// `([^/]+(?:,[^/]+)*)`, backtracks exponentially: `{/id*}` against `"/" + ","×50` hangs the
/// server. The fix also caps lengths before matching.
///
/// Our templates `redos://a{/id*}`, `redos://b/{id*}` and `redos://c/{+path}/end` get
/// `resources/read` for 100 000-character URIs of `,`, `/` and `%` that almost match; each is
/// answered (a result or an error) within 2 s, in both eras. So is the conformance example's
/// plain `test://template/{id}/data` against a 100 000-character id over stdio.
#[test]
fn cve_2026_0621_uri_template_redos() {
    const N: usize = 100_000;
    let uris = [
        format!("redos://a/{}", ",".repeat(N)),
        format!("redos://a{}", "/,".repeat(N / 2)),
        format!("redos://b/{}/", ",".repeat(N)),
        format!("redos://b/{}", "%".repeat(N)),
        format!("redos://c/{}x", "/".repeat(N)),
        format!("redos://c/{}/en", "a/".repeat(N / 2)),
        format!("redos://c/{}", "%2F".repeat(N / 3)),
    ];
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        for uri in &uris {
            let (tx, rx) = std::sync::mpsc::channel();
            let uri = uri.clone();
            let shown = format!("{}… ({} bytes)", &uri[..40], uri.len());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    let server = Server::builder().build().unwrap();
                    let client = TestClient::connect_to(server, version).await.unwrap();
                    let start = Instant::now();
                    let answer = client.request("resources/read", json!({"uri": uri})).await;
                    let _ = tx.send((start.elapsed(), answer.is_ok()));
                });
            });
            let (took, _) = rx
                .recv_timeout(Duration::from_secs(2))
                .unwrap_or_else(|_| panic!("{version:?}: resources/read {shown} took over 2 s"));
            assert!(
                took < Duration::from_secs(2),
                "{version:?}: {shown}: {took:?}"
            );
        }
    }
    // The simplest form, in a shipped example: conformance's `test://template/{id}/data`
    // against an id of 100 000 characters that is not followed by `/data`.
    let mut proc = Proc::spawn("conformance", &[], &[]);
    proc.initialize();
    let uri = format!("test://template/{}/datx", "a".repeat(N));
    let start = Instant::now();
    proc.request(1, "resources/read", json!({"uri": uri}));
    let answer = proc.recv();
    assert!(answer["error"].is_object(), "{answer}");
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "conformance: resources/read test://template/aaaa…/datx ({} bytes): {took:?}",
        uri.len()
    );
}

/// A ticket desk (examples/tickets) on a fresh database in a directory of its own, with
/// `attachments/ok.txt`, a sibling `attachments_evil/secret.txt`, an `outside/secret.txt`,
/// and a symlink `attachments/link` → `../outside`.
struct Desk {
    proc: Proc,
    dir: std::path::PathBuf,
    next: i64,
}

impl Desk {
    fn start() -> Desk {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-advisories-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["attachments", "attachments_evil", "outside"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::write(dir.join("attachments/ok.txt"), "fine").unwrap();
        std::fs::write(dir.join("attachments_evil/secret.txt"), "TOP SECRET").unwrap();
        std::fs::write(dir.join("outside/secret.txt"), "TOP SECRET").unwrap();
        std::os::unix::fs::symlink("../outside", dir.join("attachments/link")).unwrap();
        let db = dir.join("tickets.sqlite3");
        let mut proc = Proc::spawn("tickets", &[], &[("TICKETS_DB", db.to_str().unwrap())]);
        proc.initialize();
        Desk { proc, dir, next: 1 }
    }

    fn read(&mut self, uri: &str) -> Value {
        self.next += 1;
        self.proc
            .request(self.next, "resources/read", json!({"uri": uri}));
        self.proc.recv()
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// CVE-2025-53110 / GHSA-hc55-p739-j48w (filesystem server): containment was checked by string
/// prefix, so `/allowed_evil` passed for `/allowed`. python-sdk #2356 (default policy for
/// templated resources): reject `..` components, absolute paths and NUL, also when they arrive
/// percent-encoded (`%2E%2E/`, `..%2F`, `%00`).
///
/// The ticket desk's `attachments://{+path}` goes through `safe_join`. We assert `ok.txt` is
/// served and every escape to the sibling `attachments_evil` (plain, encoded, through a
/// subdirectory), an absolute path and a NUL are errors that leak nothing.
#[test]
fn cve_2025_53110_templated_path_stays_inside_its_base() {
    let mut desk = Desk::start();
    let ok = desk.read("attachments://ok.txt");
    assert_eq!(ok["result"]["contents"][0]["text"], "fine", "{ok}");
    for uri in [
        "attachments://../attachments_evil/secret.txt",
        "attachments://%2E%2E/attachments_evil/secret.txt",
        "attachments://%2e%2e%2fattachments_evil%2fsecret.txt",
        "attachments://..%2Fattachments_evil%2Fsecret.txt",
        "attachments://sub/../../attachments_evil/secret.txt",
        "attachments://./../attachments_evil/secret.txt",
        "attachments:///etc/passwd",
        "attachments://%2Fetc%2Fpasswd",
        "attachments://ok.txt%00.png",
    ] {
        let r = desk.read(uri);
        assert!(r["error"]["code"].is_i64(), "{uri} was not refused: {r}");
        let text = r.to_string();
        assert!(
            !text.contains("TOP SECRET") && !text.contains("root:"),
            "{uri} leaked: {text}"
        );
    }
}

/// CVE-2025-53109 / GHSA-q66q-fx2p-7w4m (filesystem server, CVSS4 8.4): a symlink inside the
/// allowed root pointed outside it and was followed. The fix resolves the real path, then
/// checks containment again.
///
/// `attachments/link` → `../outside`: reading `attachments://link/secret.txt` must be refused.
#[test]
fn cve_2025_53109_symlink_inside_the_base_is_not_followed() {
    let mut desk = Desk::start();
    let r = desk.read("attachments://link/secret.txt");
    assert!(
        !r.to_string().contains("TOP SECRET"),
        "a symlink out of the base was followed: {r}"
    );
    assert!(r["error"]["code"].is_i64(), "{r}");
}

// ---------------------------------------------------------------------------------------------
// 1.7 Logs
// ---------------------------------------------------------------------------------------------

/// rmcp `service.rs` logs every received notification's whole payload at INFO (amplification,
/// PII in logs); IBM/mcp-context-forge #3000/#3227: CR/LF in request fields forged log lines.
///
/// The quickstart over HTTP, logging at `info` (its default), gets a call whose arguments
/// carry a marker, an unknown method and a tool name with `\n` and a forged log line in them,
/// and a request path with an encoded CR LF. Its log must contain neither the marker nor a
/// line that starts with the forged text.
#[test]
fn rmcp_payloads_are_not_logged_and_context_forge_3000_lines_are_not_forged() {
    let mut proc = Proc::spawn(
        "quickstart",
        &["--http", "127.0.0.1:0"],
        &[("RUST_LOG", "info")],
    );
    let mut log = String::new();
    let deadline = Instant::now() + TIMEOUT;
    let port = loop {
        log.push_str(&proc.stderr_text());
        if let Some(rest) = log.split("serving MCP on http://127.0.0.1:").nth(1) {
            break rest
                .split('/')
                .next()
                .and_then(|p| p.parse::<u16>().ok())
                .expect("a port");
        }
        assert!(Instant::now() < deadline, "no `serving MCP on` line: {log}");
    };
    let ep = Endpoint { port };
    const MARKER: &str = "PAYLOAD-MARKER-5d41402a";
    const FORGED: &str = "FORGED 2026-01-01T00:00:00Z  INFO admin logged in";
    let session = ep.open_session();
    let h = session_headers(&session);
    let r = ep.post(
        &rpc(
            1,
            "tools/call",
            json!({"name": "greet", "arguments": {"name": MARKER}}),
        ),
        &h,
    );
    assert!(result_text(&r.json()).contains(MARKER), "{r}");
    ep.post(
        &rpc(2, &format!("nope\n{FORGED}"), json!({"x": MARKER})),
        &h,
    );
    ep.post(
        &rpc(
            3,
            "tools/call",
            json!({"name": format!("nope\r\n{FORGED}"), "arguments": {}}),
        ),
        &h,
    );
    ep.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": MARKER}}),
        &h,
    );
    ep.send(&Req::get("/mcp%0d%0aFORGED").header("Accept", "text/event-stream"));
    ep.assert_still_serving();
    std::thread::sleep(Duration::from_millis(200));
    log.push_str(&proc.stderr_text());
    assert!(
        log.contains("http request"),
        "the server logs requests at info: {log}"
    );
    assert!(
        !log.contains(MARKER),
        "a payload reached the info log:\n{log}"
    );
    assert!(
        !log.lines().any(|l| l.trim_start().starts_with("FORGED")),
        "a request forged a log line:\n{log}"
    );
}

// ---------------------------------------------------------------------------------------------
// 1.8 The client: what it sends, and where
// ---------------------------------------------------------------------------------------------

/// GHSA-9g45-5xwm-f3wc / CVE-2026-64684 (rmcp before 2.1.0, client side): the Streamable HTTP
/// client followed a server's cross-origin 307/308 redirect (reqwest's default policy) and sent
/// the caller's custom headers (`X-Api-Key`, …) on to the new origin, where only
/// `Authorization` was stripped.
///
/// `mcp_runtime::client` follows no redirect at all: a 3xx is `ClientError::Status` naming the
/// `Location` it did not follow. A server redirects every path that carries the configured
/// headers (`Authorization` and `X-Api-Key` here) to another origin: the Streamable HTTP
/// `POST` (301, 302, 303, 307, 308), the session's `GET` stream, HTTP+SSE's `GET` and its
/// `POST`s; and an HTTP+SSE `endpoint` event names another origin. The first origin sees the
/// headers; the other origin sees no request at all.
#[tokio::test(flavor = "multi_thread")]
async fn ghsa_9g45_5xwm_f3wc_no_headers_across_origins() {
    use mcp_runtime::client::{Client, ClientError, ProtocolChoice};
    use support::raw_server::{RawServer, session_basics};

    const SECRET: &str = "Bearer 9g45-secret";
    let elsewhere = RawServer::start(|_req, mut conn| {
        Box::pin(async move {
            conn.json(200, &json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
                .await
                .ok()?;
            Some(conn)
        })
    })
    .await;
    let away = elsewhere.url("/capture");
    let client = || {
        Client::builder()
            .request_timeout(Duration::from_secs(10))
            .header("Authorization", SECRET)
            .header("X-Api-Key", SECRET)
    };
    let assert_refused = |what: &str, err: ClientError, status: u16| match err {
        ClientError::Status { status: s, body } if s == status => {
            assert!(
                body.contains(&away) && body.contains("not followed"),
                "{what}: {body}"
            )
        }
        other => panic!("{what}: expected HTTP {status}, got {other:?}"),
    };
    let assert_sent_here = |what: &str, origin: &RawServer| {
        let seen = origin.seen();
        assert!(!seen.is_empty(), "{what}: no request reached the server");
        for req in seen {
            assert_eq!(req.header("authorization"), Some(SECRET), "{what}");
            assert_eq!(req.header("x-api-key"), Some(SECRET), "{what}");
        }
    };

    // Streamable HTTP: the POST.
    for status in [301u16, 302, 303, 307, 308] {
        let to = away.clone();
        let origin = RawServer::start(move |_req, mut conn| {
            let to = to.clone();
            Box::pin(async move {
                conn.respond(status, &[("Location", &to)], b"").await.ok()?;
                Some(conn)
            })
        })
        .await;
        for protocol in [ProtocolChoice::Auto, ProtocolChoice::Stateless] {
            let what = format!("POST answered {status} ({protocol:?})");
            let err = client()
                .protocol(protocol)
                .connect(&origin.url("/mcp"))
                .await
                .err()
                .expect("a redirect is not followed");
            assert_refused(&what, err, status);
        }
        assert_sent_here("POST", &origin);
    }

    // Streamable HTTP: the session's GET stream (the POSTs are answered).
    let to = away.clone();
    let origin = RawServer::start(move |req, mut conn| {
        let to = to.clone();
        Box::pin(async move {
            if req.method == "GET" {
                conn.respond(307, &[("Location", &to)], b"").await.ok()?;
                return Some(conn);
            }
            match session_basics(req, conn).await {
                Ok(conn) => conn,
                Err((req, mut conn)) => {
                    let answer =
                        json!({"jsonrpc": "2.0", "id": req.json()["id"], "result": {"tools": []}});
                    conn.json(200, &answer).await.ok()?;
                    Some(conn)
                }
            }
        })
    })
    .await;
    let session = client()
        .protocol(ProtocolChoice::Session(ProtocolVersion::V2025_11_25))
        .connect(&origin.url("/mcp"))
        .await
        .unwrap();
    assert!(session.list_tools().await.unwrap().is_empty());
    session.close().await;
    assert!(origin.seen().iter().any(|r| r.method == "GET"));
    assert_sent_here("the GET stream", &origin);

    // HTTP+SSE: the GET of the stream.
    let to = away.clone();
    let origin = RawServer::start(move |_req, mut conn| {
        let to = to.clone();
        Box::pin(async move {
            conn.respond(302, &[("Location", &to)], b"").await.ok()?;
            Some(conn)
        })
    })
    .await;
    let err = client()
        .connect_sse(&origin.url("/sse"))
        .await
        .err()
        .unwrap();
    assert_refused("HTTP+SSE GET", err, 302);
    assert_sent_here("HTTP+SSE GET", &origin);

    // HTTP+SSE: the POSTs to its endpoint, then an endpoint on another origin.
    for endpoint in ["/messages?s=1".to_owned(), away.clone()] {
        let to = away.clone();
        let event = format!("event: endpoint\ndata: {endpoint}\n\n");
        let origin = RawServer::start(move |req, mut conn| {
            let (to, event) = (to.clone(), event.clone());
            Box::pin(async move {
                if req.method == "GET" {
                    conn.open_body(200, "text/event-stream").await.ok()?;
                    conn.write(event.as_bytes()).await.ok()?;
                    return conn.hold().await;
                }
                conn.respond(307, &[("Location", &to)], b"").await.ok()?;
                Some(conn)
            })
        })
        .await;
        let err = client()
            .connect_sse(&origin.url("/sse"))
            .await
            .err()
            .unwrap();
        if endpoint.starts_with('/') {
            assert_refused("HTTP+SSE POST", err, 307);
        } else {
            assert!(matches!(err, ClientError::Protocol(_)), "{err:?}");
            assert!(err.to_string().contains("another origin"), "{err}");
        }
        assert_sent_here("HTTP+SSE", &origin);
    }

    assert_eq!(
        elsewhere.requests(),
        0,
        "the other origin was sent {:?}",
        elsewhere.seen()
    );
}

/// GHSA-33f5-2c5q-wgwj (rmcp before 2.0, OAuth client): the `resource` of a server's protected
/// resource metadata was not checked against the server being called, so a server (or whoever
/// answers for its metadata) could have the client ask for, and then send, a token meant for
/// another resource. The metadata must name the server itself (or a prefix of it on its own
/// origin): here it names another host, another port, a sibling path; the client refuses
/// with `ClientError::Authorization` before asking the authorization server anything, and no
/// request carries a token.
#[tokio::test(flavor = "multi_thread")]
async fn ghsa_33f5_2c5q_wgwj_metadata_for_another_resource_is_refused() {
    use mcp_runtime::client::oauth::OAuthConfig;
    use mcp_runtime::client::{Client, ClientError};
    use support::oauth::{Approve, Options, World};

    for other in [
        "https://evil.example/mcp",
        "http://127.0.0.1:1/mcp",
        "{base}/other",
        "{base}/mcp/deeper",
    ] {
        let world = World::start(Options {
            resource: Some(other.to_owned()),
            ..Options::default()
        })
        .await;
        let resource = other.replace("{base}", &world.url.replace("/mcp", ""));
        let err = Client::builder()
            .request_timeout(Duration::from_secs(20))
            .oauth(OAuthConfig::authorization_code(Approve))
            .connect(&world.url)
            .await
            .err()
            .unwrap_or_else(|| panic!("{resource}: connected"));
        match err {
            ClientError::Authorization(why) => {
                assert!(why.contains("refused") && why.contains(&resource), "{why}")
            }
            other => panic!("{resource}: expected an authorization error, got {other:?}"),
        }
        assert_eq!(
            world.auth.requests(),
            0,
            "{resource}: the authorization server was asked"
        );
        for r in world.mcp.seen() {
            assert_eq!(
                r.header("authorization"),
                None,
                "{resource}: a token was sent"
            );
        }
    }
}
