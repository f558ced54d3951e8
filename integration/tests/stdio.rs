//! The stdio transport against real server processes.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::Proc;

fn fixture() -> Proc {
    let mut p = Proc::spawn("stdio_fixture", &[], &[]);
    let init = p.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "stdio-fixture");
    p
}

#[test]
fn run_macro_names_the_server_after_the_users_package() {
    let mut p = Proc::spawn("quickstart", &[], &[]);
    let init = p.initialize();
    // The quickstart is an example of the root package, `mcp-examples` (the version is the
    // workspace's, shared with this package).
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-examples");
    assert_eq!(
        init["result"]["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION")
    );
    p.request(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    let r = p.recv();
    assert_eq!(r["result"]["content"][0]["text"], "5");
    assert_eq!(r["result"]["structuredContent"], json!({"result": 5}));
}

#[test]
fn stateless_clients_need_no_handshake() {
    let mut p = Proc::spawn("quickstart", &[], &[]);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    p.request(1, "server/discover", json!({"_meta": meta}));
    let r = p.recv();
    assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));
    p.request(
        2,
        "tools/call",
        json!({"_meta": meta, "name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    let r = p.recv();
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["structuredContent"], json!({"result": 2}));
}

#[test]
fn stray_prints_go_to_stderr_not_the_protocol_stream() {
    let mut p = fixture();
    p.request(1, "tools/call", json!({"name": "noisy"}));
    let r = p.recv();
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["content"][0]["text"], "quiet answer");
    p.request(2, "ping", json!({}));
    assert_eq!(p.recv()["id"], 2, "no forged line came in between");
    let stderr = p.stderr_text();
    assert!(stderr.contains("this line must not corrupt"), "{stderr}");
    assert!(stderr.contains("noisy wrote to stderr"), "{stderr}");
}

#[test]
fn a_slow_tool_does_not_hold_back_other_requests() {
    let mut p = fixture();
    p.request(
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 1500}}),
    );
    p.request(
        2,
        "tools/call",
        json!({"name": "blocking", "arguments": {"ms": 1500}}),
    );
    p.request(
        3,
        "tools/call",
        json!({"name": "blocking", "arguments": {"ms": 1500}}),
    );
    let start = Instant::now();
    p.request(4, "ping", json!({}));
    assert_eq!(p.recv()["id"], 4);
    assert!(start.elapsed() < Duration::from_millis(1000));
    let mut ids: Vec<i64> = (0..3).map(|_| p.recv()["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    assert!(
        start.elapsed() < Duration::from_millis(2900),
        "sync tools ran in parallel: {:?}",
        start.elapsed()
    );
}

#[test]
fn cancelled_requests_get_no_response() {
    let mut p = fixture();
    p.request(
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 1500}}),
    );
    std::thread::sleep(Duration::from_millis(100));
    p.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    p.request(2, "ping", json!({}));
    assert_eq!(p.recv()["id"], 2);
    assert_eq!(
        p.silent_for(Duration::from_millis(2000)),
        None,
        "nothing for the cancelled request"
    );
}

#[test]
fn bad_lines_get_errors_and_the_stream_goes_on() {
    let mut p = fixture();
    p.send_line("{not json");
    let r = p.recv();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(null), json!(-32700))
    );
    p.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100_000)
    ));
    let r = p.recv();
    assert_eq!(r["error"]["code"], -32600);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than")
    );
    p.send_line("");
    p.send_line("  \r");
    p.request(8, "tools/call", json!({"name": "boom"}));
    let r = p.recv();
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(8), json!(-32603))
    );
    p.request(9, "ping", json!({}));
    assert_eq!(p.recv()["id"], 9);
}

#[test]
fn end_of_input_finishes_running_requests_then_exits() {
    let mut p = fixture();
    p.request(
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 300}}),
    );
    p.close_stdin();
    let r = p.recv();
    assert_eq!(r["result"]["content"][0]["text"], "slept 300");
    assert_eq!(p.wait_exit(Duration::from_secs(3)), Some(0));
}

#[test]
fn end_of_input_does_not_wait_past_the_grace_period() {
    let mut p = fixture();
    p.request(
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 60000}}),
    );
    std::thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    p.close_stdin();
    assert_eq!(p.wait_exit(Duration::from_secs(5)), Some(0));
    assert!(
        start.elapsed() >= Duration::from_millis(1900),
        "the fixture's grace is 2 s"
    );
}

#[test]
fn sigterm_and_sigint_exit_cleanly() {
    for sig in [15, 2] {
        let mut p = fixture();
        p.request(
            1,
            "tools/call",
            json!({"name": "blocking", "arguments": {"ms": 60000}}),
        );
        std::thread::sleep(Duration::from_millis(100));
        p.signal(sig);
        assert_eq!(p.wait_exit(Duration::from_secs(4)), Some(0), "signal {sig}");
    }
}

#[test]
fn the_transport_is_chosen_by_flag_or_environment() {
    for (args, env) in [
        (&["--http", "127.0.0.1:0"][..], &[][..]),
        (&[][..], &[("MCP_TRANSPORT", "127.0.0.1:0")][..]),
    ] {
        let mut p = Proc::spawn("quickstart", args, env);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut log = String::new();
        while !log.contains("serving MCP on http://127.0.0.1:") && Instant::now() < deadline {
            log.push_str(&p.stderr_text());
        }
        assert!(log.contains("serving MCP on http://127.0.0.1:"), "{log}");
        p.signal(15);
        assert_eq!(p.wait_exit(Duration::from_secs(8)), Some(0));
    }
    let mut p = Proc::spawn("quickstart", &["--http", "not an address"], &[]);
    assert_eq!(p.wait_exit(Duration::from_secs(5)), Some(2));
    let mut p = Proc::spawn("quickstart", &["--bogus"], &[]);
    assert_eq!(p.wait_exit(Duration::from_secs(5)), Some(2));
    assert!(p.stderr_text().contains("--bogus"));
}

#[test]
fn child_processes_of_tools_do_not_hold_the_protocol_pipes() {
    let mut p = fixture();
    p.request(1, "tools/call", json!({"name": "spawn_child"}));
    let pid = p.recv()["result"]["structuredContent"]["result"]
        .as_u64()
        .unwrap();
    p.close_stdin();
    assert_eq!(p.wait_exit(Duration::from_secs(3)), Some(0));
    let closed = p.stdout_closes_within(Duration::from_secs(2));
    let _ = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status();
    assert!(
        closed,
        "stdout stays open while a tool's child process lives"
    );
}

#[test]
fn notifications_precede_their_result_on_stdio() {
    let mut p = fixture();
    p.request(
        1,
        "tools/call",
        json!({"name": "progressive", "_meta": {"progressToken": "t"}}),
    );
    let methods: Vec<String> = (0..4)
        .map(|_| {
            let m = p.recv();
            m["method"]
                .as_str()
                .map_or_else(|| format!("result {}", m["id"]), str::to_owned)
        })
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "result 1"
        ]
    );
}
