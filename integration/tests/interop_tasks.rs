//! Interop: tasks (2025-11-25, experimental) against the official TypeScript client's
//! `client.experimental.tasks` (`callToolStream`, `getTask`, `listTasks`, `cancelTask`), with the
//! ticket desk's `report` task tool, over stdio and Streamable HTTP. The checks live in
//! `tests/interop/ts_tasks.mjs`; this file runs it, and checks the server's log for the tool's
//! own word that it saw the cancellation. (The 2026-07-28 task wire is covered by the conformance
//! suite, `tests/tasks.rs` and `tests/http_tasks.rs`: this SDK release knows only the session era.)

mod support;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use support::http::HttpServer;
use support::interop::{
    ROOT, build_examples, client_command, expect_success_output, install_clients,
};

fn tickets() -> &'static Path {
    static SETUP: OnceLock<Result<Vec<PathBuf>, String>> = OnceLock::new();
    install_clients();
    match SETUP.get_or_init(|| build_examples(&["tickets"])) {
        Ok(paths) => &paths[0],
        Err(e) => panic!("interop setup failed:\n{e}"),
    }
}

fn db(label: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "mcp-interop-tasks-{label}-{}.sqlite3",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

fn script() -> PathBuf {
    Path::new(ROOT).join("tests/interop/ts_tasks.mjs")
}

#[test]
fn typescript_tasks_stdio() {
    let db = db("stdio");
    let mut command = client_command(Path::new("node"), &[script().to_str().unwrap()]);
    command.env("TICKETS_DB", &db).arg("--").arg(tickets());
    let stderr = expect_success_output("typescript tasks client over stdio", command, String::new);
    let _ = std::fs::remove_file(&db);
    assert!(
        stderr.contains("report cancelled"),
        "the tool never logged that it saw the cancellation:\n{stderr}"
    );
}

#[test]
fn typescript_tasks_http() {
    let db = db("http");
    let mut server = HttpServer::start_with_env(tickets(), &[("TICKETS_DB", db.to_str().unwrap())]);
    let url = server.url("/mcp");
    let mut command = client_command(Path::new("node"), &[script().to_str().unwrap()]);
    command.arg(&url);
    // The report shows the server's log (which reading drains): keep it for the check below.
    let seen = std::cell::RefCell::new(String::new());
    expect_success_output(
        &format!("typescript tasks client against {url}"),
        command,
        || {
            let log = server.log();
            seen.borrow_mut().push_str(&log);
            format!("--- server stderr ---\n{log}\n")
        },
    );
    // The tool logs when it stops; give it the moment it may still need.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut log = seen.into_inner();
    while !log.contains("report cancelled") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        log.push_str(&server.log());
    }
    let _ = std::fs::remove_file(&db);
    assert!(
        log.contains("report cancelled"),
        "the tool never logged that it saw the cancellation:\n{log}"
    );
}
