//! `tools/call`.

use std::sync::Arc;

use super::connection::{Connection, Step};
use super::era::{self, Cache, Scope};
use super::handler::{Outcome, params_of, run};
use crate::protocol::params::{Body, Request};
use crate::protocol::{CallToolResult, McpError, ProtocolVersion};
use crate::tool::ToolCall;

impl Outcome for CallToolResult {
    fn shape_for(&mut self, version: ProtocolVersion) {
        era::downgrade_result(self, version);
    }
    fn meta(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        Some(&self.meta)
    }
    fn is_tool_error(&self) -> bool {
        self.is_error()
    }
}

pub(super) fn call_tool(conn: &Arc<Connection>, mut scope: Scope, req: Request) -> Step {
    let params = params_of!(scope, req, Body::CallTool);
    // `arguments` must be an object by the CallToolRequest schema: a protocol error. Objects
    // that do not fit the tool's own schema are tool errors the model can fix (isError).
    if params
        .arguments
        .as_ref()
        .is_some_and(|a| !matches!(a.get().as_bytes().first(), Some(b'{') | Some(b'n')))
    {
        let e = McpError::invalid_params(
            "Invalid params for tools/call: `arguments` must be an object",
        );
        return Step::Reply(scope.err(&req.id, e));
    }
    let inner = &conn.server.inner;
    let found = inner.registry.tool(&params.name);
    let Some(tool) = found.filter(|t| crate::registry::Listed::enabled(*t, &inner.catalog)) else {
        let name = crate::protocol::error::clip(&params.name);
        let e = McpError::invalid_params(format!("Unknown tool: {name}"))
            .with_data(serde_json::json!({ "name": name }));
        return Step::Reply(scope.err(&req.id, e));
    };
    let task = match super::task_call::mode(&scope, tool, params.task.as_ref()) {
        Ok(mode) => mode,
        Err(e) => return Step::Reply(scope.err(&req.id, e)),
    };
    if let Err(e) = super::input::open_round(&conn.server.inner, &mut scope, &req, tool.def.context)
    {
        return Step::Reply(scope.err(&req.id, e));
    }
    if let super::task_call::Mode::Task(ttl) = task {
        return super::task_call::call_as_task(
            conn,
            scope,
            &req.id,
            tool,
            params.arguments.as_deref(),
            ttl,
        );
    }
    let (call, mode, arguments) = (tool.def.call, tool.mode, params.arguments.as_deref());
    run(conn, scope, &req.id, tool.def.name, Cache::No, |context| {
        call(ToolCall {
            context,
            arguments,
            mode,
        })
    })
}
