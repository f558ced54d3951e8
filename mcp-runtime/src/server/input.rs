//! 2026-07-28 multi-round-trip requests: the `inputResponses` and `requestState` a retry
//! carries, turned into the round its handler asks through (`ask/round.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::envelope::may_have_member;
use super::era::Scope;
use crate::ask::round::Round;
use crate::protocol::jsonrpc::Request;
use crate::protocol::{Era, McpError};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoundParams {
    input_responses: Option<Value>,
    request_state: Option<Value>,
}

impl super::ServerInner {
    /// Who is asking: the verified principal's issuer and subject when the request carries
    /// one, else from the HTTP request's headers what `request_state_caller` returns, by
    /// default the `Authorization` header (its bytes, readable or not). It binds a
    /// 2026-07-28 `requestState`, an HTTP session and tasks to their caller.
    pub(crate) fn caller(
        &self,
        headers: Option<&http::HeaderMap>,
        principal: Option<&crate::auth::Principal>,
    ) -> Option<Vec<u8>> {
        if let Some(p) = principal {
            return Some(p.caller_key());
        }
        let headers = headers?;
        match &self.state_caller {
            Some(caller) => caller(headers).map(String::into_bytes),
            None => headers
                .get(http::header::AUTHORIZATION)
                .map(|v| v.as_bytes().to_vec()),
        }
    }

    /// Opens the round of a stateless `tools/call`, `prompts/get` or `resources/read` (the
    /// methods that may answer `InputRequiredResult`): checks the state's seal and binding and
    /// collects the answers. Other requests and the session era have no round.
    pub(crate) fn open_round(&self, scope: &mut Scope, req: &Request<'_>) -> Result<(), McpError> {
        if scope.version().era() != Era::Stateless {
            return Ok(());
        }
        let text = req.params.map(|p| p.get());
        let principal = self.caller(scope.headers.as_deref(), scope.principal.as_deref());
        let round = Round::new(&req.method, text, principal.as_deref());
        let carries = text.is_some_and(|t| {
            may_have_member(t, "inputResponses") || may_have_member(t, "requestState")
        });
        let mut answers: HashMap<String, (Value, Option<String>)> = HashMap::new();
        let mut memo = Map::new();
        if carries {
            let params: RoundParams = serde_json::from_str(text.unwrap_or("{}"))
                .map_err(|e| McpError::invalid_params(format!("Invalid params: {e}")))?;
            let mut pending = Map::new();
            match params.request_state {
                None | Some(Value::Null) => {}
                Some(Value::String(state)) => {
                    let sealed = self.sealer.open(&state, round.binding()?)?;
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
            match params.input_responses {
                None | Some(Value::Null) => {}
                // This round's answers, each bound to the question the state says it answers.
                // An answer to a question not asked yet is taken as given (the client could
                // answer it anyway once asked; the SEP-2322 conformance suite answers before
                // asking). Answers sealed in earlier rounds stand: a retry cannot change them.
                Some(Value::Object(given)) => {
                    for (key, answer) in given {
                        let asked = pending.get(&key).and_then(Value::as_str).map(str::to_owned);
                        answers.entry(key).or_insert((answer, asked));
                    }
                }
                Some(_) => {
                    return Err(McpError::invalid_params(
                        "`inputResponses` must be an object",
                    ));
                }
            }
        }
        scope.round = Some(Arc::new(round.with_answers(answers, memo, carries)));
        Ok(())
    }
}
