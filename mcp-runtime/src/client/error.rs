//! What can go wrong when calling a server. Each variant is one kind of failure, so a caller
//! can tell them apart: the server said no ([`Rpc`](ClientError::Rpc),
//! [`Status`](ClientError::Status), [`Tool`](ClientError::Tool)), it took too long
//! ([`Timeout`](ClientError::Timeout)), it sent too much ([`TooLarge`](ClientError::TooLarge)),
//! it broke the protocol ([`Protocol`](ClientError::Protocol)), or the connection failed
//! ([`Transport`](ClientError::Transport), [`Tls`](ClientError::Tls),
//! [`SessionExpired`](ClientError::SessionExpired), [`Closed`](ClientError::Closed)), OAuth
//! authorization did not get a token ([`Authorization`](ClientError::Authorization)), a skill
//! file does not match the skills index ([`Integrity`](ClientError::Integrity)), or a name
//! routes to no server of a [`Clients`](super::Clients) set
//! ([`UnknownServer`](ClientError::UnknownServer)).

use std::fmt;
use std::time::Duration;

use crate::protocol::{CallToolResult, McpError};

pub use crate::tls_failure::TlsFailure;

/// An error from a [`Client`](super::Client) call.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    Rpc(McpError),
    /// A tool ran and reported a failure (`isError: true`); the result says why.
    Tool(Box<CallToolResult>),
    /// The connection could not be made, failed, or closed (the server exited, the HTTP
    /// request failed, the stream ended before the answer).
    Transport(String),
    /// The HTTP session is gone (404 for its `Mcp-Session-Id`): the server expired or forgot
    /// it. Connect again, or build the client with
    /// [`renew_sessions`](super::ClientBuilder::renew_sessions) to do so automatically.
    SessionExpired,
    /// An HTTP status without a JSON-RPC answer (a server that does not speak this
    /// transport, a proxy in the way, an authorization failure, a redirect: redirects are
    /// never followed, so the body names the `Location` that was not).
    Status {
        /// The HTTP status code.
        status: u16,
        /// The start of the body (at most 64 KiB are read of an error's body).
        body: String,
    },
    /// The server's answer breaks the protocol (an answer that does not read, a list whose
    /// cursors loop, a stream that announces no endpoint), or could not be read as the
    /// requested type.
    Protocol(String),
    /// A deadline passed: the request's ([`request_timeout`](super::ClientBuilder::request_timeout),
    /// which covers sending it, the response head, the body and the wait for the answer) or,
    /// from [`connect`](super::ClientBuilder::connect) and
    /// [`spawn`](super::ClientBuilder::spawn), the whole handshake's
    /// ([`connect_timeout`](super::ClientBuilder::connect_timeout)). The request was given up
    /// (and cancelled at the server, in the session era); the connection stays usable.
    Timeout(Duration),
    /// The server sent more than a limit allows: one message (an HTTP body, an SSE event or
    /// line, a stdio line) over [`max_message_bytes`](super::ClientBuilder::max_message_bytes),
    /// a list over [`max_list_items`](super::ClientBuilder::max_list_items) or
    /// [`max_list_bytes`](super::ClientBuilder::max_list_bytes) across its pages. Reading stopped
    /// there: a stream or stdio connection that carried it is closed, an HTTP request's
    /// connection is dropped.
    TooLarge {
        /// What was too large, and in which unit `limit` counts.
        what: String,
        /// The limit it passed.
        limit: u64,
    },
    /// The TLS connection to an `https://` server failed: its certificate was refused (not
    /// trusted, for another name, expired, …), or what answered is not TLS. `failure` says
    /// which check failed; the message says it for a user, naming the host.
    Tls {
        /// The host (name or IP address) of the URL.
        host: String,
        /// Which check failed.
        failure: TlsFailure,
        /// What went wrong, in a sentence naming the host.
        detail: String,
    },
    /// OAuth authorization failed or was refused: the server's protected resource metadata
    /// names another server (GHSA-33f5-2c5q-wgwj), an issuer does not match, the
    /// authorization server refused, the user did not come back, the server keeps asking for
    /// more scope. The message says which; no token was sent where it should not go.
    Authorization(String),
    /// A skill file failed its check against the skills index (SEP-2640): its size or
    /// `sha256:` digest is not what the index lists, or its `SKILL.md` frontmatter differs
    /// from the index's. Its content was not used, and no further file of the skill was read.
    Integrity {
        /// The file's `skill://` URI.
        uri: String,
        /// What did not match.
        detail: String,
    },
    /// The client was closed.
    Closed,
    /// [`Clients`](super::Clients): the namespaced tool name begins with no server's name
    /// and the separator (the name is given).
    UnknownServer(String),
}

impl ClientError {
    /// The JSON-RPC error, when the server sent one.
    pub fn rpc(&self) -> Option<&McpError> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn transport(what: impl fmt::Display) -> Self {
        ClientError::Transport(what.to_string())
    }

    /// What a failed HTTP request to `uri` says: [`Tls`](ClientError::Tls) when TLS is what
    /// failed, else [`failed`](Self::failed)'s transport error.
    #[cfg(feature = "http")]
    pub(crate) fn request_failed(
        what: impl fmt::Display,
        uri: &http::Uri,
        e: &(dyn std::error::Error + 'static),
    ) -> Self {
        #[cfg(feature = "tls")]
        {
            let host = uri.host().unwrap_or_default();
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if let Some((failure, detail)) = crate::http_client::tls_failure(e, host) {
                return ClientError::Tls {
                    host: host.to_owned(),
                    failure,
                    detail,
                };
            }
        }
        #[cfg(not(feature = "tls"))]
        let _ = uri;
        Self::failed(what, e)
    }

    /// A transport error naming what failed and why, down the error's sources: hyper's
    /// own `Display` stops at "client error (SendRequest)" and leaves out the cause (a head
    /// too large, a response that is not HTTP, a connection reset).
    pub(crate) fn failed(what: impl fmt::Display, e: &(dyn std::error::Error + 'static)) -> Self {
        let mut text = format!("{what} failed: {e}");
        let mut source = e.source();
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        ClientError::Transport(text)
    }

    pub(crate) fn authorization(what: impl fmt::Display) -> Self {
        ClientError::Authorization(what.to_string())
    }

    pub(crate) fn integrity(uri: &str, detail: impl fmt::Display) -> Self {
        ClientError::Integrity {
            uri: uri.to_owned(),
            detail: detail.to_string(),
        }
    }

    pub(crate) fn protocol(what: impl fmt::Display) -> Self {
        ClientError::Protocol(what.to_string())
    }

    pub(crate) fn too_large(what: impl fmt::Display, limit: usize) -> Self {
        ClientError::TooLarge {
            what: what.to_string(),
            limit: limit as u64,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Rpc(e) => write!(f, "the server answered with an error: {e}"),
            ClientError::Tool(result) => {
                write!(f, "the tool reported an error: {}", result.text())
            }
            ClientError::Transport(why) => write!(f, "transport error: {why}"),
            ClientError::SessionExpired => f.write_str("the server no longer knows this session"),
            ClientError::Status { status, body } => {
                write!(f, "HTTP {status}")?;
                let body = body.trim();
                if !body.is_empty() {
                    write!(f, ": {}", crate::protocol::error::clip(body))?;
                }
                Ok(())
            }
            ClientError::Protocol(why) => write!(f, "protocol error: {why}"),
            ClientError::Timeout(after) => write!(f, "no answer within {after:?}"),
            ClientError::TooLarge { what, limit } => {
                write!(f, "too large: {what} over the limit of {limit}")
            }
            ClientError::Tls { detail, .. } => write!(f, "TLS error: {detail}"),
            ClientError::Authorization(why) => write!(f, "authorization failed: {why}"),
            ClientError::Integrity { uri, detail } => {
                write!(f, "{uri} failed its integrity check: {detail}")
            }
            ClientError::Closed => f.write_str("the client is closed"),
            ClientError::UnknownServer(name) => {
                write!(
                    f,
                    "{name:?} names no server of the set (server, separator, tool)"
                )
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }
}

impl From<McpError> for ClientError {
    fn from(e: McpError) -> Self {
        ClientError::Rpc(e)
    }
}
