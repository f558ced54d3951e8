//! `completion/complete` for prompt arguments and resource-template variables.

use serde::Serialize;

use super::connection::{Connection, Step};
use super::era::{Cache, Scope};
use super::handler::{Outcome, params_of, run};
use crate::completion::{CompleteFn, CompletionRequest, MAX_VALUES};
use crate::protocol::McpError;
use crate::protocol::params::{Body, Reference, Request};
use crate::registry::Listed;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Completion {
    values: Vec<String>,
    total: usize,
    has_more: bool,
}

#[derive(Serialize)]
struct CompleteResult {
    completion: Completion,
}

impl Outcome for CompleteResult {}

pub(super) fn complete(conn: &std::sync::Arc<Connection>, scope: Scope, req: &Request) -> Step {
    let params = params_of!(scope, req, Body::Complete);
    let registry = &conn.server.inner.registry;
    let catalog = &conn.server.inner.catalog;
    let table: &[(&str, CompleteFn)] = match &params.reference {
        Reference::Prompt { name } => match registry.prompt(name).filter(|p| p.enabled(catalog)) {
            Some(p) => p.def.complete,
            None => {
                return Step::Reply(scope.err(
                    &req.id,
                    McpError::invalid_params(format!(
                        "Unknown prompt: {}",
                        crate::protocol::error::clip(name)
                    )),
                ));
            }
        },
        Reference::Resource { uri } => {
            match registry
                .templates
                .items
                .iter()
                .find(|t| t.def.uri == uri.as_str())
                .filter(|t| t.enabled(catalog))
            {
                Some(t) => t.def.complete,
                None if registry
                    .static_resource(uri)
                    .is_some_and(|r| r.enabled(catalog)) =>
                {
                    &[]
                }
                None => {
                    let e = McpError::invalid_params(format!(
                        "Unknown resource template: {}",
                        crate::protocol::error::clip(uri)
                    ));
                    return Step::Reply(scope.err(&req.id, e));
                }
            }
        }
    };
    // An argument without a completion fn simply has no suggestions. Completion fns may
    // query a store, so they run on the blocking pool like sync tools.
    let complete = table
        .iter()
        .find(|(name, _)| *name == params.argument.name)
        .map(|(_, f)| *f);
    let request = CompletionRequest {
        argument: params.argument.name.clone(),
        value: params.argument.value.clone(),
        arguments: params
            .context
            .as_ref()
            .map(|c| c.arguments.clone())
            .unwrap_or_default(),
    };
    run(
        conn,
        scope,
        &req.id,
        "completion/complete",
        Cache::No,
        move |_ctx| {
            Box::pin(async move {
                let mut values = match complete {
                    Some(complete) => tokio::task::spawn_blocking(move || complete(&request))
                        .await
                        .map_err(|_| McpError::internal("the completion fn panicked"))?,
                    None => Vec::new(),
                };
                let total = values.len();
                values.truncate(MAX_VALUES);
                Ok(CompleteResult {
                    completion: Completion {
                        has_more: total > values.len(),
                        values,
                        total,
                    },
                })
            })
        },
    )
}
