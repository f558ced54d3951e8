//! `run!`'s usage text names the binary that was run (argv[0]'s file name).

mod support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_names_the_binary() {
    let out = Command::new(support::example("quickstart"))
        .arg("--help")
        .output()
        .expect("quickstart runs");
    assert!(out.status.success(), "{out:?}");
    let text = stderr(&out);
    assert!(
        text.starts_with("Usage: quickstart [--stdio | --http ADDR]"),
        "{text}"
    );
    // The placeholder for a server whose name is unknown; `MCP_SERVER_CARD…` are variables.
    assert!(
        !text.replace("MCP_SERVER_", "").contains("SERVER"),
        "{text}"
    );
}

#[test]
fn help_follows_argv0() {
    // What a user runs through a symlink or a renamed copy is the name they typed.
    let out = Command::new(support::example("quickstart"))
        .arg0("/opt/tools/weather-server")
        .arg("-h")
        .output()
        .expect("quickstart runs");
    assert!(out.status.success(), "{out:?}");
    let text = stderr(&out);
    assert!(text.starts_with("Usage: weather-server [--stdio"), "{text}");
}

#[test]
fn a_bad_argument_prints_the_usage_too() {
    let out = Command::new(support::example("quickstart"))
        .arg("--bogus")
        .output()
        .expect("quickstart runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = stderr(&out);
    assert!(
        text.starts_with("error: unknown argument \"--bogus\""),
        "{text}"
    );
    assert!(text.contains("\n\nUsage: quickstart [--stdio"), "{text}");
}
