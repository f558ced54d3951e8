//! The integration tests and benches of the workspace, and never published. Its library exists
//! for one job: compiling the workspace README's examples as doctests, so they cannot rot, with
//! the features they use (`client`, `auth`, `tower`…), which the root package, holding the
//! first examples, does not turn on. (They used to be included by `mcp-runtime`, but the README
//! is outside that crate's package, and `cargo package` builds the crate from its package
//! alone.)

/// The workspace README's examples.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
