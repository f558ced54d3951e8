//! Helpers for integration tests that run real server processes.
#![allow(dead_code)]

pub mod auth;
pub mod corpus;
pub mod http;
pub mod interop;
pub mod oauth;
pub mod raw_server;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// The repository root (the workspace, whose root package holds the first examples).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// `cargo`, for a build from inside a test, without the variables cargo sets for the test
/// process itself (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …). A build script that watches one of
/// them (ring's watches `CARGO_MANIFEST_DIR`) would otherwise see it change between this build
/// and the `cargo test` around it, and each would rebuild ring, rustls, mcp-runtime and every
/// binary on it for the other: a minute or more of every CI run.
pub fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_for_the_test = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || [
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
            ]
            .contains(&name);
        if set_for_the_test {
            cargo.env_remove(name);
        }
    }
    cargo
}

/// Builds the examples once per test binary and returns the path of `name`: an example of the
/// root package (`target/debug/examples/`) or the binary of an example package under
/// `examples/` (`target/debug/`). Building the whole workspace's binaries and examples keeps
/// mcp-runtime's features those of `cargo test --workspace`, so it is not compiled again.
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = cargo()
            .args(["build", "--quiet", "--workspace", "--bins", "--examples"])
            .current_dir(ROOT)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the examples failed");
    });
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(ROOT).join("target"));
    // A binary first: a target directory from before the example packages may still hold a
    // stale `examples/tickets` (no root example has a binary's name).
    let debug = target.join("debug");
    let binary = debug.join(name);
    if binary.exists() {
        binary
    } else {
        debug.join("examples").join(name)
    }
}

/// A server process driven line by line.
pub struct Proc {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Proc {
    pub fn spawn(name: &str, args: &[&str], env: &[(&str, &str)]) -> Proc {
        Proc::spawn_program(&example(name), args, env)
    }

    /// [`Proc::spawn`] for an executable given by path (e.g. one from
    /// [`interop::build_examples`]).
    pub fn spawn_program(program: &Path, args: &[&str], env: &[(&str, &str)]) -> Proc {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("server starts");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let (etx, stderr) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = etx.send(line);
            }
        });
        Proc {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    /// Writes `bytes` as they are (no newline added).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, msg: Value) {
        self.send_line(&msg.to_string());
    }

    pub fn request(&mut self, id: i64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// The next stdout line, parsed; panics if it is not JSON or does not come in time.
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("a response in time");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
    }

    /// Whether any stdout line arrives within `wait`.
    pub fn silent_for(&mut self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Whether stdout reaches end of file within `wait` (no further lines may come first).
    pub fn stdout_closes_within(&mut self, wait: Duration) -> bool {
        matches!(
            self.lines.recv_timeout(wait),
            Err(mpsc::RecvTimeoutError::Disconnected)
        )
    }

    pub fn initialize(&mut self) -> Value {
        self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        let r = self.recv();
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for exit, at most `limit`; returns the exit code (`None` if killed by a signal).
    pub fn wait_exit(&mut self, limit: Duration) -> Option<i32> {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                start.elapsed() < limit,
                "server did not exit within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn stderr_text(&mut self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        self.stderr.try_iter().collect::<Vec<_>>().join("\n")
    }

    pub fn signal(&self, sig: i32) {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
