//! Protocol errors: what a handler reports, and the JSON-RPC error object it becomes.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// Not a valid JSON-RPC request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// Unknown method, or a method behind a capability the server did not advertise.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Bad parameters: unknown tool, missing `_meta`, bad cursor, …
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// A failure inside the server.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Resource not found, in the session era (2025-11-25 and earlier).
    pub const RESOURCE_NOT_FOUND_LEGACY: ErrorCode = ErrorCode(-32002);
    /// 2026-07-28: an HTTP header is missing or differs from the body.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// 2026-07-28: the request needs a client capability the client did not declare.
    pub const MISSING_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// 2026-07-28: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// A protocol-level error: it becomes a JSON-RPC error response.
///
/// Tool failures the model should see (bad arguments, a failed API call) are not protocol errors:
/// they are tool results with `isError: true`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpError {
    /// The JSON-RPC error code.
    pub code: ErrorCode,
    /// A human-readable message.
    pub message: Cow<'static, str>,
    /// Extra structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// `text` as it may appear in an error: at most 256 bytes (on a character boundary), with an
/// ellipsis and the full length when cut. Names and URIs a client sent are echoed through it, so
/// a 1 MiB name costs a short error, not a 2 MiB one.
pub(crate) fn clip(text: &str) -> Cow<'_, str> {
    const MAX: usize = 256;
    if text.len() <= MAX {
        return Cow::Borrowed(text);
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len()))
}

impl McpError {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        McpError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds structured `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32600.
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// -32601 for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
        .with_data(serde_json::json!({ "method": method }))
    }

    /// -32602.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603.
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// Whether this is the error of an ask the client has no capability for (-32021).
    pub fn is_missing_capability(&self) -> bool {
        self.code == ErrorCode::MISSING_CLIENT_CAPABILITY
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for McpError {}
