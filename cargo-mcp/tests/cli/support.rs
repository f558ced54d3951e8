//! Running `cargo-mcp` and the example servers from a test.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The workspace's root.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// A command without the variables cargo sets for the test process itself: a build it runs
/// would otherwise see `CARGO_MANIFEST_DIR` & co. change between it and the `cargo test`
/// around it, and each would rebuild ring (whose build script watches them) and all above it
/// for the other (integration/tests/support/mod.rs says the same).
pub fn clean(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let for_the_test = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|p| name.starts_with(p))
            || [
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
            ]
            .contains(&name);
        if for_the_test {
            cmd.env_remove(name);
        }
    }
    cmd
}

/// `cargo`.
pub fn cargo() -> Command {
    clean(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// `cargo-mcp`, run from `dir`.
pub fn cargo_mcp(dir: impl AsRef<Path>) -> Command {
    let mut cmd = clean(env!("CARGO_BIN_EXE_cargo-mcp"));
    cmd.current_dir(dir).stdin(Stdio::null());
    cmd
}

/// The target directory the workspace builds into.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(ROOT).join("target"))
}

/// An example of the root package (quickstart, context), built once per test binary with the
/// workspace's binaries and examples, as integration/tests does: the same build, so
/// mcp-runtime is compiled once, with the features `cargo test --workspace` gives it.
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
    target_dir().join("debug/examples").join(name)
}

/// A binary of a workspace package (`conformance`, the suite's fixture server), built with
/// the examples.
pub fn binary(name: &str) -> PathBuf {
    let _ = example("quickstart");
    target_dir().join("debug").join(name)
}

/// What a finished command printed.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Ran {
    fn from(out: Output) -> Self {
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to its end, with `input` on its stdin.
pub fn run(mut cmd: Command, input: &str) -> Ran {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("the command starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().expect("the command ends").into()
}

/// A server started over HTTP on a free port; killed when dropped.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    /// Starts `binary --http 127.0.0.1:0` and waits for the line that names its URL.
    pub fn start(binary: &Path) -> HttpServer {
        let mut child = Command::new(binary)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("http://") {
                    let url = line[at..]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    let _ = tx.send(url);
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server names its URL");
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[allow(dead_code)] // the `dev` tests use it
/// Waits until `ready` holds, polling, for at most `within` (a failure bound, not a delay).
pub fn wait_for(within: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ready()
}
