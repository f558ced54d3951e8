//! A `redis-server` of the test's own on a free loopback port, with no persistence: started,
//! restarted (same port, empty) and killed by the test. `tests/fleet/setup.sh` installs it.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one, or `None` (with a message) when redis-server is not installed and
    /// `MCP_FLEET_REQUIRED` is unset; with it set, a missing server fails the test.
    pub fn start() -> Option<RedisServer> {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            assert!(
                std::env::var_os("MCP_FLEET_REQUIRED").is_none(),
                "redis-server is not installed: run tests/fleet/setup.sh"
            );
            eprintln!("skipped: redis-server is not installed (tests/fleet/setup.sh installs it)");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut server = RedisServer { port, child: None };
        server.spawn();
        Some(server)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it (SIGKILL): everything it held is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills it and starts a new, empty one on the same port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// `INFO clients`' `connected_clients`: the connections open to it now.
    pub fn connected_clients(&self) -> usize {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "INFO", "clients"])
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("connected_clients:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("INFO clients has connected_clients")
    }

    /// A field of `INFO commandstats`: calls per command (`get` → 12).
    pub fn command_calls(&self) -> std::collections::BTreeMap<String, u64> {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "INFO", "commandstats"])
            .output()
            .expect("redis-cli runs");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("cmdstat_")?;
                let (name, stats) = rest.split_once(':')?;
                let calls = stats.split(',').find_map(|kv| kv.strip_prefix("calls="))?;
                Some((name.to_owned(), calls.trim().parse().ok()?))
            })
            .collect()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
