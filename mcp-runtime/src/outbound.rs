//! Messages a request sends to the client before its result: progress and log notifications.
//!
//! Each request has a sink chosen by its transport: the stdio writer, the SSE stream of its
//! HTTP response, or the test client's collector. Notifications stop once the request is
//! finished or cancelled.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::protocol::McpError;
use crate::protocol::jsonrpc::Encoded;

/// Where a request's notifications go.
#[derive(Clone)]
pub(crate) struct Sink(Arc<dyn Fn(Encoded) -> bool + Send + Sync>);

impl Sink {
    /// `send` returns whether the message was handed on (not whether the client read it).
    pub(crate) fn new(send: impl Fn(Encoded) -> bool + Send + Sync + 'static) -> Sink {
        Sink(Arc::new(send))
    }

    /// Sends a message; `false` when it could not be handed on (the stream is gone or full).
    pub(crate) fn send(&self, message: Encoded) -> bool {
        (self.0)(message)
    }
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sink")
    }
}

/// The syslog severities MCP logging uses, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire name; an unknown one is -32602.
    pub fn parse(s: &str) -> Result<LogLevel, McpError> {
        LogLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                McpError::invalid_params(format!(
                    "Unknown log level {:?}",
                    crate::protocol::error::clip(s)
                ))
            })
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(LogLevel::parse("warning").unwrap(), LogLevel::Warning);
        assert!(LogLevel::parse("verbose").is_err());
        assert!(LogLevel::Error > LogLevel::Info);
    }
}
