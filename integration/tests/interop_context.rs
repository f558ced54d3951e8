//! Interop: the Context example (`examples/context.rs`: elicitation, sampling, roots, progress,
//! logging, resource subscriptions and tools switched on and off) against the official MCP
//! clients, over stdio and over Streamable HTTP. Python (`mcp`) in the session era (`legacy`,
//! real server-to-client requests) and in 2026-07-28 (InputRequiredResult and retries with
//! `inputResponses`, `subscriptions/listen`); TypeScript (`@modelcontextprotocol/sdk`), which only
//! knows the session era.
//!
//! The clients are pinned in `tests/interop/` and installed into `.interop/` by
//! `tests/interop/setup.sh` (once per test binary; a no-op when already installed). The checks
//! live in `tests/interop/py_context.py` and `tests/interop/ts_context.mjs`, each of which takes
//! either `-- COMMAND` (stdio) or a URL (HTTP); this file only runs them and fails with their
//! output (and, over HTTP, the server's log). Nothing is skipped: without python3/node/npm or the
//! registries, these tests fail.

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use support::http::HttpServer;
use support::interop::{ROOT, build_examples, client_command, expect_success, install_clients};

/// The clients installed and the example built, once per test binary; every test fails with the
/// same message when either went wrong.
fn context() -> &'static Path {
    static SETUP: OnceLock<Result<Vec<PathBuf>, String>> = OnceLock::new();
    install_clients();
    match SETUP.get_or_init(|| build_examples(&["context"])) {
        Ok(paths) => &paths[0],
        Err(e) => panic!("interop setup failed:\n{e}"),
    }
}

/// Runs `program client_args… -- SERVER` (the client spawns the server) and fails the test unless
/// the client exits 0.
fn over_stdio(label: &str, program: &Path, client_args: &[&str]) {
    let mut command = client_command(program, client_args);
    command.arg("--").arg(context());
    expect_success(&format!("{label} over stdio"), command, String::new);
}

/// Starts the example with `--http 127.0.0.1:0`, runs `program client_args… URL` against its
/// `/mcp` endpoint and fails the test unless the client exits 0.
fn over_http(label: &str, program: &Path, client_args: &[&str]) {
    let mut server = HttpServer::start_program(context());
    let url = server.url("/mcp");
    let mut command = client_command(program, client_args);
    command.arg(&url);
    expect_success(&format!("{label} against {url}"), command, || {
        format!("--- server stderr ---\n{}\n", server.log())
    });
}

/// A transport to run a client over: [`over_stdio`] or [`over_http`].
type Over = fn(&str, &Path, &[&str]);

fn python(mode: &str, over: Over) {
    let script = Path::new(ROOT).join("tests/interop/py_context.py");
    over(
        &format!("python context client ({mode})"),
        &support::interop::python(),
        &[script.to_str().unwrap(), mode],
    );
}

fn typescript(over: Over) {
    let script = Path::new(ROOT).join("tests/interop/ts_context.mjs");
    over(
        "typescript context client",
        Path::new("node"),
        &[script.to_str().unwrap()],
    );
}

#[test]
fn python_legacy_stdio() {
    python("legacy", over_stdio);
}

#[test]
fn python_2026_07_28_stdio() {
    python("2026-07-28", over_stdio);
}

#[test]
fn python_legacy_http() {
    python("legacy", over_http);
}

#[test]
fn python_2026_07_28_http() {
    python("2026-07-28", over_http);
}

#[test]
fn typescript_stdio() {
    typescript(over_stdio);
}

#[test]
fn typescript_http() {
    typescript(over_http);
}
