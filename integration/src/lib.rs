//! The integration tests and benches of the workspace, and never published. Its library has two
//! jobs: compiling the workspace README's examples as doctests, so they cannot rot, with
//! the features they use (`client`, `auth`, `tower`…), which the root package, holding the
//! first examples, does not turn on (they used to be included by `mcp-runtime`, but the README
//! is outside that crate's package, and `cargo package` builds the crate from its package
//! alone); and holding the hostile peer of the client corpus ([`hostile`]), which both
//! `tests/hostile.rs` (HTTP, in process) and the `hostile_peer` binary (stdio) run.

pub mod hostile;

/// The workspace README's examples.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
