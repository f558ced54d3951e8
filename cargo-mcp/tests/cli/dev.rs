//! `dev`: a change to a source file rebuilds the server and restarts it; a broken build is
//! shown without stopping `dev`.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::{ROOT, cargo_mcp, run, target_dir};

/// `cargo mcp dev` in its own process group (the server it starts is in it too), its stderr
/// read line by line.
struct Dev {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Dev {
    /// The next line that contains `needle` (earlier lines are kept for the failure message).
    fn wait_for(&mut self, needle: &str) -> String {
        loop {
            match self.lines.recv_timeout(Duration::from_secs(120)) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line with {needle:?}; dev said:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        // The whole group: dev and the server it runs.
        // `-s KILL --` spelled out: procps's `kill -KILL -PGID` reads the group as a signal
        // number and signals another group.
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

fn url_in(line: &str) -> String {
    let at = line.find("http://").expect("a URL");
    line[at..].split_whitespace().next().unwrap().to_owned()
}

fn greet(url: &str) -> String {
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["call", "greet", "name=Ada", "--url", url]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    ran.stdout
}

#[test]
fn dev_rebuilds_and_restarts_on_a_change() {
    let parent = std::env::temp_dir().join(format!("cargo-mcp-test-{}-dev", std::process::id()));
    let _ = std::fs::remove_dir_all(&parent);
    let dir = parent.join("devsrv");
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["new", "devsrv", "--path", ROOT, "--dir"])
        .arg(&dir);
    assert_eq!(run(cmd, "").code, Some(0));

    let mut cmd = cargo_mcp(&dir);
    cmd.args(["dev", "--http", "127.0.0.1:0"])
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env("CARGO_NET_OFFLINE", "true")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().expect("dev starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut dev = Dev {
        child,
        lines,
        seen: Vec::new(),
    };

    let first = url_in(&dev.wait_for("serving MCP on http://"));
    assert_eq!(greet(&first), "Hi Ada!\n");

    let main = dir.join("src/main.rs");
    let source = std::fs::read_to_string(&main).unwrap();
    // A broken build: shown, and dev carries on.
    std::fs::write(
        &main,
        source.replace("fn main() {", "fn main() { let x: u8 = \"no\";"),
    )
    .unwrap();
    dev.wait_for("main.rs changed: rebuilding");
    dev.wait_for("expected `u8`, found `&str`");
    dev.wait_for("the build failed");
    // Fixed, with a new greeting: rebuilt, restarted.
    std::fs::write(
        &main,
        source.replace("format!(\"Hi {name}!\")", "format!(\"Hello {name}!\")"),
    )
    .unwrap();
    dev.wait_for("changed: rebuilding");
    let second = url_in(&dev.wait_for("serving MCP on http://"));
    assert_eq!(greet(&second), "Hello Ada!\n", "{}", dev.seen.join("\n"));
    // Said once, when the first server started (before or after the server's own line).
    let hints = dev
        .seen
        .iter()
        .filter(|l| l.contains("MCP Inspector: run `npx @modelcontextprotocol/inspector`"));
    assert_eq!(hints.count(), 1, "{}", dev.seen.join("\n"));
    drop(dev);
    let _ = std::fs::remove_dir_all(&parent);
}
