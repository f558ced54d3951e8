//! Running the official MCP clients (installed by `tests/interop/setup.sh`) from tests.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// The client scripts give up after 60 s themselves; this only catches a client that hangs anyway.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `tests/interop/setup.sh` once per test binary (a no-op when installed); every test fails
/// with its log when it went wrong.
pub fn install_clients() {
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

/// Builds the example servers `names` and returns their executables, in that order: examples of
/// the root package and binaries of the example packages (`examples/*/`). `cargo test --test …`
/// builds neither, so the interop tests build the ones they run (with the rest of the
/// workspace's binaries and examples, so that mcp-runtime keeps the features of the test build).
/// The paths come from cargo's own artifact messages rather than a guess at
/// `target/debug/examples/`, which would be wrong (or silently stale) under `CARGO_TARGET_DIR`
/// or `--target-dir`.
pub fn build_examples(names: &[&str]) -> Result<Vec<PathBuf>, String> {
    let out = super::cargo()
        .args([
            "build",
            "--quiet",
            "--message-format=json-render-diagnostics",
            "--workspace",
            "--bins",
            "--examples",
        ])
        .arg("--manifest-path")
        .arg(Path::new(ROOT).join("Cargo.toml"))
        .current_dir(ROOT)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build of the examples {names:?} exited with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let artifacts: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .filter(|msg: &serde_json::Value| msg["reason"] == "compiler-artifact")
        .collect();
    names
        .iter()
        .map(|name| {
            artifacts
                .iter()
                .filter(|msg| msg["target"]["name"] == *name)
                .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
                .ok_or_else(|| format!("cargo build --workspace reported no {name} executable"))
        })
        .collect()
}

/// The pinned Python interpreter (the venv that has `mcp`).
pub fn python() -> PathBuf {
    Path::new(ROOT).join(".interop/venv/bin/python")
}

/// A client command: `program args…`, run from the repository root, told where the npm
/// project with the TypeScript SDK is (the .mjs clients load it from there).
pub fn client_command(program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(ROOT)
        .env(
            "MCP_INTEROP_NODE_DIR",
            Path::new(ROOT).join(".interop/node"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs a client to the end (killed after [`CLIENT_TIMEOUT`]) and fails the test unless it exits
/// 0; the report holds its output and `context()` (e.g. the server's log) on failure.
pub fn expect_success(label: &str, command: Command, context: impl FnOnce() -> String) {
    expect_success_output(label, command, context);
}

/// [`expect_success`], returning the client's stderr (where a stdio client's server logs too).
pub fn expect_success_output(
    label: &str,
    command: Command,
    context: impl FnOnce() -> String,
) -> String {
    expect_success_both(label, command, context).1
}

/// [`expect_success`], returning the client's stdout (what a CLI printed).
pub fn expect_success_stdout(
    label: &str,
    command: Command,
    context: impl FnOnce() -> String,
) -> String {
    expect_success_both(label, command, context).0
}

/// [`expect_success`], returning the client's stdout and stderr.
fn expect_success_both(
    label: &str,
    mut command: Command,
    context: impl FnOnce() -> String,
) -> (String, String) {
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{label}: cannot start the client: {e}"));
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
    let report = format!(
        "--- {label} stdout ---\n{stdout}--- {label} stderr ---\n{stderr}{}",
        context()
    );
    match status {
        Some(status) if status.success() => {
            println!("{report}");
            (stdout, stderr)
        }
        Some(status) => panic!("{label} exited with {status}\n{report}"),
        None => panic!("{label} did not finish within {CLIENT_TIMEOUT:?} (killed)\n{report}"),
    }
}
