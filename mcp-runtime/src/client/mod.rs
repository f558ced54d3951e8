//! A client for MCP servers: spawn one over stdio or connect over Streamable HTTP, in either
//! protocol era, and call its tools, resources and prompts with typed results.
//!
//! ```no_run
//! use mcp_runtime::client::Client;
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), mcp_runtime::client::ClientError> {
//! // Spawn a stdio server (it ends when the client does)…
//! let client = Client::builder()
//!     .info("my-agent", "1.0.0")
//!     .spawn(tokio::process::Command::new("./target/debug/examples/quickstart"))
//!     .await?;
//! // …or connect to an HTTP one: Client::builder().connect("http://127.0.0.1:8000/mcp").await?
//! // (https:// with the `tls` feature)
//!
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let sum: i64 = client.call_tool_as("add", json!({"a": 2, "b": 3})).await?;
//! assert_eq!(sum, 5);
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! - **Eras**: [`ProtocolChoice::Auto`] (the default) probes with `server/discover` and speaks
//!   2026-07-28 (per-request `_meta`, no session) when the server does, the session era
//!   (`initialize`) otherwise, however long the server takes to start;
//!   [`ProtocolChoice::Session`] and [`ProtocolChoice::Stateless`] pin one.
//! - **Server requests**: [`ClientBuilder::on_elicitation`], [`on_sampling`](ClientBuilder::on_sampling)
//!   and [`roots`](ClientBuilder::roots) answer them and declare the capabilities. The same
//!   handler answers a session-era `elicitation/create` request and a 2026-07-28
//!   `InputRequiredResult` round (the call is retried with `inputResponses` and the
//!   `requestState` echoed), so a call looks the same in both eras.
//! - **Notifications**: [`Client::notifications`] (a stream), [`ClientBuilder::on_notification`]
//!   (a callback), [`Client::call_tool_with_progress`] (one call's progress).
//! - **HTTP**: the session id is kept and `DELETE`d on [`close`](Client::close); SSE answers
//!   that break off are resumed with `Last-Event-ID` after the server's `retry`; 2026-07-28
//!   requests carry `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers a tool's
//!   `x-mcp-header` annotations ask for (tools whose annotations break the rules are left out
//!   of [`list_tools`](Client::list_tools), as the spec requires).
//! - **TLS** (feature `tls`): `https://` URLs over rustls, trusting the platform's roots
//!   ([`ClientBuilder::add_root_certificate`] adds a private CA,
//!   [`trust_platform_roots(false)`](ClientBuilder::trust_platform_roots) trusts only those,
//!   [`tls_config`](ClientBuilder::tls_config) takes a whole [`rustls::ClientConfig`]; they
//!   hold for the server's OAuth authorization server too), HTTP/2
//!   when the server offers it (ALPN), HTTP/1.1 otherwise; Streamable HTTP and HTTP+SSE alike.
//!   A refused certificate is [`ClientError::Tls`], whose [`TlsFailure`] says which check
//!   failed (not trusted, another host's name, expired, …) and whose message names the host.
//!   Without the feature `https://` fails at once, naming it.
//! - **Many servers**: [`Clients`] connects to every server of an `mcpServers` file
//!   ([`ServersConfig`], the format of Claude Desktop, Cursor and VS Code) at once, reports
//!   each one's failure, and routes namespaced tool names (`server.tool`) to their servers,
//!   with one merged [`list_tools`](Clients::list_tools) (see below).
//! - **OAuth 2.1** ([`ClientBuilder::oauth`], module [`oauth`]): a server that answers 401 is
//!   authorized against its authorization server (discovery, registration, authorization code
//!   with PKCE or client credentials, scope step-up, refresh), and the request sent again; the
//!   token goes to that server only, in its `Authorization` header.
//! - **Cache hints** (2026-07-28): [`list_tools_listed`](Client::list_tools_listed) and the
//!   other `*_listed` lists, and [`discover`](Client::discover), give a result's `ttlMs` and
//!   `cacheScope` ([`CacheHint`]). [`ClientBuilder::cache`] keeps the lists and
//!   `server/discover` for their `ttlMs` and answers from memory; a
//!   `notifications/{tools,prompts,resources}/list_changed` drops the lists it names (the
//!   next call asks the server), before anyone hears of it.
//! - **Skills** (SEP-2640, the `io.modelcontextprotocol/skills` extension):
//!   [`list_skills`](Client::list_skills) reads the index only;
//!   [`load_skill`](Client::load_skill) reads a skill's `SKILL.md` and
//!   [`read_skill_file`](Client::read_skill_file) one of its files when needed, each checked
//!   against the index entry (`sha256:` digest, size, and `SKILL.md`'s frontmatter field by
//!   field, which needs the `skills` feature's YAML parser; an unlisted file is refused);
//!   [`read_skill`](Client::read_skill) reads a whole skill by name. A file that fails is
//!   [`ClientError::Integrity`] and is never returned.
//! - **Limits**: whatever the server does (never answers, trickles, sends without end, asks
//!   without end), every call ends within its deadline and what the client reads is bounded;
//!   [`ClientBuilder`] lists the deadlines and limits, and [`ClientError`] says which one
//!   ended a call.
//!
//! # Many servers
//!
//! A host (an agent, an IDE) reads its `mcpServers` file and connects to every server in it
//! at once; a server that fails is reported, the others are used:
//!
//! ```no_run
//! use mcp_runtime::client::{Client, Clients, ServersConfig};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! // {"mcpServers": {"calc": {"command": "./quickstart"},
//! //                 "docs": {"url": "http://127.0.0.1:8000/mcp"}}}
//! let config = ServersConfig::read("mcp.json")?;
//! let clients = Clients::connect(&config, Client::builder().info("my-host", "1.0.0")).await;
//! for failed in clients.failures() {
//!     eprintln!("{} is not available: {}", failed.server, failed.error);
//! }
//! let tools = clients.list_tools().await.tools; // "calc.add", "docs.search", …
//! let sum: i64 = clients.call_tool_as("calc.add", json!({"a": 2, "b": 3})).await?;
//! # let _ = (tools, sum);
//! clients.close().await;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "http")]
mod body;
mod builder;
mod cache;
mod core;
mod error;
mod handlers;
mod handshake;
mod headers;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod legacy;
mod limits;
// Crate-visible for the fuzz target of the stdio line reader (src/fuzzing.rs).
pub(crate) mod lines;
mod listen;
mod lists;
#[cfg(feature = "http")]
pub mod oauth;
pub(crate) mod peek;
mod router;
mod sent;
mod servers_config;
mod set;
mod skills;
// Crate-visible for the fuzz target of the parser (src/fuzzing.rs).
pub(crate) mod sse;
mod stdio;
// What the fuzz target of response routing builds a client's engine from (src/fuzzing.rs).
#[cfg(feature = "fuzzing")]
pub(crate) use self::{
    core::{Core, Inbound, Link, LinkFuture, Outgoing},
    handlers::Handlers,
    limits::Limits,
};

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

pub use builder::ClientBuilder;
pub use cache::{CacheHint, CacheScope};
pub use error::{ClientError, TlsFailure};
pub use handlers::{ElicitRequest, ElicitResult, ServerNotification};
#[allow(deprecated)]
pub use handshake::Protocol;
pub use handshake::ProtocolChoice;
pub use listen::Listen;
pub use lists::{Discovery, Listed};
pub use servers_config::{ServerConfig, ServerTransport, ServersConfig, ServersConfigError};
pub use set::{Clients, ListedTools, ServerFailure};
pub use skills::{Skill, SkillEntry, SkillFile, SkillFileRef};
pub use stdio::Stderr;

/// The rustls this crate's `https://` runs on (0.23), for
/// [`ClientBuilder::tls_config`]: build the `ClientConfig` with these types, and it always
/// matches. A new major version of rustls reaches mcp-runtime's API only in a breaking release.
#[cfg(feature = "tls")]
pub use rustls;

pub use crate::protocol::asks::{ElicitAction, Root, SampledMessage};
use crate::protocol::logging::LogLevel;
use crate::protocol::{
    CallToolResult, GetPromptResult, Implementation, ProtocolEra, ProtocolVersion, ResourceContents,
};
use sent::RawMember;

/// A connection to one MCP server. Cheap to share by reference across tasks: every method
/// takes `&self`, and requests run concurrently.
pub struct Client {
    core: Arc<core::Core>,
    stderr: Option<Arc<Mutex<VecDeque<u8>>>>,
    renew: bool,
}

/// `completion/complete`'s answer.
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// Suggested values, best first.
    pub values: Vec<String>,
    /// How many there are in all, when the server knows.
    #[serde(default)]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default)]
    pub has_more: Option<bool>,
}

/// What a completion is for.
#[derive(Clone, Copy, Debug)]
pub enum CompletionRef<'a> {
    /// An argument of the prompt with this name.
    Prompt(&'a str),
    /// A variable of the resource template with this URI template.
    Resource(&'a str),
}

/// One `notifications/progress` of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// How far along (grows with each notification).
    pub progress: f64,
    /// The end, when known.
    pub total: Option<f64>,
    /// What is happening.
    pub message: Option<String>,
}

impl Client {
    /// Starts configuring a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.core.version().unwrap_or(ProtocolVersion::LATEST)
    }

    /// The era in use.
    pub fn era(&self) -> ProtocolEra {
        self.protocol_version().era()
    }

    fn negotiated<T>(&self, f: impl FnOnce(&core::Negotiated) -> T) -> T {
        let n = self.core.negotiated.read().unwrap();
        f(n.as_ref().expect("a connected client has negotiated"))
    }

    /// The server's `serverInfo` (name, version, …) as it sent it.
    pub fn server_info(&self) -> Option<Implementation> {
        self.negotiated(|n| serde_json::from_value(n.server_info.clone()).ok())
    }

    /// The server's capabilities object.
    pub fn server_capabilities(&self) -> Value {
        self.negotiated(|n| n.capabilities.clone())
    }

    /// The server's instructions for the model, if any.
    pub fn instructions(&self) -> Option<String> {
        self.negotiated(|n| n.instructions.clone())
    }

    /// The HTTP session's id (`Mcp-Session-Id`), in the session era over Streamable HTTP.
    pub fn session_id(&self) -> Option<String> {
        self.core.link.session_id()
    }

    /// What a spawned server wrote to stderr (the last 64 KiB), when built with
    /// [`Stderr::Capture`].
    pub fn stderr(&self) -> Option<String> {
        let kept = self.stderr.as_ref()?.lock().unwrap();
        let bytes: Vec<u8> = kept.iter().copied().collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Every notification the server sends from now on (progress, log messages, list and
    /// resource changes). A receiver that falls more than 1024 behind skips the oldest.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.core.events.subscribe()
    }

    /// Any request, with the era's rules applied (`_meta`, input rounds): the raw result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_renewing(method, &params, None)
            .await?
            .to_value()
    }

    /// [`request`](Self::request), the result as the server sent it.
    async fn request_renewing(
        &self,
        method: &str,
        params: &Value,
        raw: RawMember<'_>,
    ) -> core::Answer {
        match self
            .core
            .request_with(method, params, raw, None, true)
            .await
        {
            Err(ClientError::SessionExpired) if self.renew => {
                self.core.link.reset_session();
                self.core.cache.clear();
                handshake::initialize(&self.core, self.protocol_version()).await?;
                self.core
                    .request_with(method, params, raw, None, true)
                    .await
            }
            other => other,
        }
    }

    /// [`request`](Self::request) asking for progress, with each `notifications/progress`
    /// params of the request passed to `on_progress` (a proxy passes them on). With `answer`
    /// false, a 2026-07-28 `InputRequiredResult` is the result (a proxy passes it on, and sends
    /// its client's `inputResponses` and `requestState` back in `params`). `raw`: one more
    /// member of the params, sent as the text it came as (a tool's arguments a proxy passes on).
    pub(crate) async fn request_with_progress(
        &self,
        method: &str,
        mut params: Value,
        raw: Option<(&'static str, Box<serde_json::value::RawValue>)>,
        on_progress: core::ProgressFn,
        answer: bool,
    ) -> core::Answer {
        let token = self.core.next_progress_token();
        let _watch = self.core.watch_progress(token.clone(), on_progress);
        if let Value::Object(map) = &mut params {
            let meta = map.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                meta.insert("progressToken".into(), json!(token));
            }
        }
        let raw = raw.as_ref().map(|(name, text)| (*name, &**text));
        if answer {
            self.request_renewing(method, &params, raw).await
        } else {
            // Only a 2026-07-28 server answers with input rounds: no session to renew.
            self.core
                .request_with(method, &params, raw, None, false)
                .await
        }
    }

    /// The `x-mcp-header` arguments of the server's tools (those that have any), as a listing
    /// read elsewhere gave them (a proxy lists with [`request`](Self::request)): its calls of
    /// those tools carry the `Mcp-Param-*` headers.
    pub(crate) fn remember_tool_headers(
        &self,
        tools: std::collections::HashMap<String, Vec<crate::protocol::headers::HeaderParam>>,
    ) {
        self.core.remember_tool_headers(tools);
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        self.core.notify(method, params).await
    }

    /// Calls a tool. A tool that fails returns `Ok` with `is_error` set (the content says
    /// why); protocol errors (unknown tool, bad arguments the server refuses) are `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let raw = self.call_tool_raw(name, arguments, Map::new()).await?;
        read(raw, "tools/call")
    }

    /// Calls a tool and reads its `structuredContent` (or, without one, its text as JSON,
    /// then as a string) as `T`. A tool error is [`ClientError::Tool`].
    pub async fn call_tool_as<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<T, ClientError> {
        let result = self.call_tool(name, arguments).await?;
        if result.is_error() {
            return Err(ClientError::Tool(Box::new(result)));
        }
        structured_as(result)
    }

    /// Calls a tool, passing each progress notification it sends to `on_progress`.
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: impl Serialize,
        on_progress: impl Fn(Progress) + Send + Sync + 'static,
    ) -> Result<CallToolResult, ClientError> {
        let token = self.core.next_progress_token();
        let _watch = self.core.watch_progress(
            token.clone(),
            Arc::new(move |p: &Value| {
                on_progress(Progress {
                    progress: p.get("progress").and_then(Value::as_f64).unwrap_or(0.0),
                    total: p.get("total").and_then(Value::as_f64),
                    message: p.get("message").and_then(Value::as_str).map(str::to_owned),
                })
            }),
        );
        let mut meta = Map::new();
        meta.insert("progressToken".into(), json!(token));
        let raw = self.call_tool_raw(name, arguments, meta).await?;
        read(raw, "tools/call")
    }

    async fn call_tool_raw(
        &self,
        name: &str,
        arguments: impl Serialize,
        meta: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::protocol(format!("the arguments do not serialize: {e}")))?;
        let mut params = json!({ "name": name, "arguments": arguments });
        if !meta.is_empty() {
            params["_meta"] = Value::Object(meta);
        }
        match self.request("tools/call", params.clone()).await {
            // A 2026-07-28 server checks `Mcp-Param-*` headers against the tool's
            // `x-mcp-header` annotations: a tool called before it was listed is listed once
            // and the call sent again with its headers.
            Err(ClientError::Rpc(e))
                if e.code == crate::protocol::ErrorCode::HEADER_MISMATCH
                    && !self.core.knows_tool_headers(name) =>
            {
                self.list_tools().await?;
                if !self.core.knows_tool_headers(name) {
                    return Err(ClientError::Rpc(e));
                }
                self.request("tools/call", params).await
            }
            other => other,
        }
    }

    /// Reads a resource: its contents (text or base64 blobs).
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ClientError> {
        let result = self
            .request("resources/read", json!({ "uri": uri }))
            .await?;
        read(
            result.get("contents").cloned().unwrap_or(Value::Null),
            "resources/read",
        )
    }

    /// Asks for `notifications/resources/updated` about `uri` (session era; in 2026-07-28
    /// use [`listen`](Self::listen)).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.session_only("resources/subscribe")?;
        self.request("resources/subscribe", json!({ "uri": uri }))
            .await
            .map(drop)
    }

    /// Stops [`subscribe`](Self::subscribe)'s notifications.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.session_only("resources/unsubscribe")?;
        self.request("resources/unsubscribe", json!({ "uri": uri }))
            .await
            .map(drop)
    }

    /// Renders a prompt with its arguments (an object of strings).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::protocol(format!("the arguments do not serialize: {e}")))?;
        let result = self
            .request(
                "prompts/get",
                json!({ "name": name, "arguments": arguments }),
            )
            .await?;
        read(result, "prompts/get")
    }

    /// Suggestions for an argument of a prompt or resource template, given what is typed so
    /// far (`value`) and the arguments already chosen (`context`).
    pub async fn complete(
        &self,
        reference: CompletionRef<'_>,
        argument: &str,
        value: &str,
        context: Map<String, Value>,
    ) -> Result<Completion, ClientError> {
        let reference = match reference {
            CompletionRef::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            CompletionRef::Resource(uri) => json!({"type": "ref/resource", "uri": uri}),
        };
        let mut params = json!({
            "ref": reference,
            "argument": {"name": argument, "value": value},
        });
        if !context.is_empty() {
            params["context"] = json!({ "arguments": context });
        }
        let result = self.request("completion/complete", params).await?;
        read(
            result.get("completion").cloned().unwrap_or(Value::Null),
            "completion/complete",
        )
    }

    /// The least severe log messages the server should send. Session era:
    /// `logging/setLevel`; 2026-07-28: sent as `_meta` `logLevel` on every later request.
    pub async fn set_logging_level(&self, level: LogLevel) -> Result<(), ClientError> {
        let name = serde_json::to_value(level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".into());
        if self.core.is_stateless() {
            *self.core.log_level.lock().unwrap() = Some(name);
            return Ok(());
        }
        self.request("logging/setLevel", json!({ "level": name }))
            .await
            .map(drop)
    }

    /// Checks that the server answers (session era `ping`; 2026-07-28 has no ping, so
    /// `server/discover` is asked instead).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.core.is_stateless() {
            "server/discover"
        } else {
            "ping"
        };
        self.request(method, json!({})).await.map(drop)
    }

    /// Tells a session-era server that the roots changed (it asks for them again).
    pub async fn roots_changed(&self) -> Result<(), ClientError> {
        self.session_only("notifications/roots/list_changed")?;
        self.notify("notifications/roots/list_changed", Value::Null)
            .await
    }

    fn session_only(&self, method: &str) -> Result<(), ClientError> {
        if self.core.is_stateless() {
            return Err(ClientError::protocol(format!(
                "{method} does not exist in 2026-07-28 (this connection's version)"
            )));
        }
        Ok(())
    }

    /// Whether the connection is over: [`close`](Self::close)d, or ended on its own (a spawned
    /// server that exited, a closed stdio or HTTP+SSE stream). An HTTP connection learns that its
    /// server went away only from a request that fails.
    pub(crate) fn is_gone(&self) -> bool {
        self.core.is_gone()
    }

    /// Ends the connection: `DELETE`s the HTTP session, or closes a spawned server's stdin
    /// and waits for it to exit (killing it after 2 s). Requests still waiting fail with
    /// [`ClientError::Closed`].
    pub async fn close(&self) {
        self.core.close().await;
    }
}

fn read<T: DeserializeOwned>(value: Value, method: &str) -> Result<T, ClientError> {
    serde_json::from_value(value)
        .map_err(|e| ClientError::protocol(format!("{method}: the result does not read: {e}")))
}

fn read_all<T: DeserializeOwned>(items: Vec<Value>, method: &str) -> Result<Vec<T>, ClientError> {
    items.into_iter().map(|v| read(v, method)).collect()
}

/// A tool result as `T`: `structuredContent` (a tool returning a non-object is wrapped as
/// `{"result": …}` by servers of this framework, and unwrapped here when `T` wants the
/// value), else the text blocks as JSON, else as a JSON string.
fn structured_as<T: DeserializeOwned>(result: CallToolResult) -> Result<T, ClientError> {
    if let Some(structured) = result.structured_content {
        let unwrapped = match &structured {
            Value::Object(map) if map.len() == 1 => map.get("result").cloned(),
            _ => None,
        };
        return match serde_json::from_value::<T>(structured) {
            Ok(v) => Ok(v),
            Err(e) => match unwrapped.map(serde_json::from_value::<T>) {
                Some(Ok(v)) => Ok(v),
                _ => Err(ClientError::protocol(format!(
                    "the tool's structuredContent does not read as the requested type: {e}"
                ))),
            },
        };
    }
    let text = result.text();
    serde_json::from_str::<T>(&text)
        .or_else(|_| serde_json::from_value::<T>(Value::String(text.clone())))
        .map_err(|e| {
            ClientError::protocol(format!(
                "the tool's result does not read as the requested type: {e}"
            ))
        })
}
