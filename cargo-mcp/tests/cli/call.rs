//! `list`, `call`, `read`, `prompt`, `complete`: against the quickstart over stdio and over HTTP in both
//! eras, with elicitation and sampling answered on stdin.

use serde_json::Value;

use crate::support::{HttpServer, ROOT, cargo_mcp, example, run};

fn quickstart() -> String {
    example("quickstart").to_string_lossy().into_owned()
}

#[test]
fn call_over_stdio_prints_the_result() {
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["mcp", "call", "add", "a=2", "b=3", "--stdio", &quickstart()]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert_eq!(ran.stdout, "5\n", "{ran:?}");
}

#[test]
fn call_takes_one_json_object_and_prints_json() {
    let mut cmd = cargo_mcp(ROOT);
    cmd.args([
        "call",
        "measure",
        r#"{"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": 4}}"#,
    ]);
    cmd.args(["--json", "--stdio", &quickstart()]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let result: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(result["structuredContent"]["distance"], 5.0, "{ran:?}");
}

#[test]
fn a_failing_tool_exits_non_zero_with_its_text() {
    let mut cmd = cargo_mcp(ROOT);
    cmd.args([
        "call",
        "divide",
        "dividend=1",
        "divisor=0",
        "--json",
        "--stdio",
        &quickstart(),
    ]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr
            .contains("error: the tool divide failed: cannot divide by zero"),
        "{ran:?}"
    );
    let result: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(result["isError"], true);
}

#[test]
fn unknown_tools_bad_arguments_and_missing_servers_are_named() {
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["call", "nope", "--stdio", &quickstart()]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr
            .contains("the server has no tool \"nope\" (its tools: add,"),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["call", "add", "a=two", "b=3", "--stdio", &quickstart()]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(
        ran.stderr.contains("a must be an integer, not \"two\""),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["call", "add", "c=1", "--stdio", &quickstart()]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(
        ran.stderr
            .contains("tool add has no argument \"c\" (its arguments: a, b)"),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["call", "add", "--stdio", "/nonexistent/server"]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr
            .contains("cannot start the server \"/nonexistent/server\""),
        "{ran:?}"
    );

    // No server named, and no cargo package here.
    let empty = std::env::temp_dir().join(format!("cargo-mcp-test-{}-empty", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let mut cmd = cargo_mcp(&empty);
    cmd.arg("list");
    let ran = run(cmd, "");
    let _ = std::fs::remove_dir_all(&empty);
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr
            .contains("name the server with --stdio \"COMMAND\" or --url URL"),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["list", "--url", "http://127.0.0.1:1/mcp"]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr
            .contains("cannot connect to http://127.0.0.1:1/mcp"),
        "{ran:?}"
    );
}

#[test]
fn call_over_http_in_both_eras() {
    let server = HttpServer::start(&example("quickstart"));
    for protocol in ["2025-11-25", "2026-07-28"] {
        let mut cmd = cargo_mcp(ROOT);
        cmd.args(["call", "greet", "name=Ada", "excitement=2", "tone=formal"]);
        cmd.args(["--url", &server.url, "--protocol", protocol]);
        cmd.args(["--header", "X-Test: yes"]);
        let ran = run(cmd, "");
        assert_eq!(ran.code, Some(0), "{protocol}: {ran:?}");
        assert_eq!(ran.stdout, "Good day, Ada!!\n", "{protocol}: {ran:?}");
    }
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["list", "--json", "--url", &server.url]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let listed: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(listed["tools"][0]["name"], "add", "{ran:?}");
}

#[test]
fn elicitation_and_sampling_are_answered_on_the_terminal() {
    let context = example("context").to_string_lossy().into_owned();
    for protocol in ["2025-11-25", "2026-07-28"] {
        let mut cmd = cargo_mcp(ROOT);
        cmd.args(["call", "greet", "--stdio", &context, "--protocol", protocol]);
        let ran = run(cmd, "y\nAda\n");
        assert_eq!(ran.code, Some(0), "{protocol}: {ran:?}");
        assert_eq!(ran.stdout, "Hello, Ada!\n", "{protocol}: {ran:?}");
        assert!(
            ran.stderr.contains("The server asks: What is your name?"),
            "{ran:?}"
        );
        assert!(
            ran.stderr.contains("  name (string, Your name.): "),
            "{ran:?}"
        );
    }
    // Declined: the tool carries on without.
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["call", "greet", "--stdio", &context]);
    let ran = run(cmd, "n\n");
    assert_eq!(ran.stdout, "Hello, stranger!\n", "{ran:?}");

    let mut cmd = cargo_mcp(ROOT);
    cmd.args([
        "call",
        "summarize",
        "text=A long story.",
        "--stdio",
        &context,
    ]);
    let ran = run(cmd, "Short.\n");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(ran.stdout.ends_with("): Short.\n"), "{ran:?}");
    assert!(ran.stderr.contains("Summarize in one sentence:"), "{ran:?}");
}

#[test]
fn list_prints_for_people() {
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["list", "--stdio", &quickstart()]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(
        ran.stdout
            .starts_with("Tools:\n  add(a: integer, b: integer)\n      Add two numbers.\n"),
        "{ran:?}"
    );
}

#[test]
fn every_command_has_help() {
    for command in [
        "list", "call", "read", "prompt", "complete", "inspect", "install", "new", "dev", "test",
    ] {
        let mut cmd = cargo_mcp(ROOT);
        cmd.args(["mcp", command, "--help"]);
        let ran = run(cmd, "");
        assert_eq!(ran.code, Some(0), "{command}: {ran:?}");
        assert!(
            ran.stdout.contains("Usage: cargo mcp "),
            "{command}: {ran:?}"
        );
    }
}

#[test]
fn read_prompt_and_complete_against_the_conformance_fixture() {
    let fixture = crate::support::binary("conformance")
        .to_string_lossy()
        .into_owned();
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["read", "test://static-text", "--stdio", &fixture]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert_eq!(
        ran.stdout, "This is the content of the static text resource.\n",
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args([
        "prompt",
        "test_prompt_with_arguments",
        "arg1=a",
        "arg2=b",
        "--stdio",
        &fixture,
    ]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert_eq!(
        ran.stdout, "user: Prompt with arguments: arg1='a', arg2='b'\n",
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args([
        "complete",
        "--prompt",
        "test_prompt_with_arguments",
        "arg1",
        "test",
    ]);
    cmd.args(["--json", "--stdio", &fixture]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let completion: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(
        completion["values"],
        serde_json::json!(["testValue1", "testValue2"]),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["read", "test://nowhere", "--stdio", &fixture]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr.contains("error: reading test://nowhere: "),
        "{ran:?}"
    );
}
