//! A fleet on loopback, for tests/fleet.rs and integration/benches/fleet (which includes this file with
//! `#[path]`): a redis-server, N instances of examples/fleet, nginx with the shipped
//! deploy/nginx configuration and HAProxy with deploy/haproxy/haproxy.cfg, their ports
//! rewritten to free ones; a small MCP-over-HTTP client for both protocol eras; open-loop load.
//! Everything it starts is stopped when the [`Fleet`] is dropped.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

#[path = "../../../mcp-redis/tests/support/mod.rs"]
mod redis_server;
pub use redis_server::RedisServer;

/// The repository root (deploy/ is read from there).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The requestState key every instance shares (64 hex digits; tests only).
pub const SHARED_KEY: &str = "5f1e0c0ffee0ddba11ab1e5eedf00dcafe0123456789abcdef0123456789abcd";

/// The time between two instances in [`Fleet::rolling_restart`]: deploy/nginx/mcp.conf's
/// `fail_timeout` (2 s) and a margin.
pub const ROLLING_PACE: Duration = Duration::from_millis(2_200);

/// The key [`Fleet::rotate_keys`] rotates to (tests only).
pub const NEXT_KEY: &str = "0ddba11cafe5eed1e5f00d0123456789abcdef0123456789abcdeffacade42ca";

/// Whether redis-server, nginx and haproxy are installed; without them a test prints why it
/// skips, unless `MCP_FLEET_REQUIRED` is set (scripts/test-all), when it fails.
pub fn tools_installed() -> bool {
    let missing: Vec<&str> = [
        ("redis-server", "--version"),
        ("nginx", "-v"),
        ("haproxy", "-v"),
    ]
    .into_iter()
    .filter(|(tool, flag)| program(tool).arg(flag).output().is_err())
    .map(|(tool, _)| tool)
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("MCP_FLEET_REQUIRED").is_none(),
        "not installed: {missing:?}; run tests/fleet/setup.sh"
    );
    eprintln!("skipped: {missing:?} not installed (tests/fleet/setup.sh installs them)");
    false
}

/// `name` from PATH, else from /usr/sbin (Debian puts nginx and haproxy there).
fn program(name: &str) -> Command {
    let sbin = Path::new("/usr/sbin").join(name);
    if sbin.exists() {
        Command::new(sbin)
    } else {
        Command::new(name)
    }
}

/// `n` loopback ports nothing listened on a moment ago (held together while picked, so they
/// differ).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("a free port"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().expect("a bound port").port())
        .collect()
}

/// Runs `start` on `n` fresh ports; again on others when something took one of them before
/// the process bound it (its log says `Address already in use`), up to 5 times. Any other
/// failure panics with its message.
fn on_free_ports<T>(n: usize, mut start: impl FnMut(&[u16]) -> Result<T, String>) -> T {
    let mut last = String::new();
    for _ in 0..5 {
        match start(&free_ports(n)) {
            Ok(started) => return started,
            Err(e) if e.contains("Address already in use") => last = e,
            Err(e) => panic!("{e}"),
        }
    }
    panic!("every port picked was taken before it was bound; the last:\n{last}")
}

/// Waits until `ready()`; `Err` with the `logs` if `child` exits first (it could not bind,
/// say). `what` names what is awaited.
fn wait_until(
    what: &str,
    logs: &[&Path],
    child: &mut Owned,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let log_text = || {
        logs.iter()
            .map(|log| fs::read_to_string(log).unwrap_or_default())
            .collect::<String>()
    };
    while !ready() {
        if let Some(c) = &mut child.0
            && let Ok(Some(status)) = c.try_wait()
        {
            child.0 = None;
            return Err(format!(
                "{what}: exited first ({status}); its log:\n{}",
                log_text()
            ));
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within 20 s; its log:\n{}",
            log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Waits until something listens on `port` (see [`wait_until`]).
fn wait_listening(port: u16, what: &str, log: &Path, child: &mut Owned) -> Result<(), String> {
    wait_until(
        &format!("{what} listening on {port}"),
        &[log],
        child,
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    )
}

/// A directory of the fleet's own (configs, logs), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-fleet-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        for sub in ["logs", "temp"] {
            fs::create_dir_all(dir.join(sub)).expect("scratch directory");
        }
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A child process stopped (SIGKILL) on drop.
struct Owned(Option<Child>);

impl Owned {
    fn signal(&mut self, signal: &str) {
        if let Some(child) = &self.0 {
            let _ = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status();
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What runs as an instance: a program and the arguments before `--http ADDR`, plus
/// environment variables every instance gets.
#[derive(Clone)]
pub struct InstanceProgram {
    pub program: PathBuf,
    pub env: Vec<(String, String)>,
    /// Give every instance a requestState key of its own (the negative control) instead of
    /// [`SHARED_KEY`].
    pub distinct_keys: bool,
}

impl InstanceProgram {
    pub fn new(program: PathBuf) -> InstanceProgram {
        InstanceProgram {
            program,
            env: Vec::new(),
            distinct_keys: false,
        }
    }
}

/// One instance of examples/fleet on its own port (kept across restarts, as the load
/// balancers' configurations name it).
pub struct Instance {
    /// `i1`, `i2`, …: its `MCP_INSTANCE` and `MCP_ROUTE_TOKEN`.
    pub name: String,
    pub port: u16,
    run: InstanceProgram,
    log: PathBuf,
    child: Owned,
}

impl Instance {
    /// Starts it on a free port (another, if that one is taken before it binds).
    fn start(name: String, run: InstanceProgram, dir: &Path) -> Instance {
        let log = dir.join(format!("logs/{name}.log"));
        let mut instance = Instance {
            name,
            port: 0,
            run,
            log,
            child: Owned(None),
        };
        on_free_ports(1, |ports| {
            instance.port = ports[0];
            instance.spawn()
        });
        instance
    }

    fn spawn(&mut self) -> Result<(), String> {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("instance log");
        let mut cmd = Command::new(&self.run.program);
        cmd.args(["--http", &format!("127.0.0.1:{}", self.port)])
            .env("MCP_INSTANCE", &self.name)
            .env("MCP_ROUTE_TOKEN", &self.name)
            // As on a public address (where the default is longer): SIGTERM drains first.
            .env("MCP_DRAIN_DELAY", "0.3")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        for (k, v) in &self.run.env {
            cmd.env(k, v);
        }
        self.child = Owned(Some(cmd.spawn().expect("the instance starts")));
        wait_listening(self.port, &self.name, &self.log, &mut self.child)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.0.as_ref().map(Child::id)
    }

    /// SIGKILL: in-flight requests die with it.
    pub fn kill(&mut self) {
        self.child.kill();
    }

    /// SIGTERM, without waiting for it to exit.
    pub fn terminate(&mut self) {
        self.child.signal("-TERM");
    }

    /// Waits up to `limit` for it to exit (after [`Instance::terminate`]); false if it did not.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while let Some(child) = &mut self.child.0 {
            if child.try_wait().ok().flatten().is_some() {
                self.child.0 = None;
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Sets an environment variable for its next [`Instance::restart`] (over the fleet's).
    pub fn set_env(&mut self, name: &str, value: &str) {
        self.run.env.retain(|(k, _)| k != name);
        self.run.env.push((name.into(), value.into()));
    }

    /// Starts it again on the same port (after a kill or an exit).
    pub fn restart(&mut self) {
        self.child.kill();
        if let Err(e) = self.spawn() {
            panic!("{} did not start again on its port: {e}", self.name);
        }
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Which load balancers to start.
#[derive(Clone, Copy, Default)]
pub struct Balancers {
    pub nginx: bool,
    pub haproxy: bool,
}

/// The listening ports of the load balancers that were started.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ports {
    /// nginx, 2026-07-28 round robin (deploy: 8080).
    pub nginx_stateless: u16,
    /// nginx, legacy sessions pinned by route token (deploy: 8082).
    pub nginx_route: u16,
    /// nginx `hash $http_mcp_session_id consistent`: the negative control, not shipped.
    pub nginx_naive: u16,
    /// HAProxy, learned stickiness (deploy: 8090).
    pub haproxy_legacy: u16,
    /// HAProxy, 2026-07-28 with idempotent retries (deploy: 8091).
    pub haproxy_stateless: u16,
}

/// Redis, the instances and the load balancers, on loopback.
pub struct Fleet {
    pub instances: Vec<Instance>,
    pub redis: Option<RedisServer>,
    pub ports: Ports,
    nginx: Owned,
    haproxy: Owned,
    nginx_pid: Option<PathBuf>,
    dir: Scratch,
}

impl Fleet {
    /// Rotates the requestState key from [`SHARED_KEY`] to [`NEXT_KEY`] as deploy/README.md
    /// says, in rolling restarts ([`Fleet::rolling_restart`]): `[old, new]` on every instance
    /// (old still seals, both open), then `[new, old]` (new seals), then, once the states old
    /// sealed have expired (`settle`), `[new]`.
    pub fn rotate_keys(&mut self, settle: Duration) {
        let keys = "MCP_REQUEST_STATE_KEYS";
        self.rolling_restart(keys, &format!("{SHARED_KEY},{NEXT_KEY}"));
        self.rolling_restart(keys, &format!("{NEXT_KEY},{SHARED_KEY}"));
        std::thread::sleep(settle);
        self.rolling_restart(keys, NEXT_KEY);
    }

    /// Restarts every instance in turn with `name=value`: SIGTERM (it drains and finishes
    /// what it runs), wait for it to exit, start it again on its port, then wait
    /// [`ROLLING_PACE`] before the next (nginx skips a failed instance for its
    /// `fail_timeout`).
    pub fn rolling_restart(&mut self, name: &str, value: &str) {
        for instance in &mut self.instances {
            instance.set_env(name, value);
            instance.terminate();
            assert!(
                instance.wait_exit(Duration::from_secs(20)),
                "{} did not exit after SIGTERM",
                instance.name
            );
            instance.restart();
            std::thread::sleep(ROLLING_PACE);
        }
    }

    /// Starts Redis (when `redis`), `n` instances of `run` and `balancers`.
    pub fn start(run: InstanceProgram, n: usize, redis: bool, balancers: Balancers) -> Fleet {
        let dir = Scratch::new();
        let redis = redis.then(|| RedisServer::start().expect("redis-server is installed"));
        let mut run = run;
        if let Some(redis) = &redis {
            run.env.push(("REDIS_URL".into(), redis.url()));
        }
        let instances: Vec<Instance> = (1..=n)
            .map(|i| {
                let mut run = run.clone();
                let key = if run.distinct_keys {
                    format!("{}{i:02}", &SHARED_KEY[..62])
                } else {
                    SHARED_KEY.to_owned()
                };
                run.env.push(("MCP_REQUEST_STATE_KEYS".into(), key));
                Instance::start(format!("i{i}"), run, &dir.0)
            })
            .collect();
        let mut fleet = Fleet {
            instances,
            redis,
            ports: Ports::default(),
            nginx: Owned(None),
            haproxy: Owned(None),
            nginx_pid: None,
            dir,
        };
        if balancers.nginx {
            fleet.start_nginx();
        }
        if balancers.haproxy {
            fleet.start_haproxy();
        }
        fleet
    }

    /// A shipped config with the instances' ports (8001… in the file) and the listening ports
    /// replaced by this fleet's. The files name three instances; for a smaller fleet the lines
    /// of the missing ones are left out (and an nginx group left with backups only gets its
    /// first backup as its primary).
    fn rewrite(&self, text: &str, listen: &[(u16, u16)]) -> String {
        let mut out: Vec<String> = Vec::new();
        let (mut in_upstream, mut primaries) = (false, 0);
        for line in text.lines() {
            let trimmed = line.trim_start();
            let named = (1..=3u16).find(|i| line.contains(&format!("127.0.0.1:800{i}")));
            if let Some(i) = named {
                let Some(instance) = self.instances.get(usize::from(i - 1)) else {
                    continue;
                };
                let line = line.replace(
                    &format!("127.0.0.1:800{i}"),
                    &format!("127.0.0.1:{}", instance.port),
                );
                primaries += usize::from(!line.contains(" backup"));
                out.push(line);
                continue;
            }
            if trimmed.starts_with("upstream ") {
                (in_upstream, primaries) = (true, 0);
            }
            if trimmed == "}" && in_upstream {
                in_upstream = false;
                let group = out
                    .iter_mut()
                    .rev()
                    .take_while(|l| !l.contains("upstream "));
                if let (0, Some(backup)) = (primaries, group.last()) {
                    *backup = backup.replace(" backup", "");
                }
            }
            out.push(line.to_owned());
        }
        let mut text = out.join("\n") + "\n";
        for (from, to) in listen {
            text = text.replace(&format!("127.0.0.1:{from}"), &format!("127.0.0.1:{to}"));
        }
        text
    }

    fn start_nginx(&mut self) {
        let deploy = Path::new(ROOT).join("deploy/nginx");
        let main = fs::read_to_string(deploy.join("nginx.conf")).expect("deploy/nginx/nginx.conf");
        let main = main.replace("worker_processes auto;", "worker_processes 1;");
        let shipped = fs::read_to_string(deploy.join("mcp.conf")).expect("deploy/nginx/mcp.conf");
        let dir = self.dir.0.clone();
        let (child, ports) = on_free_ports(3, |ports| {
            let (stateless, route, naive) = (ports[0], ports[1], ports[2]);
            let mut snippet = self.rewrite(&shipped, &[(8080, stateless), (8082, route)]);
            // The negative control (never shipped): affinity by hashing the session id, which
            // `initialize` does not have yet.
            snippet.push_str(&self.rewrite(
                &format!(
                    "upstream mcp_hash {{\n    hash $http_mcp_session_id consistent;\n    \
                     server 127.0.0.1:8001;\n    server 127.0.0.1:8002;\n    server 127.0.0.1:8003;\n}}\n\
                     server {{ listen 127.0.0.1:{naive}; location = /mcp {{ proxy_pass http://mcp_hash; }} }}\n"
                ),
                &[],
            ));
            fs::write(dir.join("nginx.conf"), &main).unwrap();
            fs::write(dir.join("mcp.conf"), snippet).unwrap();
            let pid = dir.join("logs/nginx.pid");
            let _ = fs::remove_file(&pid);
            let log = dir.join("logs/nginx.stderr");
            let child = program("nginx")
                .arg("-p")
                .arg(&dir)
                .arg("-c")
                .arg(dir.join("nginx.conf"))
                .args(["-g", "daemon off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(&log).unwrap())
                .spawn()
                .expect("nginx starts");
            let mut child = Owned(Some(child));
            // nginx writes its pid file once every listener is bound (it retries a taken port
            // for a few seconds, with the others already listening, then exits).
            let logs = [log.as_path(), &dir.join("logs/error.log")];
            wait_until("nginx's pid file", &logs, &mut child, || pid.exists())?;
            for port in [stateless, route, naive] {
                wait_listening(port, "nginx", &log, &mut child)?;
            }
            Ok((child, ports.to_vec()))
        });
        self.ports.nginx_stateless = ports[0];
        self.ports.nginx_route = ports[1];
        self.ports.nginx_naive = ports[2];
        self.nginx = child;
        self.nginx_pid = Some(dir.join("logs/nginx.pid"));
    }

    fn start_haproxy(&mut self) {
        let shipped = fs::read_to_string(Path::new(ROOT).join("deploy/haproxy/haproxy.cfg"))
            .expect("deploy/haproxy/haproxy.cfg");
        assert!(
            self.has_readyz(),
            "the instances must answer GET /readyz: HAProxy's health check asks it"
        );
        let path = self.dir.0.join("haproxy.cfg");
        let log = self.dir.0.join("logs/haproxy.log");
        let (child, ports) = on_free_ports(2, |ports| {
            let cfg = self.rewrite(&shipped, &[(8090, ports[0]), (8091, ports[1])]);
            fs::write(&path, cfg).unwrap();
            let child = program("haproxy")
                .arg("-db")
                .arg("-f")
                .arg(&path)
                .stdin(Stdio::null())
                .stdout(fs::File::create(&log).unwrap())
                .stderr(fs::File::options().append(true).open(&log).unwrap())
                .spawn()
                .expect("haproxy starts");
            let mut child = Owned(Some(child));
            for &port in ports {
                wait_listening(port, "haproxy", &log, &mut child)?;
            }
            Ok((child, ports.to_vec()))
        });
        self.ports.haproxy_legacy = ports[0];
        self.ports.haproxy_stateless = ports[1];
        self.haproxy = child;
    }

    /// Whether the first instance answers `GET /readyz` with 200.
    pub fn has_readyz(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.instances[0].port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let _ =
            s.write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let mut head = [0u8; 12];
        s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
    }

    /// The process ids of nginx's worker(s) (the master only accepts) and of HAProxy.
    pub fn balancer_pids(&self) -> Vec<(String, u32)> {
        let mut pids = Vec::new();
        if let Some(master) = self.nginx.0.as_ref().map(Child::id) {
            pids.push(("nginx master".to_owned(), master));
            for pid in children_of(master) {
                pids.push(("nginx worker".to_owned(), pid));
            }
        }
        if let Some(h) = self.haproxy.0.as_ref().map(Child::id) {
            pids.push(("haproxy".to_owned(), h));
        }
        pids
    }

    /// A log of the fleet's (`nginx` error log, `haproxy`, or an instance's name).
    pub fn log(&self, what: &str) -> String {
        let path = match what {
            "nginx" => self.dir.0.join("logs/error.log"),
            "haproxy" => self.dir.0.join("logs/haproxy.log"),
            name => self.dir.0.join(format!("logs/{name}.log")),
        };
        fs::read_to_string(path).unwrap_or_default()
    }

    /// Waits until HAProxy's health checks have settled (`rise 2` at `inter 1s`).
    pub fn settle_health_checks(&self) {
        std::thread::sleep(Duration::from_millis(2_500));
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        // SIGKILL would orphan nginx's workers (still listening, and holding every descriptor
        // they inherited): SIGTERM makes the master stop them, then it exits.
        let workers = self
            .nginx
            .0
            .as_ref()
            .map(|m| children_of(m.id()))
            .unwrap_or_default();
        self.nginx.signal("-TERM");
        if let Some(master) = &mut self.nginx.0 {
            let deadline = Instant::now() + Duration::from_secs(5);
            while master.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        self.nginx.kill();
        for pid in workers {
            if Path::new(&format!("/proc/{pid}")).exists() {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
    }
}

/// The children of process `pid` (from /proc).
fn children_of(pid: u32) -> Vec<u32> {
    fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The client.

/// A pooled HTTP/1.1 client (hyper's), shared by every task of a load run.
#[derive(Clone)]
pub struct Client {
    http: HyperClient<HttpConnector, Full<Bytes>>,
    ids: Arc<AtomicU64>,
}

/// What an MCP POST got.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub session: Option<String>,
    /// The JSON-RPC response (from a JSON body or the SSE event that carries it), or `Null`.
    pub message: Value,
    pub text: String,
}

impl Reply {
    /// The JSON-RPC error code, if the answer is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.message["error"]["code"].as_i64()
    }

    /// The first text block of a tool result.
    pub fn tool_text(&self) -> Option<&str> {
        self.message["result"]["content"][0]["text"].as_str()
    }

    /// A 200 with a result that is not a tool error.
    pub fn ok(&self) -> bool {
        self.status == 200
            && self.message.get("result").is_some()
            && self.message["result"]["isError"] != true
    }
}

/// The `_meta` of every 2026-07-28 request.
pub fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fleet-harness", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

impl Client {
    pub fn new() -> Client {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let http = HyperClient::builder(TokioExecutor::new())
            .pool_max_idle_per_host(256)
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Client {
            http,
            ids: Arc::new(AtomicU64::new(1)),
        }
    }

    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// POSTs JSON-RPC `body` to `http://127.0.0.1:port/mcp` with `headers`.
    pub async fn post(
        &self,
        port: u16,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let mut req = mcp_runtime::http::Request::post(format!("http://127.0.0.1:{port}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let res = self.http.request(req).await.map_err(|e| format!("{e:?}"))?;
        let status = res.status().as_u16();
        let session = res
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = res
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let bytes = res
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let message = if sse {
            sse_data(&text)
                .filter_map(|d| serde_json::from_str::<Value>(d).ok())
                .find(|m| m.get("id").is_some())
                .unwrap_or(Value::Null)
        } else {
            serde_json::from_str(&text).unwrap_or(Value::Null)
        };
        Ok(Reply {
            status,
            session,
            message,
            text,
        })
    }

    /// A 2026-07-28 request: no session, `_meta` in the params, SEP-2243 headers.
    pub async fn stateless(
        &self,
        port: u16,
        method: &str,
        mut params: Value,
    ) -> Result<Reply, String> {
        if params.get("_meta").is_none() {
            params["_meta"] = stateless_meta();
        }
        let name = params["name"]
            .as_str()
            .or_else(|| params["taskId"].as_str())
            .map(str::to_owned);
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id(), "method": method, "params": params});
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        self.post(port, &body, &headers).await
    }

    /// A 2026-07-28 `tools/call`.
    pub async fn call(&self, port: u16, tool: &str, arguments: Value) -> Result<Reply, String> {
        self.stateless(
            port,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// A 2026-07-28 `tools/call` of a task-capable tool, asking for a task (the client declares
    /// the tasks extension); returns the task id.
    pub async fn start_task(
        &self,
        port: u16,
        tool: &str,
        arguments: Value,
    ) -> Result<String, String> {
        let mut meta = stateless_meta();
        meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] =
            json!({"io.modelcontextprotocol/tasks": {}});
        let params = json!({"name": tool, "arguments": arguments, "_meta": meta});
        let r = self.stateless(port, "tools/call", params).await?;
        r.message["result"]["taskId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("no task: {} {}", r.status, r.text))
    }

    /// `tasks/get` of task `id` through `port`: the task's result object.
    pub async fn task(&self, port: u16, id: &str) -> Result<Value, String> {
        let mut meta = stateless_meta();
        meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] =
            json!({"io.modelcontextprotocol/tasks": {}});
        let r = self
            .stateless(port, "tasks/get", json!({"taskId": id, "_meta": meta}))
            .await?;
        match r.message.get("result") {
            Some(task) => Ok(task.clone()),
            None => Err(format!("tasks/get: {} {}", r.status, r.text)),
        }
    }

    /// Which instance answered a 2026-07-28 `whoami`.
    pub async fn whoami(&self, port: u16) -> Result<String, String> {
        let r = self.call(port, "whoami", json!({})).await?;
        r.tool_text()
            .map(str::to_owned)
            .ok_or_else(|| format!("whoami: {} {}", r.status, r.text))
    }

    /// `n` `whoami` calls one after the other: how many each instance answered.
    pub async fn spread(&self, port: u16, n: usize) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for _ in 0..n {
            let who = self
                .whoami(port)
                .await
                .unwrap_or_else(|e| format!("error: {e}"));
            *counts.entry(who).or_default() += 1;
        }
        counts
    }

    /// Runs `survey`'s three rounds (each a new request, through `port`), answering with
    /// `answers`; returns the final reply.
    pub async fn survey(&self, port: u16) -> Result<Reply, String> {
        let answers = [
            json!({"action": "accept", "content": {"name": "Ada"}}),
            json!({"action": "accept", "content": {"colour": "teal"}}),
            json!({"action": "accept", "content": {"number": 7}}),
        ];
        let mut params = json!({"name": "survey", "arguments": {}});
        for answer in answers {
            let r = self.stateless(port, "tools/call", params.clone()).await?;
            let result = &r.message["result"];
            if result["resultType"] != "input_required" {
                return Ok(r);
            }
            let key = result["inputRequests"]
                .as_object()
                .and_then(|m| m.keys().next().cloned())
                .ok_or_else(|| format!("no inputRequests: {}", r.text))?;
            params["inputResponses"] = json!({ key: answer });
            params["requestState"] = result["requestState"].clone();
        }
        self.stateless(port, "tools/call", params).await
    }

    /// A legacy (2025-11-25) session through `port`: `initialize` + `notifications/initialized`.
    pub async fn open_session(&self, port: u16) -> Result<Session, String> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fleet-harness", "version": "0"}}});
        let r = self.post(port, &init, &[]).await?;
        let id = r
            .session
            .clone()
            .filter(|_| r.status == 200)
            .ok_or_else(|| format!("initialize: {} {}", r.status, r.text))?;
        let session = Session {
            port,
            id,
            client: self.clone(),
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = session.post(&note).await?;
        if r.status != 202 {
            return Err(format!(
                "notifications/initialized: {} {}",
                r.status, r.text
            ));
        }
        Ok(session)
    }
}

impl Client {
    /// A 2026-07-28 `subscriptions/listen` for tool list changes through `port`, left open.
    pub async fn listen(&self, port: u16) -> Result<Listen, String> {
        let mut params = json!({"notifications": {"toolsListChanged": true}});
        params["_meta"] = stateless_meta();
        let body = json!({"jsonrpc": "2.0", "id": self.next_id(),
            "method": "subscriptions/listen", "params": params});
        let req = mcp_runtime::http::Request::post(format!("http://127.0.0.1:{port}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "subscriptions/listen")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let res = self.http.request(req).await.map_err(|e| format!("{e:?}"))?;
        if res.status() != 200 {
            return Err(format!("listen: {}", res.status()));
        }
        Ok(Listen {
            body: res.into_body(),
            buffer: String::new(),
        })
    }
}

/// An open listen stream, read one SSE event at a time.
pub struct Listen {
    body: hyper::body::Incoming,
    buffer: String,
}

impl Listen {
    /// The next JSON-RPC message on the stream, or `None` when it ended or `wait` passed.
    pub async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = sse_data(&event).collect();
                if !data.is_empty()
                    && let Ok(message) = serde_json::from_str(&data.join("\n"))
                {
                    return Some(message);
                }
                continue;
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame()).await;
            match frame {
                Ok(Some(Ok(frame))) => {
                    if let Some(data) = frame.data_ref() {
                        self.buffer.push_str(&String::from_utf8_lossy(data));
                        self.buffer = self.buffer.replace("\r\n", "\n");
                    }
                }
                _ => return None,
            }
        }
    }

    /// Waits up to `wait` for a notification whose method is `method`.
    pub async fn expect(&mut self, method: &str, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        while let Some(left) = deadline.checked_duration_since(tokio::time::Instant::now()) {
            match self.next(left).await {
                Some(m) if m["method"] == method => return true,
                Some(_) => {}
                None => return false,
            }
        }
        false
    }
}

/// The instance named by a `whoami` (`i2`) or `slow` (`worked 20 ms on i2`) answer.
pub fn instance_of(text: &str) -> Option<&str> {
    text.rsplit(' ').next().filter(|w| !w.is_empty())
}

/// The `data:` payloads of an SSE text.
pub fn sse_data(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim_start)
}

/// A legacy session (its id sent with every request).
pub struct Session {
    pub port: u16,
    pub id: String,
    client: Client,
}

impl Session {
    pub async fn post(&self, body: &Value) -> Result<Reply, String> {
        self.client
            .post(
                self.port,
                body,
                &[
                    ("Mcp-Session-Id", &self.id),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
            )
            .await
    }

    /// A `tools/call` in this session.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Reply, String> {
        let id = self.client.next_id();
        self.post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}))
            .await
    }

    /// The instance that served this call (`whoami`), or why the call failed.
    pub async fn whoami(&self) -> Result<String, String> {
        let r = self.call("whoami", json!({})).await?;
        r.tool_text()
            .map(str::to_owned)
            .ok_or_else(|| format!("{} {}", r.status, r.text.trim()))
    }

    /// `n` [`whoami`](Self::whoami) calls: the instances that answered, and how many failed.
    pub async fn whoami_times(&self, n: usize) -> (std::collections::BTreeSet<String>, usize) {
        let (mut seen, mut failed) = (std::collections::BTreeSet::new(), 0);
        for _ in 0..n {
            match self.whoami().await {
                Ok(who) => {
                    seen.insert(who);
                }
                Err(_) => failed += 1,
            }
        }
        (seen, failed)
    }
}

// ---------------------------------------------------------------------------------------------
// Multi-round calls, back to back.

/// Clients running 3-round [`Client::survey`]s through one port back to back, on the
/// runtime they were started in, until [`Surveys::finish`].
pub struct Surveys {
    stop: Arc<std::sync::atomic::AtomicBool>,
    workers: Vec<tokio::task::JoinHandle<SurveyOutcomes>>,
}

/// How the surveys of a [`Surveys`] run ended.
#[derive(Debug, Default)]
pub struct SurveyOutcomes {
    pub complete: usize,
    /// Refused with -32602 (a state the answering instance could not open).
    pub refused: usize,
    /// nginx's own 502 (its HTML page, no JSON-RPC answer), texts.
    pub gateway: Vec<String>,
    /// Anything else, texts.
    pub other: Vec<String>,
}

impl SurveyOutcomes {
    pub fn total(&self) -> usize {
        self.complete + self.refused + self.gateway.len() + self.other.len()
    }
}

impl Surveys {
    /// `workers` clients surveying through `port`. Call inside a Tokio runtime.
    pub fn start(port: u16, workers: usize) -> Surveys {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let workers = (0..workers)
            .map(|_| {
                let stop = stop.clone();
                tokio::spawn(async move {
                    let client = Client::new();
                    let mut out = SurveyOutcomes::default();
                    while !stop.load(Ordering::Relaxed) {
                        match client.survey(port).await {
                            Ok(r) if r.message["result"]["resultType"] == "complete" && r.ok() => {
                                out.complete += 1
                            }
                            Ok(r) if r.error_code() == Some(-32602) => out.refused += 1,
                            Ok(r) if r.status == 502 && r.message.is_null() => {
                                out.gateway.push(r.text)
                            }
                            Ok(r) => out.other.push(r.text),
                            Err(e) => out.other.push(e),
                        }
                    }
                    out
                })
            })
            .collect();
        Surveys { stop, workers }
    }

    /// Stops the clients after their current survey; what all of them saw.
    pub async fn finish(self) -> SurveyOutcomes {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = SurveyOutcomes::default();
        for worker in self.workers {
            let out = worker.await.expect("a survey worker panicked");
            all.complete += out.complete;
            all.refused += out.refused;
            all.gateway.extend(out.gateway);
            all.other.extend(out.other);
        }
        all
    }
}

// ---------------------------------------------------------------------------------------------
// Open-loop load.

/// One request of a load run: the method (for the report) and how to send it.
pub type Job = (&'static str, Value);

/// How every request of a load run ended, by method.
#[derive(Debug, Default)]
pub struct Outcomes {
    /// method → (ok, failed, timed out).
    pub by_method: BTreeMap<&'static str, (usize, usize, usize)>,
    /// Instance → answers (from the `whoami` calls among the jobs).
    pub by_instance: BTreeMap<String, usize>,
    pub latencies: Vec<Duration>,
    /// Failures: when (since the start) and what.
    pub failures: Vec<(Duration, &'static str, String)>,
    /// When (since the start) each counted answer's request was sent, and its instance.
    pub answers: Vec<(Duration, String)>,
}

impl Outcomes {
    pub fn failed(&self, method: &str) -> usize {
        self.by_method.get(method).map_or(0, |c| c.1 + c.2)
    }

    pub fn total(&self) -> usize {
        self.by_method.values().map(|c| c.0 + c.1 + c.2).sum()
    }

    /// Requests with no answer within the timeout.
    pub fn unanswered(&self) -> usize {
        self.by_method.values().map(|c| c.2).sum()
    }

    /// `instance`'s share of the counted answers to requests sent in `from..to`.
    pub fn share(&self, instance: &str, from: Duration, to: Duration) -> f64 {
        let window: Vec<&String> = self
            .answers
            .iter()
            .filter(|(at, _)| (from..to).contains(at))
            .map(|(_, who)| who)
            .collect();
        let mine = window.iter().filter(|w| *w == &instance).count();
        mine as f64 / window.len().max(1) as f64
    }
}

/// Sends `jobs(i)` at `rate` per second for `duration`, whatever the answers (open loop), each
/// through `port` with a `timeout`, while `during(elapsed)` is polled every 10 ms (to kill an
/// instance mid-run). A `tools/call` of `whoami` or `slow` counts its instance.
pub async fn open_loop(
    client: &Client,
    port: u16,
    rate: f64,
    duration: Duration,
    timeout: Duration,
    jobs: impl Fn(u64) -> Job,
    mut during: impl FnMut(Duration),
) -> Outcomes {
    let start = tokio::time::Instant::now();
    let total = (rate * duration.as_secs_f64()) as u64;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut next_poll = Duration::ZERO;
    for i in 0..total {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        while tokio::time::Instant::now() < due {
            let now = start.elapsed();
            if now >= next_poll {
                during(now);
                next_poll = now + Duration::from_millis(10);
            }
            tokio::time::sleep_until(due.min(start + next_poll)).await;
        }
        let (method, params) = jobs(i);
        let client = client.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let sent = tokio::time::Instant::now();
            let whoami = params["name"] == "whoami" || params["name"] == "slow";
            let r = tokio::time::timeout(timeout, client.stateless(port, method, params)).await;
            let _ = tx.send((method, sent - start, sent.elapsed(), whoami, r));
        });
    }
    drop(tx);
    let mut out = Outcomes::default();
    while let Some((method, at, latency, whoami, r)) = rx.recv().await {
        let counts = out.by_method.entry(method).or_default();
        match r {
            Ok(Ok(reply)) if reply.ok() => {
                counts.0 += 1;
                out.latencies.push(latency);
                if whoami && let Some(who) = reply.tool_text().and_then(instance_of) {
                    *out.by_instance.entry(who.to_owned()).or_default() += 1;
                    out.answers.push((at, who.to_owned()));
                }
            }
            Ok(Ok(reply)) => {
                counts.1 += 1;
                let what = format!("{} {}", reply.status, reply.text.trim());
                out.failures.push((at, method, what));
            }
            Ok(Err(e)) => {
                counts.1 += 1;
                out.failures.push((at, method, e));
            }
            Err(_) => {
                counts.2 += 1;
                out.failures.push((at, method, "no answer in time".into()));
            }
        }
    }
    out.latencies.sort();
    out
}
