//! Compile-time behaviour of the macros: what must compile, and the error (with its span) for
//! each kind of mistake. Regenerate snapshots with
//! `TRYBUILD=overwrite cargo test -p mcp-runtime-macros --test ui`
//! and review them in the diff.
//!
//! The fail cases compare rustc's words with the committed `.stderr` files, and those words
//! change between compiler releases, so the fail cases run only on the release the snapshots
//! were made with ([`SNAPSHOT_RUSTC`]) and are skipped, with a line on stderr, on any other: a
//! newer compiler must not fail CI over wording. The pass cases run on every compiler. To move
//! the snapshots to another release, change [`SNAPSHOT_RUSTC`], regenerate, review.
//!
//! The gate is here rather than in a `rust-toolchain.toml`: a pin there would apply to every
//! cargo command in the workspace, and rustup would try to download the pinned toolchain on a
//! machine that lacks it (and fail without network), where only these snapshots depend on it.

use std::io::Write;
use std::process::Command;

/// The rustc release (`rustc -vV`, its `release:` line) the `.stderr` snapshots were made with.
const SNAPSHOT_RUSTC: &str = "1.95.0";

/// The release of the rustc that trybuild's cargo runs: `$RUSTC`, else `rustc` from the path
/// (through rustup, the toolchain this test runs under, `+nightly` included).
fn rustc_release() -> Result<String, String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", rustc.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix("release: "))
        .map(str::to_owned)
        .ok_or_else(|| format!("no `release:` line in `{} -vV`: {text}", rustc.display()))
}

#[test]
fn ui() {
    // Not knowing the compiler is a failure, not a skip: a skip would hide every fail case.
    let release = rustc_release().unwrap_or_else(|e| panic!("{e}"));
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    if release == SNAPSHOT_RUSTC {
        t.compile_fail("tests/ui/fail/*.rs");
    } else {
        // Straight to stderr: the test harness captures `eprintln!` of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the UI fail cases (tests/ui/fail): their .stderr snapshots were made with \
             rustc {SNAPSHOT_RUSTC} and this is rustc {release}, whose words may differ (the pass \
             cases still run). To move the snapshots to this compiler, set SNAPSHOT_RUSTC in \
             mcp-macros/tests/ui.rs and regenerate them with TRYBUILD=overwrite."
        );
    }
}
