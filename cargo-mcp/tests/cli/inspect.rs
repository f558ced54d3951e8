//! `inspect`: the description (`--describe`) and the server card, read from the server's binary.

use serde_json::Value;

use crate::support::{ROOT, cargo_mcp, example, run};

#[test]
fn inspect_prints_the_description() {
    let quickstart = example("quickstart").to_string_lossy().into_owned();
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["inspect", "--stdio", &quickstart]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(ran.stdout.starts_with("mcp-examples 0.1.0\n"), "{ran:?}");
    assert!(
        ran.stdout
            .contains("\nTools:\n  add(a: integer, b: integer)\n"),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["inspect", "--json", "--stdio", &quickstart]);
    let ran = run(cmd, "");
    let manifest: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(manifest["tools"][0]["name"], "add", "{ran:?}");
}

#[test]
fn inspect_server_card_says_why_there_is_none() {
    let quickstart = example("quickstart").to_string_lossy().into_owned();
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["inspect", "--server-card", "--stdio", &quickstart]);
    cmd.env_remove("MCP_SERVER_CARD_NAME");
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(
        ran.stderr.contains(
            "the server did not print its server-card: error: this server has no server card name"
        ),
        "{ran:?}"
    );

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["inspect", "--server-card", "--json", "--stdio", &quickstart]);
    cmd.env("MCP_SERVER_CARD_NAME", "com.example/quickstart");
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let card: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(card["name"], "com.example/quickstart", "{ran:?}");
}
