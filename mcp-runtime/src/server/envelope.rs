//! One incoming message, decoded once: the JSON-RPC envelope and, for a request that carries
//! `_meta`, the members of its params the runtime reads before any handler runs (the
//! 2026-07-28 protocol version, client capabilities and info, progress token and log level, and
//! the `name`/`uri` its HTTP headers must agree with). Transports decode a message with
//! [`decode`], route it with what they find, and hand the same [`Envelope`] to the dispatcher.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::jsonrpc::{self, DecodeError, Incoming, Request};

/// A decoded message and its request's head.
pub(crate) struct Envelope<'a> {
    pub(crate) message: Incoming<'a>,
    /// The request's `_meta` and naming members, when its params carry `_meta`.
    pub(crate) head: Option<Head<'a>>,
}

/// What a request's params say about the request itself, parsed once.
#[derive(Deserialize, Default)]
pub(crate) struct Head<'a> {
    #[serde(rename = "_meta")]
    pub(crate) meta: Option<RequestMeta>,
    /// `tools/call` and `prompts/get` name their target (any JSON: the handler reports a bad one).
    #[serde(borrow)]
    pub(crate) name: Option<&'a RawValue>,
    /// `resources/read` names its resource.
    #[serde(borrow)]
    pub(crate) uri: Option<&'a RawValue>,
}

/// The `_meta` members of a request that the runtime reads.
#[derive(Deserialize, Default)]
pub(crate) struct RequestMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub(crate) protocol_version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub(crate) client_capabilities: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    pub(crate) client_info: Option<Value>,
    #[serde(rename = "progressToken")]
    pub(crate) progress_token: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel")]
    pub(crate) log_level: Option<String>,
}

/// Decodes one message (not a batch).
pub(crate) fn decode(text: &str) -> Result<Envelope<'_>, DecodeError> {
    let message = jsonrpc::decode(text)?;
    let head = match &message {
        Incoming::Request(req) => head_of(req),
        _ => None,
    };
    Ok(Envelope { message, head })
}

/// Most session-era requests carry no `_meta`: the substring test spares them a second parse of
/// their params. (A `"_meta"` inside an argument's text only costs that parse.)
fn head_of<'a>(req: &Request<'a>) -> Option<Head<'a>> {
    let params = req.params?;
    if !params.get().contains("\"_meta\"") {
        return None;
    }
    serde_json::from_str(params.get()).ok()
}

impl Envelope<'_> {
    /// Whether the message is a request naming a protocol version in its `_meta`: a
    /// stateless-era (2026-07-28) request.
    pub(crate) fn is_stateless(&self) -> bool {
        self.head
            .as_ref()
            .and_then(|h| h.meta.as_ref())
            .is_some_and(RequestMeta::is_stateless)
    }
}

impl RequestMeta {
    /// Whether it names a protocol version: the mark of a stateless-era request.
    pub(crate) fn is_stateless(&self) -> bool {
        self.protocol_version.is_some()
    }
}
