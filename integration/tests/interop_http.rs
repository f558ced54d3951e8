//! Interop over HTTP: the quickstart example serving `--http 127.0.0.1:0`, against the official
//! MCP clients. Python (`mcp`) over Streamable HTTP in each of its connect modes and over the
//! deprecated HTTP+SSE transport; TypeScript (`@modelcontextprotocol/sdk`) with its
//! `StreamableHTTPClientTransport` (GET stream, session headers, DELETE at the end).
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
