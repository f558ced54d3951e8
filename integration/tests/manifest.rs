//! `--describe`, `--manifest` (the server card, also `--server-card`) and `--client-config` on
//! real `run!()` binaries: the JSON alone on stdout, exit status 0, no client needed.

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs example `name` with `args` (stdin closed) and parses its whole stdout as one JSON value.
fn run(name: &str, args: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
    let mut cmd = Command::new(support::example(name));
    cmd.args(args)
        .stdin(Stdio::null())
        .env_remove("MCP_TRANSPORT")
        .env_remove("MCP_SKILLS_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the example runs");
    let stdout = String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8");
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON value ({e}): {stdout:?}"));
    (out, json)
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|item| item["name"].as_str().expect("a name"))
        .collect()
}

#[test]
fn quickstart_manifest_lists_its_tools_with_their_schemas() {
    let (out, manifest) = run("quickstart", &["--describe"], &[]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(manifest["name"], "mcp-examples");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    let tools = &manifest["tools"];
    assert_eq!(
        names(tools),
        ["add", "measure", "greet", "divide", "sleep"],
        "{manifest:#}"
    );
    for tool in tools.as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool:#}");
    }
    let add = &tools[0];
    assert_eq!(
        add["inputSchema"]["required"],
        serde_json::json!(["a", "b"])
    );
    assert_eq!(add["outputSchema"]["type"], "object");
    assert_eq!(add["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[1]["title"], "Measure distance");
    assert_eq!(manifest["resources"], serde_json::json!([]));
    assert_eq!(manifest["prompts"], serde_json::json!([]));
}

#[test]
fn ticket_desk_manifest_has_resources_templates_prompts_and_a_task_tool() {
    let db = std::env::temp_dir().join(format!("mcp-manifest-{}.sqlite3", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let (out, manifest) = run(
        "tickets",
        &["--describe"],
        &[("TICKETS_DB", db.to_str().unwrap())],
    );
    assert!(out.status.success(), "{out:?}");
    // Describing the server touches no data.
    assert!(!db.exists(), "--describe opened the database");
    assert!(names(&manifest["tools"]).contains(&"report"));
    let report = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "report")
        .unwrap();
    assert_eq!(report["execution"]["taskSupport"], "optional", "{report:#}");
    let uris: Vec<&str> = manifest["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"tickets://statuses"), "{uris:?}");
    let templates: Vec<&str> = manifest["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert!(
        templates.contains(&"attachments://{+path}"),
        "{templates:?}"
    );
    assert_eq!(manifest["prompts"][0]["title"], "Triage a ticket");
    assert!(
        manifest["capabilities"]["tasks"].is_object(),
        "{manifest:#}"
    );
}

#[test]
fn client_config_launches_this_binary_over_stdio() {
    let (out, config) = run("quickstart", &["--client-config"], &[]);
    assert!(out.status.success(), "{out:?}");
    let entry = &config["mcpServers"]["mcp-examples"];
    let command = entry["command"].as_str().expect("a command");
    assert!(Path::new(command).is_absolute(), "{command}");
    assert_eq!(
        std::fs::canonicalize(command).unwrap(),
        std::fs::canonicalize(support::example("quickstart")).unwrap()
    );
    assert_eq!(entry["args"], serde_json::json!([]));
}

#[test]
fn client_config_with_http_is_the_url_form() {
    let (out, config) = run(
        "quickstart",
        &["--client-config", "--http", "0.0.0.0:8123"],
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        config,
        serde_json::json!({ "mcpServers": { "mcp-examples": { "url": "http://127.0.0.1:8123/mcp" } } })
    );
}

#[test]
fn two_actions_together_are_a_usage_error() {
    for pair in [
        ["--describe", "--client-config"],
        ["--manifest", "--describe"],
    ] {
        let out = Command::new(support::example("quickstart"))
            .args(pair)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{pair:?}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("choose one"));
    }
}

/// `--manifest` prints the card an HTTP server serves at `/mcp/server-card` (no `remotes`:
/// the binary does not know where it will be reached), named from the environment when the
/// package has no repository, and `--server-card` the same card; without any name it says how
/// to give one.
#[test]
fn manifest_prints_the_server_card_or_says_how_to_name_it() {
    let name = [("MCP_SERVER_CARD_NAME", "dev.example/quickstart")];
    let (out, card) = run("quickstart", &["--manifest"], &name);
    assert!(out.status.success(), "{out:?}");
    let (_, same) = run("quickstart", &["--server-card"], &name);
    assert_eq!(card, same);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        card["$schema"],
        "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
    );
    assert_eq!(card["name"], "dev.example/quickstart");
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    assert!(card["description"].is_string(), "{card:#}");
    assert!(
        card.get("tools").is_none(),
        "a card lists no tools: {card:#}"
    );
    assert!(card.get("remotes").is_none(), "{card:#}");
    let out = Command::new(support::example("quickstart"))
        .arg("--manifest")
        .env_remove("MCP_SERVER_CARD_NAME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MCP_SERVER_CARD_NAME"), "{err}");
    let out = Command::new(support::example("quickstart"))
        .arg("--server-card")
        .env("MCP_SERVER_CARD_NAME", "quickstart")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MCP_SERVER_CARD_NAME") && err.contains("reverse-DNS"),
        "{err}"
    );
}
