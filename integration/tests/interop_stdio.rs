//! Interop: the quickstart and ticket desk examples over stdio against the official MCP clients,
//! Python (`mcp`, in each of its connect modes) and TypeScript (`@modelcontextprotocol/sdk`).
//!
//! The clients are pinned in `tests/interop/` and installed into `.interop/` by
//! `tests/interop/setup.sh` (once per test binary; a no-op when already installed). The checks
//! themselves live in `tests/interop/py_client.py` and `tests/interop/ts_client.mjs` (tools, on
//! the quickstart) and `tests/interop/py_tickets.py` and `tests/interop/ts_tickets.mjs`
//! (resources, templates, prompts and completion, on the ticket desk); this file only runs them
//! and fails with their output. Nothing is skipped: without python3/node/npm or the registries,
//! these tests fail.

mod support;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use support::interop::{ROOT, build_examples, client_command, expect_success, install_clients};

/// The example servers the clients run.
const EXAMPLES: [&str; 2] = ["quickstart", "tickets"];

/// Setup once per test binary; every test fails with the same message when it went wrong.
/// Returns the executables of [`EXAMPLES`], in that order.
fn examples() -> &'static [PathBuf] {
    static SETUP: OnceLock<Result<Vec<PathBuf>, String>> = OnceLock::new();
    install_clients();
    match SETUP.get_or_init(|| build_examples(&EXAMPLES)) {
        Ok(paths) => paths,
        Err(e) => panic!("interop setup failed:\n{e}"),
    }
}

fn quickstart() -> &'static Path {
    &examples()[0]
}

fn tickets() -> &'static Path {
    &examples()[1]
}

/// Runs a client script against the quickstart server and fails the test unless it exits 0.
fn run_client(label: &str, program: &Path, client_args: &[&str]) {
    run_client_against(label, quickstart(), &[], program, client_args);
}

/// Runs a client script against `server` and fails the test unless it exits 0. `env` goes to
/// the client process; the scripts pass on what the server needs of it themselves (the SDKs
/// give a server only PATH, HOME and a few more).
fn run_client_against(
    label: &str,
    server: &Path,
    env: &[(&str, &OsStr)],
    program: &Path,
    client_args: &[&str],
) {
    let mut command = client_command(program, client_args);
    command.arg("--").arg(server).envs(env.iter().copied());
    expect_success(label, command, String::new);
}

fn python(mode: &str) {
    let python = support::interop::python();
    let script = Path::new(ROOT).join("tests/interop/py_client.py");
    run_client(
        &format!("python client ({mode})"),
        &python,
        &[script.to_str().unwrap(), mode],
    );
}

#[test]
fn python_legacy() {
    python("legacy");
}

#[test]
fn python_auto() {
    python("auto");
}

#[test]
fn python_2026_07_28() {
    python("2026-07-28");
}

#[test]
fn typescript() {
    let script = Path::new(ROOT).join("tests/interop/ts_client.mjs");
    run_client(
        "typescript client",
        Path::new("node"),
        &[script.to_str().unwrap()],
    );
}

/// A fresh ticket database path for one client run, removed (with any SQLite side files) on drop.
struct TicketsDb(PathBuf);

impl TicketsDb {
    fn new(label: &str) -> TicketsDb {
        let db = TicketsDb(std::env::temp_dir().join(format!(
            "mcp-tickets-interop-{}-{label}.sqlite3",
            std::process::id()
        )));
        db.remove();
        db
    }

    fn remove(&self) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let mut side = self.0.clone().into_os_string();
            side.push(suffix);
            let _ = std::fs::remove_file(side);
        }
    }
}

impl Drop for TicketsDb {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Runs a ticket desk client script on a fresh database (the checks expect the seeded tickets).
fn run_tickets_client(label: &str, program: &Path, client_args: &[&str]) {
    let server = tickets();
    let db = TicketsDb::new(&label.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
    run_client_against(
        label,
        server,
        &[("TICKETS_DB", db.0.as_os_str())],
        program,
        client_args,
    );
}

fn python_tickets(mode: &str) {
    let python = support::interop::python();
    let script = Path::new(ROOT).join("tests/interop/py_tickets.py");
    run_tickets_client(
        &format!("python tickets client ({mode})"),
        &python,
        &[script.to_str().unwrap(), mode],
    );
}

#[test]
fn tickets_python_legacy() {
    python_tickets("legacy");
}

#[test]
fn tickets_python_2026_07_28() {
    python_tickets("2026-07-28");
}

#[test]
fn tickets_typescript() {
    let script = Path::new(ROOT).join("tests/interop/ts_tickets.mjs");
    run_tickets_client(
        "typescript tickets client",
        Path::new("node"),
        &[script.to_str().unwrap()],
    );
}
