//! The members of each method's params, as the one decode reads them, and the `_meta` members
//! the runtime reads. Plain data: [`decode`](super::decode) fills them, the handlers read them.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `_meta` members of a request that the runtime reads.
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
pub(crate) struct RequestMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) protocol_version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client_capabilities: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client_info: Option<Value>,
    #[serde(rename = "progressToken")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) progress_token: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) log_level: Option<String>,
    /// W3C trace context (the spec reserves these `_meta` keys for it): any JSON, so that a
    /// malformed one is ignored rather than failing the request.
    #[cfg(feature = "opentelemetry")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) traceparent: Option<Value>,
    #[cfg(feature = "opentelemetry")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tracestate: Option<Value>,
}

impl RequestMeta {
    /// Whether it names a protocol version: the mark of a stateless-era (2026-07-28) request.
    pub(crate) fn is_stateless(&self) -> bool {
        self.protocol_version.is_some()
    }
}

/// `initialize`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) protocol_version: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) capabilities: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client_info: Option<Value>,
}

/// `logging/setLevel`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct SetLevelParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) level: String,
}

/// A list method's page.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct ListParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
}

/// `tools/call`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct CallToolParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) name: String,
    /// Kept as JSON text: the tool's generated adapter reads it into its own arguments type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) arguments: Option<Box<RawValue>>,
    /// 2025-11-25: the client asks for a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<Value>,
    #[serde(rename = "inputResponses")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) input_responses: Option<Value>,
    #[serde(rename = "requestState")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<Value>,
}

/// `prompts/get`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct GetPromptParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) name: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) arguments: Option<HashMap<String, Value>>,
    #[serde(rename = "inputResponses")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) input_responses: Option<Value>,
    #[serde(rename = "requestState")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<Value>,
}

/// The methods that name one resource.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct UriParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) uri: String,
    #[serde(rename = "inputResponses")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) input_responses: Option<Value>,
    #[serde(rename = "requestState")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) request_state: Option<Value>,
}

/// `resources/directory/read`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct DirectoryParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<String>,
}

/// `completion/complete`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct CompleteParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    #[serde(rename = "ref")]
    pub(crate) reference: Reference,
    pub(crate) argument: CompleteArgument,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) context: Option<CompletionContext>,
}

/// What a completion is for.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type")]
pub(crate) enum Reference {
    /// A prompt's argument.
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    /// A resource template's variable.
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

/// The argument being completed.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct CompleteArgument {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// The values already given for the other arguments.
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
pub(crate) struct CompletionContext {
    #[serde(default)]
    pub(crate) arguments: HashMap<String, String>,
}

/// `subscriptions/listen`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct ListenParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    pub(crate) notifications: ListenFilter,
}

/// What a `subscriptions/listen` asks for (and, acknowledged, what it gets).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListenFilter {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) tools_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) prompts_list_changed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) resources_list_changed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) resource_subscriptions: Option<Vec<String>>,
    /// Tasks extension: the tasks whose status changes the stream carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task_ids: Option<Vec<String>>,
}

/// `tasks/get`, `tasks/cancel`, `tasks/result`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct TaskParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    #[serde(rename = "taskId")]
    pub(crate) task_id: String,
}

/// `tasks/update`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct UpdateTaskParams {
    #[serde(rename = "_meta")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<Box<RequestMeta>>,
    #[serde(rename = "taskId")]
    pub(crate) task_id: String,
    #[serde(rename = "inputResponses", default)]
    pub(crate) input_responses: Map<String, Value>,
}
