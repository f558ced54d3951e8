//! [`SessionEra`]: how the HTTP transport serves session-era clients (protocol 2025-11-25 and
//! earlier, which open a session with `initialize`), beside the stateless 2026-07-28 clients it
//! always serves.

use serde_json::json;

use crate::protocol::{ErrorCode, McpError, ProtocolVersion};

/// How an HTTP server serves clients of the session era (protocols 2024-11-05 to 2025-11-25).
/// 2026-07-28 clients are served the same way in every position. Set with
/// [`HttpConfig::session_era`](super::HttpConfig::session_era), or `MCP_SESSION_ERA` (`serve`,
/// `stateless`, `reject`) where `run!()` serves.
///
/// | | `Serve` (default) | `Stateless` | `Reject` |
/// |---|---|---|---|
/// | `initialize` | opens a session (`Mcp-Session-Id`) | answered, no session id | 400, -32022 naming 2026-07-28 |
/// | later requests | in their session | each on its own, no session id needed | 400, -32022 |
/// | session table, `session_store` | yes | none | none |
/// | `GET` stream, `DELETE` | yes | 405 | 405 |
/// | HTTP+SSE (`/sse`, `/messages`) | served (if `legacy_sse`) | not served (404) | 400, -32022 |
/// | elicitation, sampling, roots | requests to the client | refused (-32021: no declared capabilities) | — |
/// | progress, logs | on the request's SSE stream | on the request's SSE stream (at every level: no `logging/setLevel` lasts) | — |
/// | subscriptions, `list_changed` | on the GET stream | not declared (`resources/subscribe` is -32601) | — |
/// | 2025-11-25 tasks | owned by the session | not declared | — |
/// | cancellation | `notifications/cancelled` | closing the request's connection | — |
/// | resumption (`Last-Event-ID`) | yes | no | — |
///
/// `Stateless` is for a fleet that must not pin clients to an instance and whose tools only
/// answer (no asks, no subscriptions): any instance answers any request, as for 2026-07-28
/// clients. The version a request is served at is its `MCP-Protocol-Version` header (2025-03-26
/// when absent, as the spec says), and the client's capabilities are unknown (`{}`).
/// `Reject` serves 2026-07-28 clients only, and tells older clients so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SessionEra {
    /// Sessions, as the session-era specifications describe them (the default).
    #[default]
    Serve,
    /// Session-era requests answered one by one, with no session table.
    Stateless,
    /// Session-era requests refused with an error naming 2026-07-28.
    Reject,
}

impl SessionEra {
    /// The name `MCP_SESSION_ERA` takes: `serve`, `stateless` or `reject`.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionEra::Serve => "serve",
            SessionEra::Stateless => "stateless",
            SessionEra::Reject => "reject",
        }
    }
}

impl std::fmt::Display for SessionEra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SessionEra {
    type Err = String;

    /// `serve`, `stateless` or `reject` (any case, surrounding blanks ignored).
    fn from_str(s: &str) -> Result<SessionEra, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "serve" => Ok(SessionEra::Serve),
            "stateless" => Ok(SessionEra::Stateless),
            "reject" => Ok(SessionEra::Reject),
            _ => Err(format!(
                "{s:?} is not a session-era setting (serve, stateless or reject)"
            )),
        }
    }
}

/// The error a session-era request gets from a server that rejects that era: -32022 (the
/// 2026-07-28 code for an unsupported version) with the versions it does serve, which
/// `requested` (the `initialize` params' or the header's) is not among.
pub(crate) fn rejected(requested: Option<&str>) -> McpError {
    let supported = [ProtocolVersion::V2026_07_28.as_str()];
    let mut e = McpError::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "This server serves protocol 2026-07-28 only (no `initialize`, no sessions: \
         `server/discover`, then `_meta` on every request); session-era clients \
         (protocol 2025-11-25 and earlier) are not served here",
    );
    e = e.with_data(match requested {
        Some(v) => json!({ "supported": supported, "requested": v }),
        None => json!({ "supported": supported }),
    });
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_by_name() {
        for era in [SessionEra::Serve, SessionEra::Stateless, SessionEra::Reject] {
            assert_eq!(era.as_str().parse::<SessionEra>(), Ok(era));
            assert_eq!(era.to_string(), era.as_str());
        }
        assert_eq!(" Reject ".parse::<SessionEra>(), Ok(SessionEra::Reject));
        let e = "off".parse::<SessionEra>().unwrap_err();
        assert!(e.contains("serve, stateless or reject"), "{e}");
        assert_eq!(SessionEra::default(), SessionEra::Serve);
    }

    #[test]
    fn the_refusal_names_2026_07_28() {
        let e = rejected(Some("2025-11-25"));
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert!(e.message.contains("2026-07-28"), "{}", e.message);
        let data = e.data.unwrap();
        assert_eq!(data["supported"], json!(["2026-07-28"]));
        assert_eq!(data["requested"], "2025-11-25");
    }
}
