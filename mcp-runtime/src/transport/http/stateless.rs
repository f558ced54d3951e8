//! The 2026-07-28 rules of Streamable HTTP: the headers that must agree with the body, and
//! the HTTP status of each kind of error.

use std::borrow::Cow;

use http::{HeaderMap, HeaderName, StatusCode};
use serde_json::Value;

use super::shared::{METHOD_HEADER, NAME_HEADER, VERSION_HEADER, header};
use crate::protocol::jsonrpc;
use crate::protocol::params::{Body, Request};
use crate::protocol::{ErrorCode, McpError};
use crate::request::{Reply, ReplyKind};

/// The HTTP status of a 2026-07-28 response, from its kind (the spec's mapping).
pub(crate) fn stateless_status(reply: &Reply) -> StatusCode {
    let code = match reply.kind {
        ReplyKind::Result => return StatusCode::OK,
        // A missing `_meta` member (or session) is 400; other invalid params are ordinary errors.
        ReplyKind::Missing(_) => return StatusCode::BAD_REQUEST,
        ReplyKind::Error(code) => code,
    };
    match code {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Decodes a header value that may be `=?base64?…?=` (for values that are not plain ASCII).
fn header_value(raw: &str) -> Option<Cow<'_, str>> {
    use base64::Engine as _;
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok().map(Cow::Owned)
        }
        None => Some(Cow::Borrowed(raw)),
    }
}

/// 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` must be present and agree
/// with the body (-32020 otherwise).
pub(crate) fn check_stateless_headers(headers: &HeaderMap, req: &Request) -> Result<(), McpError> {
    let mismatch = |what: String| McpError::new(ErrorCode::HEADER_MISMATCH, what);
    let check = |name: &HeaderName, expected: Option<&str>| -> Result<(), McpError> {
        // Only `Mcp-Name` (and `Mcp-Param-*`) may carry the `=?base64?…?=` form.
        let got = match header(headers, name) {
            Some(raw) if name == NAME_HEADER => header_value(raw),
            other => other.map(Cow::Borrowed),
        };
        match (got.as_deref(), expected) {
            (Some(g), Some(e)) if g == e => Ok(()),
            (None, Some(_)) => Err(mismatch(format!("Missing required header {name}"))),
            (Some(g), Some(e)) => Err(mismatch(format!(
                "Header {name} is {g:?} but the body says {e:?}"
            ))),
            (_, None) => Ok(()),
        }
    };
    let version = req
        .params
        .meta
        .as_ref()
        .and_then(|m| m.protocol_version.as_ref());
    let version = match version {
        None => None,
        Some(Value::String(v)) => Some(v.as_str()),
        Some(other) => {
            return Err(mismatch(format!(
                "`_meta.io.modelcontextprotocol/protocolVersion` is {other}, not a string: it cannot match MCP-Protocol-Version"
            )));
        }
    };
    check(&VERSION_HEADER, version)?;
    check(&METHOD_HEADER, Some(&req.method))?;
    // The decoded request's own members: a body whose `name` is not a string never gets
    // here (its params are invalid, and refused first).
    let name = match &*req.method {
        "tools/call" | "prompts/get" => req.params.name(),
        "resources/read" => req.params.uri(),
        "tasks/get" | "tasks/update" | "tasks/cancel" => req.params.task_id(),
        _ => None,
    };
    check(&NAME_HEADER, name)
}

/// 2026-07-28 `tools/call`: each argument the tool mirrors into a header (`x-mcp-header`) must
/// arrive in its `Mcp-Param-{name}` header too, equal after decoding (-32020 otherwise). A
/// header for an argument that is absent is a mismatch as well.
pub(crate) fn check_param_headers(
    headers: &HeaderMap,
    req: &Request,
    server: &crate::server::ServerInner,
) -> Result<(), McpError> {
    let Body::CallTool(params) = &req.params.body else {
        return Ok(());
    };
    // The server's own tool, else a mounted server's (a proxied tool's, as its upstream
    // listed it).
    let header_params = match server.registry.tool(&params.name) {
        Some(tool) => std::borrow::Cow::Borrowed(&tool.header_params[..]),
        None if server.mounts.is_empty() => return Ok(()),
        None => std::borrow::Cow::Owned(server.mounts.header_params(&params.name)),
    };
    if header_params.is_empty() {
        return Ok(());
    }
    // Only a tool that mirrors arguments into headers pays for reading its arguments as
    // values here. Arguments that do not read as values are refused: read as absent, they
    // would pass this check while the tool's own argument parsing (which skips members it
    // does not know) could still accept them.
    let arguments = match params
        .arguments
        .as_ref()
        .map(|a| serde_json::from_str::<Value>(a.get()))
    {
        None => None,
        Some(Ok(arguments)) => Some(arguments),
        Some(Err(e)) => {
            return Err(McpError::invalid_params(format!(
                "Invalid params: {} (the arguments are checked against Mcp-Param-* headers)",
                jsonrpc::strip_position(&e)
            )));
        }
    };
    let mismatch = |what: String| McpError::new(ErrorCode::HEADER_MISMATCH, what);
    let arguments = arguments.unwrap_or(Value::Null);
    for param in header_params.iter() {
        let header_name = format!("mcp-param-{}", param.name.to_ascii_lowercase());
        let display = format!("Mcp-Param-{}", param.name);
        let value = param
            .path
            .iter()
            .try_fold(&arguments, |v, key| v.get(key))
            .filter(|v| !v.is_null());
        let expected = match value {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Bool(b)) => Some(b.to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            // A value of another type fails the tool's own argument check.
            Some(_) => continue,
        };
        let mut all = headers.get_all(&header_name).iter();
        let raw = match (all.next(), all.next()) {
            (None, _) => None,
            // Two copies could each be read by a different hop: refuse rather than pick one.
            (Some(_), Some(_)) => return Err(mismatch(format!("Header {display} is repeated"))),
            (Some(v), None) => Some(v.to_str().map_err(|_| {
                mismatch(format!(
                    "Header {display} has characters a header value may not carry"
                ))
            })?),
        };
        match (raw, expected) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Missing required header {display} (the tool mirrors argument `{}` into it)",
                    param.path.join(".")
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Header {display} is set but argument `{}` is absent",
                    param.path.join(".")
                )));
            }
            (Some(raw), Some(expected)) => {
                let got = header_value(raw.trim()).ok_or_else(|| {
                    mismatch(format!(
                        "Header {display} is not valid =?base64?…?= encoding"
                    ))
                })?;
                // Integers compare exactly, as decimal text (no `+42`, `042` or `1e3`, and no
                // rounding of large ids); a whole float in the body (`42.0`) matches `42`.
                let same_number = value
                    .filter(|v| v.is_f64())
                    .and_then(Value::as_f64)
                    .is_some_and(|n| {
                        n.fract() == 0.0 && got.parse::<i64>().is_ok_and(|g| g as f64 == n)
                    });
                if got != expected && !same_number {
                    return Err(mismatch(format!(
                        "Header {display} is {got:?} but argument `{}` is {expected:?}",
                        param.path.join(".")
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_may_be_base64() {
        assert_eq!(header_value("tools/call").as_deref(), Some("tools/call"));
        assert_eq!(header_value("=?base64?w6l0w6k=?=").as_deref(), Some("été"));
        assert_eq!(header_value("=?base64?!!?="), None);
    }

    #[test]
    fn stateless_errors_map_to_statuses() {
        let e = |code: i32| Reply::error(None, &McpError::new(ErrorCode(code), "m"));
        assert_eq!(stateless_status(&e(-32601)), StatusCode::NOT_FOUND);
        assert_eq!(stateless_status(&e(-32022)), StatusCode::BAD_REQUEST);
        assert_eq!(stateless_status(&e(-32602)), StatusCode::OK);
        let missing = Reply::missing(None, &McpError::invalid_params("m"));
        assert_eq!(stateless_status(&missing), StatusCode::BAD_REQUEST);
        assert_eq!(
            stateless_status(&Reply::result(b"{}".to_vec())),
            StatusCode::OK
        );
    }
}
