//! `test conformance`: the official MCP conformance suite against the current package's server
//! over Streamable HTTP, and its scores. The suite's version and its whole dependency tree are
//! the ones tests/conformance pins (its package.json and package-lock.json, compiled in); it is
//! installed once with `npm ci` into the cache directory, with Node 22 from npm when the
//! system's `node` is older (as tests/conformance/run.sh does).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::Failure;
use crate::cli::ConformanceArgs;
use crate::connect::cache_dir;
use crate::package::{self, Profile};

const PACKAGE_JSON: &str = include_str!("../../../tests/conformance/suite-0.2/package.json");
const PACKAGE_LOCK: &str = include_str!("../../../tests/conformance/suite-0.2/package-lock.json");
/// The npm package of Node 22 used when the system has no Node >= 22 (run.sh's pin).
const NODE22: &str = "22.23.5";

pub(crate) fn run(a: ConformanceArgs) -> Result<(), Failure> {
    let which = match a.requirements.as_str() {
        "all" => vec!["--suite".to_owned(), "all".to_owned()],
        r @ ("2025-11-25" | "2026-07-28") => vec!["--requirements".to_owned(), r.to_owned()],
        other => {
            return Err(Failure::usage(format!(
                "--requirements {other:?}: choose 2025-11-25, 2026-07-28 or all"
            )));
        }
    };
    let cache = cache_dir()?.join("conformance");
    let node = node(&cache)?;
    let suite = install_suite(&cache)?;
    let binary = package::build_or_fail(&a.package, Profile::Debug)?;
    let out = match &a.out {
        Some(dir) => dir.clone(),
        None => cache
            .join("runs")
            .join(format!("run-{}", std::process::id())),
    };
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", out.display())))?;
    let server = Server::start(&binary, &a.http, &out.join("server.log"))?;
    eprintln!(
        "conformance: the server is at {}; results in {}",
        server.url,
        out.display()
    );
    let status = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &server.url, "-o"])
        .arg(&out)
        .args(&which)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .status()
        .map_err(|e| Failure::new(format!("cannot run the suite: {e}")))?;
    drop(server);
    // 0: every check passed, 1: some failed; anything else is the suite's own failure.
    if !matches!(status.code(), Some(0 | 1)) {
        return Err(Failure::new(format!(
            "the conformance suite failed ({status})"
        )));
    }
    let failed = scores(&out)?;
    if failed > 0 {
        return Err(Failure::new(format!("{failed} conformance checks failed")));
    }
    Ok(())
}

/// A Node >= 22: `MCP_CONFORMANCE_NODE`, the system's `node`, or the npm package
/// `node-linux-<arch>` installed into the cache.
fn node(cache: &Path) -> Result<PathBuf, Failure> {
    if let Some(node) = std::env::var_os("MCP_CONFORMANCE_NODE") {
        return Ok(node.into());
    }
    let major = |node: &Path| {
        Command::new(node)
            .args(["-p", "process.versions.node.split('.')[0]"])
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<u32>()
                    .ok()
            })
            .unwrap_or(0)
    };
    if major(Path::new("node")) >= 22 {
        return Ok("node".into());
    }
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => {
            return Err(Failure::new(format!(
                "the suite needs Node >= 22, and there is no node-linux package for {other}: \
                 set MCP_CONFORMANCE_NODE"
            )));
        }
    };
    let dir = cache.join("node22");
    let node = dir.join(format!("node_modules/node-linux-{arch}/bin/node"));
    if major(&node) < 22 {
        eprintln!("conformance: installing Node {NODE22} (npm package node-linux-{arch})");
        npm(
            &dir,
            &[
                "install",
                "--prefix",
                &dir.to_string_lossy(),
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                &format!("node-linux-{arch}@{NODE22}"),
            ],
        )?;
    }
    Ok(node)
}

/// The suite's entry point, installed with `npm ci` from the pinned lock file.
fn install_suite(cache: &Path) -> Result<PathBuf, Failure> {
    let dir = cache.join("suite-0.2");
    let entry = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let stamp = dir.join(".stamp");
    let key = format!("{}\n{}", PACKAGE_JSON.len(), PACKAGE_LOCK.len());
    if entry.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == key) {
        return Ok(entry);
    }
    eprintln!(
        "conformance: installing the pinned suite into {} (npm ci)",
        dir.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| Failure::new(format!("cannot write into {}: {e}", dir.display())))
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    write("package.json", PACKAGE_JSON)?;
    write("package-lock.json", PACKAGE_LOCK)?;
    npm(&dir, &["ci", "--no-audit", "--no-fund", "--loglevel=error"])?;
    write(".stamp", &key)?;
    Ok(entry)
}

fn npm(dir: &Path, args: &[&str]) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))?;
    let status = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| Failure::new(format!("cannot run npm (needed to install the suite): {e}")))?;
    if !status.success() {
        return Err(Failure::new(format!(
            "npm {} failed in {}",
            args[0],
            dir.display()
        )));
    }
    Ok(())
}

/// The server under test, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// Starts `binary --http ADDR`, its log in `log`, and waits for the line naming its URL.
    fn start(binary: &Path, addr: &str, log: &Path) -> Result<Server, Failure> {
        let mut child = Command::new(binary)
            .args(["--http", addr])
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Failure::new(format!("cannot start {}: {e}", binary.display())))?;
        let stderr = child.stderr.take().expect("piped");
        let mut file = std::fs::File::create(log)
            .map_err(|e| Failure::new(format!("cannot create {}: {e}", log.display())))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Write as _;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = writeln!(file, "{line}");
                if let Some(at) = line.find("serving MCP on http://") {
                    let url = line[at + "serving MCP on ".len()..].trim().to_owned();
                    let _ = tx.send(url);
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => Ok(Server { child, url }),
            Err(_) => {
                let _ = child.kill();
                Err(Failure::new(format!(
                    "the server did not start over HTTP (its log: {})",
                    log.display()
                )))
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Prints each scenario's checks and the totals from the suite's `checks.json` files; returns
/// how many checks failed.
fn scores(out: &Path) -> Result<u64, Failure> {
    let mut scenarios: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    let entries = std::fs::read_dir(out)
        .map_err(|e| Failure::new(format!("cannot read {}: {e}", out.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(scenario) = name.strip_prefix("server-").and_then(scenario_name) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(entry.path().join("checks.json")) else {
            continue;
        };
        let checks: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let counts = scenarios.entry(scenario.to_owned()).or_default();
        for check in checks.as_array().into_iter().flatten() {
            let slot = match check.get("status").and_then(Value::as_str) {
                Some("SUCCESS") => 0,
                Some("FAILURE") => 1,
                Some("WARNING") => 2,
                _ => 3,
            };
            counts[slot] += 1;
        }
    }
    let mut total = [0u64; 4];
    println!();
    for (scenario, [p, f, w, s]) in &scenarios {
        println!(
            "{} {scenario}: {p} passed, {f} failed, {w} warnings, {s} skipped",
            if *f > 0 { "FAIL" } else { "ok  " }
        );
        for (t, n) in total.iter_mut().zip([p, f, w, s]) {
            *t += n;
        }
    }
    println!(
        "conformance: {} passed, {} failed ({} scenarios; {} warnings, {} skipped)",
        total[0],
        total[1],
        scenarios.len(),
        total[2],
        total[3]
    );
    Ok(total[1])
}

/// `initialize-2026-01-01T00-00-00-000Z` → `initialize`: the scenario of a result directory.
fn scenario_name(dir: &str) -> Option<&str> {
    // The time stamp is the last 24 characters, after a `-`.
    let cut = dir.len().checked_sub(25)?;
    (dir.as_bytes().get(cut) == Some(&b'-') && dir[cut + 1..].ends_with('Z')).then(|| &dir[..cut])
}

#[cfg(test)]
mod tests {
    #[test]
    fn scenario_names_drop_the_time() {
        assert_eq!(
            super::scenario_name("tools-call-2026-12-04T21-35-16-123Z"),
            Some("tools-call")
        );
        assert_eq!(super::scenario_name("x"), None);
    }
}
