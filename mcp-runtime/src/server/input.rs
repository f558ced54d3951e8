//! 2026-07-28 multi-round-trip requests: the `inputResponses` and `requestState` a retry
//! carries, turned into the round its handler asks through (`request_state/round.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::era::Scope;
use super::{Server, ServerInner};
use crate::protocol::params::Request;
use crate::protocol::{McpError, ProtocolEra};
use crate::request_state::round::Round;

/// Opens the round of a stateless `tools/call`, `prompts/get` or `resources/read` (the
/// methods that may answer `InputRequiredResult`): checks the state's seal and binding and
/// collects the answers. Other requests and the session era have no round, nor does a request
/// whose handler cannot ask (`may_ask` false: a fn not given its context) and which carries
/// no state or answers.
pub(crate) fn open_round(
    inner: &ServerInner,
    scope: &mut Scope,
    req: &Request,
    may_ask: bool,
) -> Result<(), McpError> {
    if scope.version().era() != ProtocolEra::Stateless {
        return Ok(());
    }
    let (input_responses, request_state) = req.params.round();
    let carries = input_responses.is_some() || request_state.is_some();
    if !carries && !may_ask {
        return Ok(());
    }
    let principal = inner.caller(scope.headers.as_deref(), scope.principal.as_deref());
    let round = Round::new(&req.method, req.params.bound(), principal);
    let mut answers: HashMap<String, (Value, Option<String>)> = HashMap::new();
    let mut memo = Map::new();
    let mut claim = None;
    if carries {
        let mut pending = Map::new();
        match request_state {
            None | Some(Value::Null) => {}
            Some(Value::String(state)) => {
                let opened = inner.sealer.open(state, round.binding()?)?;
                claim = opened.claim;
                let sealed = opened.sealed;
                pending = sealed.pending;
                memo = sealed.memo;
                for (key, kept) in sealed.answers {
                    if let Value::Object(mut kept) = kept
                        && let Some(answer) = kept.remove("v")
                    {
                        let asked = kept.get("q").and_then(Value::as_str).map(str::to_owned);
                        answers.insert(key, (answer, asked));
                    }
                }
            }
            Some(_) => return Err(McpError::invalid_params("`requestState` must be a string")),
        }
        match input_responses {
            None | Some(Value::Null) => {}
            // This round's answers, each bound to the question the state says it answers.
            // An answer to a question not asked yet is taken as given (the client could
            // answer it anyway once asked; the SEP-2322 conformance suite answers before
            // asking). Answers sealed in earlier rounds stand: a retry cannot change them.
            Some(Value::Object(given)) => {
                for (key, answer) in given {
                    let asked = pending.get(key).and_then(Value::as_str).map(str::to_owned);
                    answers
                        .entry(key.clone())
                        .or_insert((answer.clone(), asked));
                }
            }
            Some(_) => {
                return Err(McpError::invalid_params(
                    "`inputResponses` must be an object",
                ));
            }
        }
    }
    let mut round = round.with_answers(answers, memo, carries);
    round.claim = claim;
    scope.round = Some(Arc::new(round));
    Ok(())
}

/// Records the single use of the state a round opened, before its handler runs: -32602 if
/// the state was used already, -32603 if the guard fails or does not answer within
/// [`GUARD_TIMEOUT`] (nothing runs on a state the guard could not check). Without a guard no
/// round has a claim, and this does nothing.
pub(crate) async fn claim_round(inner: &ServerInner, round: &Round) -> Result<(), McpError> {
    let (Some(claim), Some(guard)) = (&round.claim, inner.sealer.guard()) else {
        return Ok(());
    };
    let unavailable = || {
        McpError::internal(
            "Internal error: the requestState single-use guard is unavailable; try again later",
        )
    };
    match tokio::time::timeout(GUARD_TIMEOUT, guard.first_use(&claim.id, claim.expires)).await {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err(McpError::invalid_params(
            "Invalid requestState: it was used already (each state is good for one retry); \
                 send the request again without it",
        )),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "the requestState single-use guard failed");
            Err(unavailable())
        }
        Err(_) => {
            tracing::error!(
                timeout = ?GUARD_TIMEOUT,
                "the requestState single-use guard did not answer in time"
            );
            Err(unavailable())
        }
    }
}

/// How long a single-use guard may take to answer before the request fails.
pub(crate) const GUARD_TIMEOUT: Duration = Duration::from_secs(5);

/// Warns when `server` serves on `local`, an address other than loopback, with a
/// `requestState` key drawn at random for this process (none was configured): behind a load
/// balancer, the rounds of a multi-round request that land on another instance, or on this one
/// after a restart, would fail.
#[cfg(feature = "http")]
pub(crate) fn warn_if_request_state_key_is_ephemeral(server: &Server, local: std::net::SocketAddr) {
    if server.inner.sealer.is_ephemeral() && !local.ip().is_loopback() {
        tracing::warn!(
            %local,
            "no requestState key is configured, so this process drew its own: behind a load \
             balancer, a 2026-07-28 multi-round request whose retry reaches another instance \
             (or this one after a restart) fails; give every instance the same keys with \
             MCP_REQUEST_STATE_KEYS or ServerBuilder::request_state_keys"
        );
    }
}
