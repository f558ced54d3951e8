//! `prompts/get`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::connection::{Connection, Step};
use super::era::{Cache, Scope};
use super::handler::{Outcome, params_of, run};
use crate::prompt::PromptCall;
use crate::protocol::params::{Body, Request};
use crate::protocol::{GetPromptResult, McpError};

impl Outcome for GetPromptResult {}

pub(super) fn get_prompt(conn: &Arc<Connection>, mut scope: Scope, req: Request) -> Step {
    let params = params_of!(scope, req, Body::GetPrompt);
    let inner = &conn.server.inner;
    let found = inner.registry.prompt(&params.name);
    let Some(prompt) = found.filter(|p| crate::registry::Listed::enabled(*p, &inner.catalog))
    else {
        let name = crate::protocol::error::clip(&params.name);
        let e = McpError::invalid_params(format!("Unknown prompt: {name}"))
            .with_data(serde_json::json!({ "name": name }));
        return Step::Reply(scope.err(&req.id, e));
    };
    // Prompt arguments are strings; numbers and booleans are taken as their text.
    let mut arguments = HashMap::new();
    for (name, value) in params.arguments.iter().flatten() {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => continue,
            _ => {
                let e = McpError::invalid_params(format!("Argument `{name}` must be a string"));
                return Step::Reply(scope.err(&req.id, e));
            }
        };
        arguments.insert(name.clone(), text);
    }
    if let Err(e) =
        super::input::open_round(&conn.server.inner, &mut scope, &req, prompt.def.context)
    {
        return Step::Reply(scope.err(&req.id, e));
    }
    let get = prompt.def.get;
    run(
        conn,
        scope,
        &req.id,
        prompt.def.name,
        Cache::No,
        move |context| {
            get(PromptCall {
                context,
                arguments: &arguments,
            })
        },
    )
}
