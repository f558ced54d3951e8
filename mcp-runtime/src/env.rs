//! What reading the `MCP_*` environment variables shares. Each configuration type reads its
//! own variables next to its definition: `ServerBuilder::with_env` in `server/builder.rs`,
//! `HttpConfig::with_env` in `transport/http/config.rs`. `run!()` calls both; a program with
//! its own `main` calls them to read the same variables the same way.
//!
//! A variable that is set but unusable is an error naming the variable, never a silent
//! fallback: a fleet whose instances disagree on a key or a host name fails in ways nothing in
//! the logs would explain.

use std::io;

/// An `InvalidInput` error carrying `message` (which names the variable).
pub(crate) fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// A variable's value, `None` when unset or blank; not UTF-8 is an error naming it.
pub(crate) fn var(name: &str) -> io::Result<Option<String>> {
    match std::env::var(name) {
        Ok(value) if value.trim().is_empty() => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(invalid(format!("{name}: not valid UTF-8"))),
    }
}
