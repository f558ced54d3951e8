//! The handshake that settles the era: `server/discover` (2026-07-28), `initialize` (the
//! session era), or the one after the other ([`ProtocolChoice::Auto`]).

use std::time::Duration;

use serde_json::{Value, json};

use super::core::{Core, Negotiated};
use super::error::ClientError;
use crate::protocol::ProtocolVersion;

/// Which protocol era (and session-era version) a client speaks, or whether it finds out from
/// the server ([`ClientBuilder::protocol`](super::ClientBuilder::protocol)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolChoice {
    /// Ask with `server/discover` and use 2026-07-28 when the server speaks it; otherwise
    /// `initialize` at the newest session-era version. A server that answers the probe with an
    /// error (as every session-era server does) costs one round trip, no wait; only a stdio
    /// server that does not answer at all waits for
    /// [`probe_timeout`](super::ClientBuilder::probe_timeout). One that took up the probe
    /// after that (it was slow to start) and so refuses `initialize` for serving 2026-07-28
    /// is asked again.
    #[default]
    Auto,
    /// The session era at this version (`initialize`, then a session).
    Session(ProtocolVersion),
    /// 2026-07-28 only: `server/discover`, then `_meta` on every request.
    Stateless,
}

/// The 0.1 name of [`ProtocolChoice`].
#[doc(hidden)]
#[deprecated(note = "renamed to `ProtocolChoice`")]
pub type Protocol = ProtocolChoice;

/// Settles the era. `probe`: how long a stdio probe may go unanswered.
pub(crate) async fn negotiate(
    core: &Core,
    protocol: ProtocolChoice,
    probe: Option<Duration>,
) -> Result<(), ClientError> {
    match protocol {
        ProtocolChoice::Stateless => discover(core, None).await,
        ProtocolChoice::Session(version) => initialize(core, version).await,
        ProtocolChoice::Auto => match discover(core, probe).await {
            Ok(()) => Ok(()),
            // Anything but a transport failure says "not 2026-07-28 here": the server
            // answered the probe with an error (session-era servers say method not found, or
            // not initialized), an HTTP 4xx, no modern version, or (stdio) nothing in time.
            Err(
                ClientError::Rpc(_)
                | ClientError::Protocol(_)
                | ClientError::Timeout(_)
                | ClientError::Status {
                    status: 400..=499, ..
                },
            ) => match initialize(core, ProtocolVersion::LATEST_SESSION).await {
                // The probe went unanswered in time but reached the server, which now serves
                // 2026-07-28 on this connection and refuses `initialize` saying so (a stdio
                // server slower to start than the probe timeout): ask again, with the request
                // timeout.
                Err(e) if super::core::offers_our_version(&e) => discover(core, None).await,
                other => other,
            },
            Err(e) => Err(e),
        },
    }
}

async fn discover(core: &Core, timeout: Option<Duration>) -> Result<(), ClientError> {
    let params = json!({ "_meta": core.stateless_meta() });
    // A -32022 that lists 2026-07-28 among the supported versions is worth one more try.
    let result = match core
        .request_raw("server/discover", params.clone(), timeout)
        .await
    {
        Err(e) if super::core::offers_our_version(&e) => {
            core.request_raw("server/discover", params, timeout).await?
        }
        other => other?,
    };
    let modern = ProtocolVersion::V2026_07_28.as_str();
    let speaks = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(modern)));
    if !speaks {
        return Err(ClientError::protocol(format!(
            "the server does not list {modern} in supportedVersions: {}",
            result.get("supportedVersions").unwrap_or(&Value::Null)
        )));
    }
    core.set_negotiated(Negotiated {
        version: ProtocolVersion::V2026_07_28,
        server_info: result
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
            .cloned()
            .unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
    .await;
    Ok(())
}

pub(crate) async fn initialize(core: &Core, version: ProtocolVersion) -> Result<(), ClientError> {
    if version.era() != crate::protocol::ProtocolEra::Session {
        return Err(ClientError::protocol(format!(
            "{} has no initialize: use ProtocolChoice::Stateless",
            version.as_str()
        )));
    }
    let params = json!({
        "protocolVersion": version.as_str(),
        "capabilities": core.capabilities(true),
        "clientInfo": core.client_info,
    });
    let result = core.request_raw("initialize", params, None).await?;
    let chosen = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(agreed) =
        ProtocolVersion::parse(chosen).filter(|v| v.era() == crate::protocol::ProtocolEra::Session)
    else {
        core.close().await;
        return Err(ClientError::protocol(format!(
            "the server chose protocol version {chosen:?}, which this client does not speak"
        )));
    };
    core.set_initialized(Negotiated {
        version: agreed,
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
    });
    core.notify("notifications/initialized", Value::Null)
        .await?;
    core.link.negotiated(agreed).await;
    Ok(())
}
