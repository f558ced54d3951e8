//! Interop: the quickstart example over stdio against the official MCP clients, Python (`mcp`,
//! in each of its connect modes) and TypeScript (`@modelcontextprotocol/sdk`).
//!
//! The clients are pinned in `tests/interop/` and installed into `.interop/` by
//! `tests/interop/setup.sh` (once per test binary; a no-op when already installed). The checks
//! themselves live in `tests/interop/py_client.py` and `tests/interop/ts_client.mjs`; this file
//! only runs them and fails with their output. Nothing is skipped: without python3/node/npm or
//! the registries, these tests fail.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The client scripts give up after 60 s themselves; this only catches a client that hangs anyway.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Setup once per test binary; every test fails with the same message when it went wrong.
fn quickstart() -> &'static Path {
    static SETUP: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match SETUP.get_or_init(|| {
        install_clients()?;
        build_quickstart()
    }) {
        Ok(path) => path,
        Err(e) => panic!("interop setup failed:\n{e}"),
    }
}

fn install_clients() -> Result<(), String> {
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
}

/// `cargo test --test interop_stdio` builds no examples, so build it here. The path comes from
/// cargo's own artifact message rather than a guess at `target/debug/examples/`, which would be
/// wrong (or silently stale) under `CARGO_TARGET_DIR` or `--target-dir`.
fn build_quickstart() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "--example",
            "quickstart",
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(Path::new(ROOT).join("Cargo.toml"))
        .current_dir(ROOT)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build --example quickstart exited with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "quickstart")
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| {
            "cargo build --example quickstart reported no quickstart executable".to_owned()
        })
}

/// Runs a client script against the quickstart server and fails the test unless it exits 0.
fn run_client(label: &str, program: &Path, client_args: &[&str]) {
    let server = quickstart();
    let interop = Path::new(ROOT).join(".interop");
    let mut child = Command::new(program)
        .args(client_args)
        .arg("--")
        .arg(server)
        .current_dir(ROOT)
        // Where ts_client.mjs loads the SDK from (py_client.py gets it from the venv's python).
        .env("MCP_INTEROP_NODE_DIR", interop.join("node"))
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
    let report = format!("--- {label} stdout ---\n{stdout}--- {label} stderr ---\n{stderr}");
    match status {
        Some(status) if status.success() => println!("{report}"),
        Some(status) => panic!("{label} exited with {status}\n{report}"),
        None => panic!("{label} did not finish within {CLIENT_TIMEOUT:?} (killed)\n{report}"),
    }
}

fn python(mode: &str) {
    let python = Path::new(ROOT).join(".interop/venv/bin/python");
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
