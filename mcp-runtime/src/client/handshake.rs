//! The handshake that settles the era: `server/discover` (2026-07-28), `initialize` (the
//! session era), or the one after the other ([`ProtocolChoice::Auto`]).

use std::future::Future;
use std::pin::Pin;
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
    /// `initialize` at the newest session-era version. The right era is reached whatever the
    /// server's start-up time:
    ///
    /// - A server that answers the probe with an error (as every session-era server does)
    ///   costs one round trip, no wait: `initialize` follows at once. One that then refuses
    ///   `initialize` for serving 2026-07-28 (it was not ready for the probe) is asked again.
    /// - A stdio server silent for [`probe_timeout`](super::ClientBuilder::probe_timeout)
    ///   (2 s by default) is sent `initialize` beside the probe, and the probe keeps waiting:
    ///   the first answer that settles an era wins, the probe's when both are in. A server
    ///   still starting (`npx`, `uvx`) reads both in order once it is up: a 2026-07-28 server
    ///   answers the probe (and refuses `initialize`), a session-era server refuses the probe
    ///   and accepts `initialize`, and a server that speaks both eras answers the probe first.
    ///   When it accepts the `initialize` too, one more `server/discover` asks whether it
    ///   still serves 2026-07-28: one that serves each message in its own era does, and is
    ///   spoken to in 2026-07-28 as it would be had it started at once (the session it opened
    ///   for the `initialize` is never used: no `notifications/initialized` follows, and every
    ///   request carries the 2026-07-28 `_meta`); one for which `initialize` chose the session
    ///   era for the whole connection (the TypeScript SDK v2's `serveStdio`, as the spec
    ///   allows) refuses it, and is spoken to in that session. A session-era server that ignores
    ///   whatever comes before `initialize` is reached through `initialize` alone. A stdio
    ///   server's start-up counts against
    ///   [`connect_timeout`](super::ClientBuilder::connect_timeout) (60 s by default), not the
    ///   [`request_timeout`](super::ClientBuilder::request_timeout) of the handshake's
    ///   requests.
    /// - Over HTTP every request stands alone: the probe waits for its answer as any request
    ///   does, and there is nothing to race.
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

/// Settles the era. `probe` (stdio only): how long the probe may go unanswered before
/// `initialize` is sent beside it.
///
/// Over stdio the server may still be starting, and its start-up counts against the
/// `connect_timeout` that bounds the whole handshake, not against the `request_timeout` of
/// each of its requests: they wait as long as connecting may. Over HTTP a server that
/// accepted the connection is up, and each request has the request timeout.
pub(crate) async fn negotiate(
    core: &Core,
    protocol: ProtocolChoice,
    probe: Option<Duration>,
) -> Result<(), ClientError> {
    let wait = probe.map(|_| core.limits.connect_timeout);
    match protocol {
        ProtocolChoice::Stateless => {
            let found = ask_discover(core, wait).await?;
            core.set_negotiated(found).await;
            Ok(())
        }
        ProtocolChoice::Session(version) => initialize_within(core, version, wait).await,
        ProtocolChoice::Auto => auto(core, probe, wait).await,
    }
}

/// [`ProtocolChoice::Auto`]: the probe, then `initialize` when the probe says "not
/// 2026-07-28", or beside the probe when it goes unanswered for `probe`. `wait`: how long
/// each answer may take (`None`: the request timeout).
async fn auto(
    core: &Core,
    probe: Option<Duration>,
    wait: Option<Duration>,
) -> Result<(), ClientError> {
    // A server slow to start answers the probe late, and a late answer still counts.
    let discover = ask_discover(core, wait);
    tokio::pin!(discover);
    let answered = match probe {
        Some(probe) => tokio::time::timeout(probe, &mut discover).await.ok(),
        None => Some(discover.as_mut().await),
    };
    match answered {
        Some(Ok(found)) => {
            core.set_negotiated(found).await;
            Ok(())
        }
        // Anything but a transport failure says "not 2026-07-28 here": the server
        // answered the probe with an error (session-era servers say method not found, or
        // not initialized), an HTTP 4xx, no modern version, or (HTTP) nothing in time.
        Some(Err(
            ClientError::Rpc(_)
            | ClientError::Protocol(_)
            | ClientError::Timeout(_)
            | ClientError::Status {
                status: 400..=499, ..
            },
        )) => match initialize_within(core, ProtocolVersion::LATEST_SESSION, wait).await {
            // A server that refused the probe but now serves 2026-07-28 (it was not ready
            // for it yet) refuses `initialize` saying so: ask again.
            Err(e) if super::core::offers_our_version(&e) => {
                let found = ask_discover(core, wait).await?;
                core.set_negotiated(found).await;
                Ok(())
            }
            other => other,
        },
        Some(Err(e)) => Err(e),
        // A stdio server silent for `probe`: a session-era server that ignores what comes
        // before `initialize`, or any server still starting (npx, uvx). `initialize` goes
        // beside the probe, which is kept waiting: whichever answer settles the era first
        // wins. A server that reads in order answers the probe first, so a 2026-07-28 server
        // (which refuses the `initialize` after it) and one that speaks both eras end up in
        // 2026-07-28 (unless the `initialize` chose the session era for it: `after_probe`),
        // and a session-era server (which refuses the probe) in the session era.
        None => race(core, discover, probe.unwrap_or_default(), wait).await,
    }
}

/// The probe still waiting, and `initialize` sent beside it: the first to succeed settles the
/// era (the probe, when both answers are in, unless the `initialize` took the connection to the
/// session era: [`after_probe`]); when both fail, the more telling error.
async fn race(
    core: &Core,
    mut discover: Pin<&mut impl Future<Output = Result<Negotiated, ClientError>>>,
    grace: Duration,
    wait: Option<Duration>,
) -> Result<(), ClientError> {
    // The probe may still win: a refused `initialize` does not close the connection.
    let init = ask_initialize(core, ProtocolVersion::LATEST_SESSION, false, wait);
    tokio::pin!(init);
    let mut probe_failed = None;
    let mut init_failed = None;
    loop {
        tokio::select! {
            biased;
            found = &mut discover, if probe_failed.is_none() => match found {
                Ok(found) if init_failed.is_some() => {
                    core.set_negotiated(found).await;
                    return Ok(());
                }
                Ok(found) => return after_probe(core, found, init, grace, wait).await,
                Err(e) => probe_failed = Some(e),
            },
            agreed = &mut init, if init_failed.is_none() => match agreed {
                Ok(agreed) => return settle_initialize(core, agreed).await,
                Err(e) => init_failed = Some(e),
            },
        }
        if let (Some(probe), Some(init)) = (&probe_failed, &init_failed) {
            // `initialize` refused for serving 2026-07-28, or unknown there: the probe's
            // error says more. Otherwise `initialize`'s does (a session-era server refused
            // the probe as it should).
            let init_says_modern = super::core::offers_our_version(init)
                || init
                    .rpc()
                    .is_some_and(|e| e.code == crate::protocol::ErrorCode::METHOD_NOT_FOUND);
            return Err(if init_says_modern { probe } else { init }.clone());
        }
    }
}

/// The probe was answered while the `initialize` sent beside it was still out. A server that
/// speaks both eras may take that `initialize` as choosing the session era for the whole
/// connection (the spec lets an `initialize` select legacy semantics for a stdio process; the
/// TypeScript SDK v2's `serveStdio` answers the probe from an instance it then drops), and
/// serve no 2026-07-28 request after it. So `initialize`'s answer is awaited, for `grace` (the
/// server reads in order: it comes next): refused, or none, and the probe's answer stands;
/// accepted, and one more `server/discover` asks whether 2026-07-28 is still served. It is
/// when the server serves each message in its own era (this crate's servers do); when it is
/// refused, the session `initialize` agreed to is completed and used.
async fn after_probe(
    core: &Core,
    found: Negotiated,
    init: Pin<&mut impl Future<Output = Result<Negotiated, ClientError>>>,
    grace: Duration,
    wait: Option<Duration>,
) -> Result<(), ClientError> {
    let Ok(Ok(agreed)) = tokio::time::timeout(grace, init).await else {
        core.set_negotiated(found).await;
        return Ok(());
    };
    match ask_discover(core, wait).await {
        Ok(found) => {
            core.set_negotiated(found).await;
            Ok(())
        }
        Err(
            ClientError::Rpc(_)
            | ClientError::Protocol(_)
            | ClientError::Status {
                status: 400..=499, ..
            },
        ) => settle_initialize(core, agreed).await,
        Err(e) => Err(e),
    }
}

/// `server/discover`: what the server says, when it speaks 2026-07-28 (nothing is recorded).
async fn ask_discover(core: &Core, timeout: Option<Duration>) -> Result<Negotiated, ClientError> {
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
    Ok(Negotiated {
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
}

/// `initialize` at `version`, then `notifications/initialized`: the session era.
pub(crate) async fn initialize(core: &Core, version: ProtocolVersion) -> Result<(), ClientError> {
    initialize_within(core, version, None).await
}

/// [`initialize`], its answer awaited for `wait` (`None`: the request timeout).
async fn initialize_within(
    core: &Core,
    version: ProtocolVersion,
    wait: Option<Duration>,
) -> Result<(), ClientError> {
    let agreed = ask_initialize(core, version, true, wait).await?;
    settle_initialize(core, agreed).await
}

/// `initialize`: what the server agreed to (nothing is recorded, nothing more sent). A
/// version this client does not speak fails it, and closes the connection when `close_on_refusal`
/// (an HTTP session it opened is ended).
async fn ask_initialize(
    core: &Core,
    version: ProtocolVersion,
    close_on_refusal: bool,
    wait: Option<Duration>,
) -> Result<Negotiated, ClientError> {
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
    let result = core.request_raw("initialize", params, wait).await?;
    let chosen = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(agreed) =
        ProtocolVersion::parse(chosen).filter(|v| v.era() == crate::protocol::ProtocolEra::Session)
    else {
        if close_on_refusal {
            core.close().await;
        }
        return Err(ClientError::protocol(format!(
            "the server chose protocol version {chosen:?}, which this client does not speak"
        )));
    };
    Ok(Negotiated {
        version: agreed,
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// Records the session `initialize` agreed to and completes the handshake.
async fn settle_initialize(core: &Core, agreed: Negotiated) -> Result<(), ClientError> {
    let version = agreed.version;
    core.set_initialized(agreed);
    core.notify("notifications/initialized", Value::Null)
        .await?;
    core.link.negotiated(version).await;
    Ok(())
}
