//! What the client told us about itself.

use serde_json::Value;

use crate::protocol::ProtocolVersion;

/// The client's version, self-description and capabilities: per session (from `initialize`),
/// or per request in the stateless era (from `_meta`).
#[derive(Debug)]
pub(crate) struct ClientInfo {
    pub(crate) version: ProtocolVersion,
    pub(crate) info: Option<Value>,
    pub(crate) capabilities: Value,
}
