//! A response on its way to the transport: its bytes, and what the transport needs to know of
//! it (whether it is an error, and which) without reading the bytes again.

use crate::protocol::jsonrpc::{Encoded, encode_error};
use crate::protocol::{ErrorCode, McpError, RequestId};

/// An encoded response and its kind.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) bytes: Encoded,
    pub(crate) kind: ReplyKind,
    /// A tool result with `isError: true` (for middleware, which then need not read it).
    pub(crate) tool_error: bool,
}

/// What a [`Reply`] says, as far as a transport cares (HTTP maps it to a status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyKind {
    /// A result (or a batch of responses).
    Result,
    /// An error response with this code.
    Error(ErrorCode),
    /// An error because the request lacks a `_meta` member its protocol requires, or a session
    /// it needs (an envelope error: HTTP 400 in 2026-07-28).
    Missing(ErrorCode),
}

impl Reply {
    /// A success response (or a batch).
    pub(crate) fn result(bytes: Encoded) -> Reply {
        Reply {
            bytes,
            kind: ReplyKind::Result,
            tool_error: false,
        }
    }

    /// An error response.
    pub(crate) fn error(id: Option<&RequestId>, error: &McpError) -> Reply {
        Reply {
            bytes: encode_error(id, error),
            kind: ReplyKind::Error(error.code),
            tool_error: false,
        }
    }

    /// An error response for a request missing what its envelope must carry.
    pub(crate) fn missing(id: Option<&RequestId>, error: &McpError) -> Reply {
        Reply {
            bytes: encode_error(id, error),
            kind: ReplyKind::Missing(error.code),
            tool_error: false,
        }
    }
}
