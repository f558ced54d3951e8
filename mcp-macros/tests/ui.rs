//! Compile-time behaviour of the macros: what must compile, and the error (with its span) for
//! each kind of mistake. Regenerate snapshots with
//! `TRYBUILD=overwrite cargo test -p mcp-runtime-macros --test ui`
//! and review them in the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
