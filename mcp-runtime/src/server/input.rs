//! 2026-07-28 multi-round-trip requests: the `inputResponses` and `requestState` a retry
//! carries, turned into the round its handler asks through (`ask/round.rs`).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

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
    /// Opens the round of a stateless `tools/call`, `prompts/get` or `resources/read` (the
    /// methods that may answer `InputRequiredResult`): checks the state's seal and binding and
    /// collects the answers. Other requests and the session era have no round.
    pub(crate) fn open_round(&self, scope: &mut Scope, req: &Request<'_>) -> Result<(), McpError> {
        if scope.version().era() != Era::Stateless {
            return Ok(());
        }
        let text = req.params.map(|p| p.get());
        let round = Round::new(Map::new(), false, &req.method, text);
        let carries = text
            .is_some_and(|t| t.contains("\"inputResponses\"") || t.contains("\"requestState\""));
        let mut answers = Map::new();
        if carries {
            let params: RoundParams = serde_json::from_str(text.unwrap_or("{}"))
                .map_err(|e| McpError::invalid_params(format!("Invalid params: {e}")))?;
            match params.request_state {
                None | Some(Value::Null) => {}
                Some(Value::String(state)) => {
                    answers = self.sealer.open(&state, round.binding())?;
                }
                Some(_) => return Err(McpError::invalid_params("`requestState` must be a string")),
            }
            match params.input_responses {
                None | Some(Value::Null) => {}
                // This round's answers; keys nobody asked for are ignored when asked for.
                Some(Value::Object(given)) => answers.extend(given),
                Some(_) => {
                    return Err(McpError::invalid_params(
                        "`inputResponses` must be an object",
                    ));
                }
            }
        }
        scope.round = Some(Arc::new(round.with_answers(answers, carries)));
        Ok(())
    }
}
