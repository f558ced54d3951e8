//! `mcp_runtime::client` against servers that misbehave (issue #27, part 1): every exchange
//! ends within its deadline with a clear `ClientError`, and what the client reads is bounded.
//! The servers are scripted on raw sockets (`support::raw_server`) or are shell scripts on
//! stdio, so a test controls every byte; none needs the example binaries.

mod support;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::{Client, ClientBuilder, ClientError, ProtocolChoice, Stderr};
use serde_json::{Value, json};
use support::raw_server::{Conn, RawRequest, RawServer, Reply, answer, session_basics};

const SESSION: ProtocolChoice = ProtocolChoice::Session(ProtocolVersion::V2025_11_25);
/// The request timeout of these tests: short, so that a test that passes is fast.
const DEADLINE: Duration = Duration::from_millis(300);
/// How late past its deadline an outcome may come on a loaded machine.
const SLACK: Duration = Duration::from_secs(3);

/// Runs `fut`, failing the test (instead of hanging it) when it has no outcome within `limit`.
async fn within<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no outcome within {limit:?}: the client hangs"))
}

fn builder() -> ClientBuilder {
    Client::builder()
        .info("client-hostile", "1.0.0")
        .request_timeout(DEADLINE)
}

/// For the tests of sizes and counts: a deadline no loaded machine reaches.
fn patient() -> ClientBuilder {
    builder().request_timeout(Duration::from_secs(20))
}

/// A session-era server whose answers to everything but the handshake come from `script`.
async fn session_server<F>(script: F) -> RawServer
where
    F: Fn(RawRequest, Conn) -> Reply + Send + Sync + 'static,
{
    let script = Arc::new(script);
    RawServer::start(move |req, conn| {
        let script = script.clone();
        Box::pin(async move {
            match session_basics(req, conn).await {
                Ok(conn) => conn,
                Err((req, conn)) => script(req, conn).await,
            }
        })
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------------------------------

/// A server that accepts the connection and reads the request but never answers held
/// `connect` forever: the timeouts started only after the response head.
#[tokio::test(flavor = "multi_thread")]
async fn connect_to_a_server_that_never_answers_ends_at_its_deadline() {
    let server = RawServer::start(|_req, conn| Box::pin(conn.hold())).await;
    for protocol in [ProtocolChoice::Auto, SESSION, ProtocolChoice::Stateless] {
        let started = Instant::now();
        let result = within(
            Duration::from_secs(10),
            "connect",
            builder().protocol(protocol).connect(&server.url("/mcp")),
        )
        .await;
        let err = result.err().expect("nothing to connect to");
        assert!(
            matches!(err, ClientError::Timeout(_)),
            "{protocol:?}: {err:?}"
        );
        assert!(started.elapsed() < 2 * DEADLINE + SLACK, "{protocol:?}");
    }
}

/// Connecting is bounded as a whole by `connect_timeout`, whatever the request timeout:
/// over Streamable HTTP (probe, then `initialize`), HTTP+SSE and stdio (a probe the server
/// never answers, then `initialize`).
#[tokio::test(flavor = "multi_thread")]
async fn connect_timeout_bounds_the_whole_handshake() {
    let server = RawServer::start(|_req, conn| Box::pin(conn.hold())).await;
    let connect = || {
        Client::builder()
            .request_timeout(Duration::from_secs(60))
            .connect_timeout(DEADLINE)
    };
    let mut silent = tokio::process::Command::new("sh");
    silent.args(["-c", "exec sleep 600"]);
    let (mcp, sse) = (server.url("/mcp"), server.url("/sse"));
    let attempts: Vec<(&str, std::pin::Pin<Box<dyn Future<Output = _> + Send>>)> = vec![
        ("connect", Box::pin(connect().connect(&mcp))),
        ("connect_sse", Box::pin(connect().connect_sse(&sse))),
        ("spawn", Box::pin(connect().spawn(silent))),
    ];
    for (what, attempt) in attempts {
        let started = Instant::now();
        let err = within(Duration::from_secs(10), what, attempt)
            .await
            .err()
            .expect("nothing answers");
        assert!(
            matches!(err, ClientError::Timeout(d) if d == DEADLINE),
            "{what}: {err:?}"
        );
        assert!(started.elapsed() < DEADLINE + SLACK, "{what}");
    }
}

/// A response head and then nothing (or a trickle) held the request forever: the body was read
/// with no deadline. The next request on the same client is answered.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_stops_or_trickles_ends_at_the_deadline() {
    let lists = Arc::new(AtomicUsize::new(0));
    let seen = lists.clone();
    let server = session_server(move |req, mut conn| {
        let n = seen.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            match n {
                // The head, one byte of a 1000-byte body, and nothing more.
                0 => {
                    let head = "HTTP/1.1 200 X\r\nContent-Type: application/json\r\n\
                                Content-Length: 1000\r\n\r\n{";
                    conn.write(head.as_bytes()).await.ok()?;
                    conn.hold().await
                }
                // A byte every 50 ms.
                1 => {
                    let head = "HTTP/1.1 200 X\r\nContent-Type: application/json\r\n\
                                Content-Length: 100000\r\n\r\n";
                    conn.write(head.as_bytes()).await.ok()?;
                    loop {
                        conn.write(b" ").await.ok()?;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                // An SSE answer whose one event trickles, a byte every 50 ms.
                2 => {
                    conn.open_body(200, "text/event-stream").await.ok()?;
                    conn.write(b"data: ").await.ok()?;
                    loop {
                        conn.write(b" ").await.ok()?;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                _ => {
                    conn.json(200, &answer(&req, json!({"tools": []})))
                        .await
                        .ok()?;
                    Some(conn)
                }
            }
        })
    })
    .await;
    let client = builder()
        .protocol(SESSION)
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    for case in [
        "a head and no body",
        "a trickled body",
        "a trickled SSE event",
    ] {
        let started = Instant::now();
        let err = within(Duration::from_secs(10), case, client.list_tools())
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout(_)), "{case}: {err:?}");
        assert!(started.elapsed() < DEADLINE + SLACK, "{case}");
    }
    let tools = client.list_tools().await.unwrap();
    assert!(tools.is_empty());
}

/// HTTP+SSE: a server that never answers the `GET` of its stream held `connect_sse` forever.
#[tokio::test(flavor = "multi_thread")]
async fn http_sse_stream_that_never_opens_ends_at_the_deadline() {
    let server = RawServer::start(|_req, conn| Box::pin(conn.hold())).await;
    let started = Instant::now();
    let result = within(
        Duration::from_secs(10),
        "connect_sse",
        builder().connect_sse(&server.url("/sse")),
    )
    .await;
    let err = result.err().expect("no stream");
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < DEADLINE + SLACK);
}

/// A stdio server that stops reading its stdin blocked every send (a message larger than the
/// pipe's buffer never finished writing, and the deadline only started after it): each request
/// now ends at its deadline, and the client closes.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_that_stops_reading_cannot_block_requests() {
    // Answers `initialize`, then never reads again.
    let script = r#"
        read -r line
        id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
        printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"deaf","version":"0"}}}\n' "$id"
        exec sleep 600
    "#;
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", script]);
    let client = builder()
        .protocol(SESSION)
        .stderr(Stderr::Null)
        .spawn(command)
        .await
        .unwrap();
    // Larger than a pipe's buffer (64 KiB on Linux).
    let big = "x".repeat(1024 * 1024);
    for attempt in 0..3 {
        let started = Instant::now();
        let err = within(
            Duration::from_secs(10),
            "a call to a deaf server",
            client.call_tool("echo", json!({ "text": big })),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ClientError::Timeout(_)), "{attempt}: {err:?}");
        assert!(started.elapsed() < DEADLINE + SLACK, "{attempt}");
    }
    // A notification (no answer to wait for) is sent within the deadline too.
    let started = Instant::now();
    let err = within(
        Duration::from_secs(10),
        "a notification to a deaf server",
        client.notify("notifications/message", json!({ "data": big })),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ClientError::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < DEADLINE + SLACK);
    within(Duration::from_secs(10), "close", client.close()).await;
}

// ---------------------------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------------------------

/// HTTP+SSE: a `500` whose body never ends was read with `collect()` and no limit (1 GiB in
/// 7 s in the audit). Only the start of it is read now, and the error is the status.
#[tokio::test(flavor = "multi_thread")]
async fn http_sse_error_body_is_bounded() {
    const ENDLESS: u64 = 128 * 1024 * 1024;
    let server = RawServer::start(|req, mut conn| {
        Box::pin(async move {
            if req.method == "GET" {
                conn.open_body(200, "text/event-stream").await.ok()?;
                conn.write(b"event: endpoint\ndata: /messages?s=1\n\n")
                    .await
                    .ok()?;
                return conn.hold().await;
            }
            conn.open_body(500, "text/plain").await.ok()?;
            let chunk = vec![b'x'; 64 * 1024];
            let mut sent = 0;
            while sent < ENDLESS {
                conn.write(&chunk).await.ok()?;
                sent += chunk.len() as u64;
            }
            conn.hold().await
        })
    })
    .await;
    let started = Instant::now();
    let result = within(
        Duration::from_secs(10),
        "connect_sse",
        builder().connect_sse(&server.url("/sse")),
    )
    .await;
    let err = result.err().expect("the server fails every POST");
    match &err {
        ClientError::Status { status: 500, body } => {
            assert!(body.len() <= 64 * 1024, "{} bytes kept", body.len())
        }
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    assert!(started.elapsed() < DEADLINE + SLACK);
    // What the client read is at most what the server could write before the client hung up
    // (the socket buffers on loopback hold a few MiB).
    assert!(
        server.written() < 32 * 1024 * 1024,
        "the server wrote {} bytes",
        server.written()
    );
}

/// Streamable HTTP: the same `500` with a body that never ends is read up to 64 KiB, and the
/// error is the status (it was a protocol error saying the body was too large).
#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_error_body_is_bounded() {
    let server = session_server(|_req, mut conn| {
        Box::pin(async move {
            conn.open_body(500, "text/plain").await.ok()?;
            let chunk = vec![b'x'; 64 * 1024];
            loop {
                conn.write(&chunk).await.ok()?;
            }
        })
    })
    .await;
    let client = builder()
        .protocol(SESSION)
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    let err = within(Duration::from_secs(10), "list_tools", client.list_tools())
        .await
        .unwrap_err();
    match &err {
        ClientError::Status { status: 500, body } => assert!(body.len() <= 64 * 1024),
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    assert!(server.written() < 32 * 1024 * 1024);
}

/// One message over `max_message_bytes` fails its request with `TooLarge`, whichever way it
/// comes (a JSON body, an SSE event, an SSE line that never ends), and the client goes on.
#[tokio::test(flavor = "multi_thread")]
async fn oversized_messages_are_too_large() {
    const LIMIT: usize = 64 * 1024;
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let server = session_server(move |req, mut conn| {
        let n = seen.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            let big = "d".repeat(4 * LIMIT);
            let tools = json!({"tools": [{"name": "t", "description": big, "inputSchema": {"type": "object"}}]});
            match n {
                0 => conn.json(200, &answer(&req, tools)).await.ok()?,
                1 => {
                    conn.open_body(200, "text/event-stream").await.ok()?;
                    conn.event(&answer(&req, tools)).await.ok()?;
                    return conn.hold().await;
                }
                2 => {
                    conn.open_body(200, "text/event-stream").await.ok()?;
                    conn.write(b"data: ").await.ok()?;
                    let chunk = vec![b'x'; 16 * 1024];
                    loop {
                        conn.write(&chunk).await.ok()?;
                    }
                }
                _ => conn.json(200, &answer(&req, json!({"tools": []}))).await.ok()?,
            }
            Some(conn)
        })
    })
    .await;
    let client = patient()
        .protocol(SESSION)
        .max_message_bytes(LIMIT)
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    for case in ["a JSON body", "an SSE event", "an SSE line that never ends"] {
        let err = within(Duration::from_secs(10), case, client.list_tools())
            .await
            .unwrap_err();
        match err {
            ClientError::TooLarge { limit, .. } => assert_eq!(limit, LIMIT as u64, "{case}"),
            other => panic!("{case}: expected TooLarge, got {other:?}"),
        }
    }
    assert!(client.list_tools().await.unwrap().is_empty());
    assert!(server.written() < 16 * 1024 * 1024);
}

/// A stdio server's line over `max_message_bytes` fails what waits with `TooLarge`; the rest
/// of the line is never read, so the connection ends and later requests fail at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_line_over_the_limit_is_too_large() {
    let script = r#"
        read -r line
        id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
        printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"long","version":"0"}}}\n' "$id"
        read -r line
        read -r line
        head -c 4194304 /dev/zero | tr '\0' x
        exec sleep 600
    "#;
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", script]);
    let client = patient()
        .protocol(SESSION)
        .max_message_bytes(64 * 1024)
        .stderr(Stderr::Null)
        .spawn(command)
        .await
        .unwrap();
    let err = within(Duration::from_secs(10), "list_tools", client.list_tools())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::TooLarge { limit: 65536, .. }),
        "{err:?}"
    );
    let started = Instant::now();
    let err = within(Duration::from_secs(10), "after", client.list_tools())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Transport(_)), "{err:?}");
    assert!(started.elapsed() < SLACK);
    within(Duration::from_secs(10), "close", client.close()).await;
}

/// A tool list of `per_page` tools of about 1 KiB each per page, with a fresh cursor each time,
/// for `pages` pages (then no cursor).
fn fresh_cursor_pages(pages: usize, per_page: usize) -> impl Fn(RawRequest, Conn) -> Reply {
    move |req, mut conn| {
        Box::pin(async move {
            let msg = req.json();
            let page: usize = msg
                .pointer("/params/cursor")
                .and_then(Value::as_str)
                .and_then(|c| c.strip_prefix('c'))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let tools: Vec<Value> = (0..per_page)
                .map(|i| {
                    json!({
                        "name": format!("t{page}_{i}"),
                        "description": "d".repeat(1000),
                        "inputSchema": {"type": "object"}
                    })
                })
                .collect();
            let mut result = json!({ "tools": tools });
            if page + 1 < pages {
                result["nextCursor"] = json!(format!("c{}", page + 1));
            }
            conn.json(200, &answer(&req, result)).await.ok()?;
            Some(conn)
        })
    }
}

/// `list_tools` followed fresh cursors for up to 10,000 pages keeping every item (~90 MiB/s
/// in the audit): the items and bytes across pages are bounded, by default and as configured.
#[tokio::test(flavor = "multi_thread")]
async fn lists_are_bounded_across_pages() {
    // 2,000 pages of 50 KiB: 100 MiB if nothing stops the client; the default bound on bytes
    // (32 MiB) does.
    let server = session_server(fresh_cursor_pages(2_000, 50)).await;
    let url = server.url("/mcp");
    let client = patient().protocol(SESSION).connect(&url).await.unwrap();
    let result = within(Duration::from_secs(60), "list_tools", client.list_tools()).await;
    match result.expect_err("a list past the bounds is an error") {
        ClientError::TooLarge { what, limit } => {
            assert!(what.starts_with("tools/list"), "{what}");
            assert_eq!(limit, 32 * 1024 * 1024);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(
        server.written() < 40 * 1024 * 1024,
        "the client read {} bytes of pages",
        server.written()
    );
    // Configured: 120 items (the third page of 50 passes it), 100 KiB (the second page).
    for (client, pages) in [
        (patient().max_list_items(120), 3),
        (patient().max_list_bytes(100 * 1024), 2),
    ] {
        let client = client.protocol(SESSION).connect(&url).await.unwrap();
        let before = server.requests();
        let err = client.list_tools().await.unwrap_err();
        assert!(matches!(err, ClientError::TooLarge { .. }), "{err:?}");
        assert_eq!(server.requests() - before, pages, "{err}");
    }
    // Within the bounds, every page is read.
    let server = session_server(fresh_cursor_pages(3, 50)).await;
    let client = patient()
        .protocol(SESSION)
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    assert_eq!(client.list_tools().await.unwrap().len(), 150);
}

/// A server that sends a cursor it sent before loops: the client stops at once, where it
/// followed 10,000 pages (a cycle) or silently returned a partial list (the same cursor twice).
#[tokio::test(flavor = "multi_thread")]
async fn lists_stop_at_a_cursor_seen_before() {
    for cycle in [1usize, 2, 3] {
        let script = move |req: RawRequest, mut conn: Conn| -> Reply {
            Box::pin(async move {
                let msg = req.json();
                let n: usize = msg
                    .pointer("/params/cursor")
                    .and_then(Value::as_str)
                    .and_then(|c| c.strip_prefix('c'))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let next = format!("c{}", n % cycle + 1);
                let result = json!({
                    "tools": [{"name": format!("t{n}"), "inputSchema": {"type": "object"}}],
                    "nextCursor": next
                });
                conn.json(200, &answer(&req, result)).await.ok()?;
                Some(conn)
            })
        };
        let server = session_server(script).await;
        let client = patient()
            .protocol(SESSION)
            .connect(&server.url("/mcp"))
            .await
            .unwrap();
        let before = server.requests();
        let result = within(Duration::from_secs(30), "list_tools", client.list_tools()).await;
        let err = result.expect_err("a cursor loop is an error");
        assert!(matches!(err, ClientError::Protocol(_)), "{cycle}: {err:?}");
        assert!(err.to_string().contains("cursor"), "{err}");
        let pages = server.requests() - before;
        assert!(pages <= cycle + 2, "cycle {cycle}: {pages} pages requested");
        client.close().await;
    }
}

// ---------------------------------------------------------------------------------------------
// Requests from the server
// ---------------------------------------------------------------------------------------------

/// A flood of `elicitation/create` spawned one task per request with no limit. A bounded
/// number are answered by the handler at a time; each of the others gets a JSON-RPC error.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_server_requests_is_bounded() {
    const FLOOD: usize = 1_000;
    let (errors_tx, mut errors) = tokio::sync::watch::channel(0usize);
    let errors_tx = Arc::new(errors_tx);
    let server = RawServer::start(move |req, mut conn| {
        let errors_tx = errors_tx.clone();
        Box::pin(async move {
            let msg = req.json();
            if req.method == "GET" {
                conn.open_body(200, "text/event-stream").await.ok()?;
                for i in 0..FLOOD {
                    let ask = json!({
                        "jsonrpc": "2.0", "id": format!("s{i}"), "method": "elicitation/create",
                        "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
                    });
                    conn.event(&ask).await.ok()?;
                }
                return conn.hold().await;
            }
            if msg.get("method").is_none() && msg.get("error").is_some() {
                errors_tx.send_modify(|n| *n += 1);
            }
            match session_basics(req, conn).await {
                Ok(conn) => conn,
                Err((_, mut conn)) => {
                    conn.respond(202, &[], b"").await.ok()?;
                    Some(conn)
                }
            }
        })
    })
    .await;
    let in_handler = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (count, peak) = (in_handler.clone(), most.clone());
    const AT_ONCE: usize = 8;
    let client = patient()
        .protocol(SESSION)
        .max_server_requests(AT_ONCE)
        .on_elicitation(move |_req| {
            let now = count.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            // The user never answers.
            std::future::pending()
        })
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    within(
        Duration::from_secs(20),
        "the refusals",
        errors.wait_for(|n| *n == FLOOD - AT_ONCE),
    )
    .await
    .unwrap();
    assert_eq!(most.load(Ordering::SeqCst), AT_ONCE);
    assert_eq!(in_handler.load(Ordering::SeqCst), AT_ONCE);
    drop(client);
}

/// A 2026-07-28 `InputRequiredResult` naming more input requests than the client answers at
/// once is refused as a protocol error, before any handler runs.
#[tokio::test(flavor = "multi_thread")]
async fn too_many_inputs_in_one_round_is_a_protocol_error() {
    let server = RawServer::start(|req, mut conn| {
        Box::pin(async move {
            let result = match req.rpc_method().as_deref() {
                Some("server/discover") => json!({
                    "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "asks", "version": "0"}}
                }),
                _ => {
                    let asks: serde_json::Map<String, Value> = (0..100)
                        .map(|i| {
                            let ask = json!({"method": "roots/list", "params": {}});
                            (format!("a{i}"), ask)
                        })
                        .collect();
                    json!({"resultType": "input_required", "inputRequests": asks})
                }
            };
            conn.json(200, &answer(&req, result)).await.ok()?;
            Some(conn)
        })
    })
    .await;
    let client = patient()
        .protocol(ProtocolChoice::Stateless)
        .roots(vec![])
        .connect(&server.url("/mcp"))
        .await
        .unwrap();
    let err = client.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(err, ClientError::Protocol(_)), "{err:?}");
    assert!(err.to_string().contains("100 inputs"), "{err}");
}

/// `ProtocolChoice::Auto` over stdio: a server slower to answer `server/discover` than the probe
/// timeout (a Python server starting on a loaded machine) still takes up the probe, and then
/// refuses `initialize` with -32022 naming 2026-07-28 only. Connecting failed with that error;
/// the client now keeps waiting for the probe beside `initialize`, and its late answer wins.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_slower_than_the_probe_is_asked_again() {
    let discovered = r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"slow","version":"0"}}}"#;
    let script = format!(
        r#"
        id() {{ printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }}
        read -r line
        sleep 1
        printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$(id "$line")" '{discovered}'
        read -r line
        printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":-32022,"message":"serving 2026-07-28","data":{{"supported":["2026-07-28"]}}}}}}\n' "$(id "$line")"
        read -r line
        printf '{{"jsonrpc":"2.0","id":%s,"result":%s}}\n' "$(id "$line")" '{discovered}'
        exec sleep 600
    "#
    );
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", &script]);
    let client = within(
        Duration::from_secs(20),
        "spawn",
        patient()
            .probe_timeout(Duration::from_millis(200))
            .stderr(Stderr::Null)
            .spawn(command),
    )
    .await
    .unwrap_or_else(|e| panic!("a slow server is still reached: {e}"));
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    within(Duration::from_secs(10), "close", client.close()).await;
}
