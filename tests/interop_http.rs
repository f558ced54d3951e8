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

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use support::http::HttpServer;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The client scripts give up after 60 s themselves; this only catches a client that hangs anyway.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `tests/interop/setup.sh` once per test binary; every test fails with its log when it
/// went wrong.
fn install_clients() {
    static SETUP: OnceLock<Result<(), String>> = OnceLock::new();
    let result = SETUP.get_or_init(|| {
        let script = Path::new(ROOT).join("tests/interop/setup.sh");
        let out = Command::new("bash")
            .arg(&script)
            .current_dir(ROOT)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            return Err(format!(
                "{} exited with {}:\n{log}",
                script.display(),
                out.status
            ));
        }
        eprint!("{log}");
        Ok(())
    });
    if let Err(e) = result {
        panic!("interop setup failed:\n{e}");
    }
}

/// Starts the quickstart over HTTP, runs `program client_args… URL` against it (the URL is
/// the server's `path`), and fails the test unless the client exits 0.
fn run_client(label: &str, program: &Path, client_args: &[&str], path: &str) {
    install_clients();
    let mut server = HttpServer::start("quickstart");
    let url = server.url(path);
    let mut child = Command::new(program)
        .args(client_args)
        .arg(&url)
        .current_dir(ROOT)
        // Where the .mjs clients load the SDK from (the .py ones get it from the venv's python).
        .env(
            "MCP_INTEROP_NODE_DIR",
            Path::new(ROOT).join(".interop/node"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{label}: cannot start {}: {e}", program.display()));

    // Drain both pipes while waiting, or a chatty client could block on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the client") {
            break Some(status);
        }
        if started.elapsed() > CLIENT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    let server_log = server.log();
    let report = format!(
        "--- {label} against {url}: stdout ---\n{stdout}--- {label} stderr ---\n{stderr}--- server stderr ---\n{server_log}\n"
    );
    match status {
        Some(status) if status.success() => println!("{report}"),
        Some(status) => panic!("{label} exited with {status}\n{report}"),
        None => panic!("{label} did not finish within {CLIENT_TIMEOUT:?} (killed)\n{report}"),
    }
}

fn python(mode: &str, path: &str) {
    let python = Path::new(ROOT).join(".interop/venv/bin/python");
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
