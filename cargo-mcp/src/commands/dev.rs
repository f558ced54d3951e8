//! `dev`: build the current package's server, run it, and rebuild and restart it whenever a
//! source file changes. A failed build is shown and the previous server keeps running until the
//! next change builds; over HTTP the new server listens on the same address, so a connected
//! Inspector reconnects to it.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::Failure;
use crate::cli::DevArgs;
use crate::package::{self, Built, Profile};
use crate::watch::Watch;

/// What `dev` says, told apart from the build's and the server's own output.
macro_rules! say {
    ($($arg:tt)*) => { eprintln!("[cargo mcp dev] {}", format_args!($($arg)*)) };
}

pub(crate) fn run(a: DevArgs) -> Result<(), Failure> {
    let (dir, target) = package::locate(&a.package)?;
    let watch = Watch::new(&dir, &target)?;
    say!("watching {}", dir.display());
    let mut server: Option<Child> = None;
    let mut told = false;
    loop {
        match package::build(&a.package, Profile::Debug, false)? {
            Built::Binary(binary) => {
                if let Some(old) = server.take() {
                    stop(old);
                }
                if let Some(addr) = &a.http {
                    server = Some(start(&binary, addr)?);
                }
                if !told {
                    inspector_hint(&binary, a.http.as_deref());
                    told = true;
                }
            }
            Built::Failed => say!("the build failed (above); the next change is built again"),
        }
        let Some(changed) = watch.next_change() else {
            return Err(Failure::new("the file watcher stopped"));
        };
        say!("{} changed: rebuilding", changed.display());
    }
}

fn start(binary: &Path, addr: &str) -> Result<Child, Failure> {
    say!("starting {} --http {addr}", binary.display());
    Command::new(binary)
        .args(["--http", addr])
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| Failure::new(format!("cannot start {}: {e}", binary.display())))
}

fn stop(mut server: Child) {
    // A development server has nothing to drain: stopped at once, and waited for, so that the
    // next one can bind the address.
    let _ = server.kill();
    let _ = server.wait();
}

/// How to open the MCP Inspector against the server (printed once).
fn inspector_hint(binary: &Path, http: Option<&str>) {
    match http {
        Some(addr) => {
            let addr = addr
                .replace("0.0.0.0:", "127.0.0.1:")
                .replace("[::]:", "[::1]:");
            say!(
                "MCP Inspector: run `npx @modelcontextprotocol/inspector`, choose the Streamable \
                 HTTP transport and connect to http://{addr}/mcp (it reconnects after a restart). \
                 From a terminal: cargo mcp list --url http://{addr}/mcp"
            );
        }
        None => say!(
            "MCP Inspector: `npx @modelcontextprotocol/inspector {}` starts the server over stdio \
             (its Restart button picks up each rebuild). From a terminal: cargo mcp list. \
             --http ADDR runs the server here and restarts it on every change.",
            binary.display()
        ),
    }
}
