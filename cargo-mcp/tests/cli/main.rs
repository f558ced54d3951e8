//! End-to-end tests of `cargo mcp`: the binary run as a user runs it, against the workspace's
//! example servers. One test binary (each costs a link), one module per command.

mod call;
mod conformance;
#[cfg(unix)] // process groups
mod dev;
mod inspect;
mod install;
mod new;
mod support;
