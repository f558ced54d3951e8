//! `test conformance`: the suite runs against a server and its scores are printed.
//!
//! Skipped unless `CARGO_MCP_TEST_CONFORMANCE=1`: its first run installs Node 22 and the pinned
//! suite with npm (a minute or two, and the npm registry), and a run takes about 40 s, which
//! CI's 20 minutes do not have room for; tests/conformance/run.sh already scores the runtime
//! against the same suite there.

use crate::support::{ROOT, cargo_mcp, example, run};

#[test]
fn conformance_prints_the_scores() {
    if std::env::var_os("CARGO_MCP_TEST_CONFORMANCE").is_none() {
        eprintln!("skipped: set CARGO_MCP_TEST_CONFORMANCE=1 to run the conformance suite");
        return;
    }
    let _ = example("quickstart");
    let mut cmd = cargo_mcp(ROOT);
    cmd.args(["mcp", "test", "conformance", "--example", "quickstart"]);
    cmd.args(["--requirements", "2026-07-28"]);
    let ran = run(cmd, "");
    // The quickstart is not the suite's fixture server: some checks fail, and say so.
    assert_eq!(ran.code, Some(1), "{ran:?}");
    assert!(ran.stdout.contains("ok   tools-list: "), "{ran:?}");
    assert!(ran.stdout.contains("\nconformance: "), "{ran:?}");
    assert!(ran.stderr.contains("conformance checks failed"), "{ran:?}");
}
