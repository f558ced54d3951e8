//! `install`: each client's file, in a temporary HOME, gets the server's entry; the rest of
//! the file stays, a backup is kept, and an existing entry is replaced only with `--force`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{ROOT, cargo_mcp, example, run};

/// A fresh directory under the test target's scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn install(home: &Path, client: &str, extra: &[&str]) -> crate::support::Ran {
    let quickstart = example("quickstart");
    let mut cmd = cargo_mcp(ROOT);
    cmd.env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("APPDATA");
    cmd.args(["install", client, "--binary"])
        .arg(&quickstart)
        .args(extra);
    run(cmd, "")
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn install_writes_each_client_s_file() {
    // The entry names the binary as it names itself (its canonical path: the target directory
    // may be given as `cargo-mcp/../target`).
    let quickstart = std::fs::canonicalize(example("quickstart"))
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let clients = [
        (
            "claude-desktop",
            ".config/Claude/claude_desktop_config.json",
            "mcpServers",
            false,
        ),
        ("claude-code", ".claude.json", "mcpServers", true),
        ("cursor", ".cursor/mcp.json", "mcpServers", false),
        ("vscode", ".config/Code/User/mcp.json", "servers", true),
        ("gemini-cli", ".gemini/settings.json", "mcpServers", false),
    ];
    for (client, file, key, typed) in clients {
        let home = scratch(&format!("install-{client}"));
        let path = home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let before =
            json!({"theme": "dark", key: {"other": {"command": "/bin/other", "args": ["x"]}}});
        std::fs::write(&path, before.to_string()).unwrap();

        let ran = install(&home, client, &["--env", "RUST_LOG=debug"]);
        assert_eq!(ran.code, Some(0), "{client}: {ran:?}");
        let after = read(&path);
        let mut want = json!({"command": quickstart, "args": [], "env": {"RUST_LOG": "debug"}});
        if typed {
            want["type"] = json!("stdio");
        }
        assert_eq!(after[key]["mcp-examples"], want, "{client}");
        assert_eq!(
            after[key]["other"], before[key]["other"],
            "{client}: unrelated entry kept"
        );
        assert_eq!(after["theme"], "dark", "{client}: other settings kept");
        let backup = read(&PathBuf::from(format!("{}.bak", path.display())));
        assert_eq!(backup, before, "{client}: backup");

        // The entry is there now: replaced only with --force.
        let ran = install(&home, client, &["--name", "other"]);
        assert_eq!(ran.code, Some(1), "{client}: {ran:?}");
        assert!(
            ran.stderr
                .contains("already has a server named \"other\": --force"),
            "{ran:?}"
        );
        assert_eq!(
            read(&path)[key]["other"],
            before[key]["other"],
            "{client}: not replaced"
        );
        let ran = install(&home, client, &["--name", "other", "--force"]);
        assert_eq!(ran.code, Some(0), "{client}: {ran:?}");
        assert_eq!(
            read(&path)[key]["other"]["command"],
            quickstart.as_str(),
            "{client}"
        );
    }
}

#[test]
fn install_creates_a_missing_file_and_print_writes_nothing() {
    let home = scratch("install-new");
    let ran = install(&home, "cursor", &["--print", "--name", "calc"]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let printed: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(printed["mcpServers"]["calc"]["args"], json!([]), "{ran:?}");
    assert!(!home.join(".cursor").exists(), "--print writes nothing");

    let ran = install(&home, "cursor", &[]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let written = read(&home.join(".cursor/mcp.json"));
    assert!(
        written["mcpServers"]["mcp-examples"]["command"].is_string(),
        "{written}"
    );
}

#[test]
fn install_refuses_a_file_it_cannot_rewrite() {
    let home = scratch("install-jsonc");
    let path = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let jsonc = "{\n  // mine\n  \"mcpServers\": {}\n}\n";
    std::fs::write(&path, jsonc).unwrap();
    let ran = install(&home, "cursor", &[]);
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(ran.stderr.contains("is not plain JSON"), "{ran:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        jsonc,
        "left as it was"
    );

    let ran = install(&home, "nowhere", &[]);
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(ran.stderr.contains("invalid value 'nowhere'"), "{ran:?}");
}
