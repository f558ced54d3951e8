//! `new`: the scaffolded crate builds, its test passes, and `cargo mcp call` runs its server.
//!
//! Cost: the crate depends on this checkout's mcp-runtime with its default features, which
//! no other build of the workspace uses, so mcp-runtime and its macros are compiled once more
//! (about 50 s on two busy cores); everything else comes from the workspace's target
//! directory, shared here with the same profile settings and the checkout's Cargo.lock (which
//! `new --path` copies), and the build is `--offline`.

use std::path::PathBuf;

use crate::support::{ROOT, cargo, cargo_mcp, run, target_dir};

/// A fresh directory outside the workspace (a crate inside it would be taken for a member).
fn outside(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cargo-mcp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn new_scaffolds_a_crate_whose_test_passes() {
    let parent = outside("new");
    let dir = parent.join("weather");
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["mcp", "new", "weather", "--path", ROOT, "--dir"])
        .arg(&dir);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "src/main.rs",
        "src/tests.rs",
        "README.md",
        ".gitignore",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains("cargo mcp dev") && readme.contains("cargo mcp call add"),
        "{readme}"
    );

    // The workspace's target directory and its profile (a different `debug` would rebuild
    // every dependency).
    // Its output captured: the inner test run's summary lines are not this run's.
    let mut test = cargo();
    test.args(["test", "--offline", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    let ran = run(test, "");
    assert_eq!(
        ran.code,
        Some(0),
        "the scaffolded crate's tests fail: {ran:?}"
    );
    assert!(ran.stdout.contains("2 passed"), "{ran:?}");

    // The current package's server, built and spoken to over stdio.
    let mut cmd = cargo_mcp(&dir);
    cmd.env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env("CARGO_NET_OFFLINE", "true");
    cmd.args(["call", "greet", "name=Ada", "tone=formal"]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert_eq!(ran.stdout, "Good day, Ada.\n", "{ran:?}");

    // The same name again: refused, nothing overwritten.
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["new", "weather", "--dir"]).arg(&dir);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(ran.stderr.contains("exists already"), "{ran:?}");
    let _ = std::fs::remove_dir_all(&parent);
}

#[test]
fn new_http_and_auth_pick_the_transport_and_the_feature() {
    let parent = outside("new-auth");
    let dir = parent.join("desk");
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["new", "desk", "--auth", "--path", ROOT, "--dir"])
        .arg(&dir);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains(r#"features = ["auth"]"#), "{manifest}");
    let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(
        main.contains(r#"mcp_runtime::run!("127.0.0.1:8000");"#),
        "{main}"
    );
    assert!(main.contains("async fn whoami("), "{main}");

    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["new", "9lives"]);
    let ran = run(cmd, "");
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(ran.stderr.contains("is not a crate name"), "{ran:?}");
    let _ = std::fs::remove_dir_all(&parent);
}
