//! The server under test and what `/proc` says about it: resident memory (now and peak),
//! threads, open file descriptors and CPU time.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The quickstart, serving Streamable HTTP on a free loopback port.
pub struct Server {
    child: Child,
    pub port: u16,
}

/// Lets the server's start-up line through, and its request log lines not (1 M of them would
/// cost the server more than the requests do).
const LOG_FILTER: &str =
    "warn,mcp_runtime::transport::http=info,mcp_runtime::transport::http::service=warn";

impl Server {
    /// Starts the quickstart: this bench's own binary in its `SOAK_ROLE=quickstart` role (the
    /// example's code compiled in the bench profile), or the program named by `SOAK_SERVER`
    /// (e.g. `target/release/examples/quickstart`) with `--http 127.0.0.1:0`.
    ///
    /// `SOAK_NOFILE=N` starts it under `prlimit --nofile=N` (1,024 is a common default soft
    /// limit): what happens when connections use up the server's descriptors.
    pub fn start() -> Server {
        let (program, args): (std::ffi::OsString, &[&str]) = match std::env::var_os("SOAK_SERVER") {
            Some(program) => (program, &["--http", "127.0.0.1:0"]),
            None => (std::env::current_exe().expect("current_exe").into(), &[]),
        };
        let mut cmd = match std::env::var("SOAK_NOFILE") {
            Ok(n) => {
                let mut cmd = Command::new("prlimit");
                cmd.arg(format!("--nofile={n}:{n}")).arg("--").arg(&program);
                cmd
            }
            Err(_) => Command::new(&program),
        };
        cmd.args(args)
            .env("SOAK_ROLE", "quickstart")
            .env("MCP_TRANSPORT", "127.0.0.1:0");
        let mut child = cmd
            .env("RUST_LOG", LOG_FILTER)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        let port = loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("the server exited before saying where it serves");
            }
            if let Some(port) = serving_port(&line) {
                break port;
            }
        };
        // Its warnings go on to ours (the first 20; then only how many there were).
        std::thread::spawn(move || {
            let mut count = 0usize;
            let mut line = String::new();
            while stderr.read_line(&mut line).unwrap_or(0) > 0 {
                count += 1;
                if count <= 20 {
                    eprint!("server: {line}");
                }
                line.clear();
            }
            if count > 20 {
                eprintln!("server: … {} more log lines", count - 20);
            }
        });
        let server = Server { child, port };
        // Let the runtime's worker threads start before anyone takes a baseline.
        std::thread::sleep(Duration::from_millis(200));
        server
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What `/proc` says about the server now.
    pub fn stats(&self) -> Stats {
        Stats::of(self.pid())
    }

    /// Whether the server is still running (not exited, not a zombie).
    pub fn alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    }

    /// Waits up to `limit` for the open descriptors to come down to `fds`; returns how long it took.
    pub fn wait_fds(&self, fds: usize, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.stats().fds <= fds {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serving_port(line: &str) -> Option<u16> {
    let rest = line.split("serving MCP on http://").nth(1)?;
    let authority = rest.split('/').next()?;
    authority.rsplit_once(':')?.1.trim().parse().ok()
}

/// A process's resident memory (KiB), peak resident memory, threads and open descriptors.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub rss_kib: u64,
    pub hwm_kib: u64,
    pub threads: u64,
    pub fds: usize,
}

impl Stats {
    pub fn of(pid: u32) -> Stats {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
        Stats {
            rss_kib: field("VmRSS:"),
            hwm_kib: field("VmHWM:"),
            threads: field("Threads:"),
            fds,
        }
    }

    /// `rss 4.1 MiB (peak 5.0), 4 threads, 12 fds`.
    pub fn show(&self) -> String {
        format!(
            "RSS {} (peak {}), {} threads, {} fds",
            mib(self.rss_kib),
            mib(self.hwm_kib),
            self.threads,
            self.fds
        )
    }
}

/// KiB as `12.3 MiB`.
pub fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}
