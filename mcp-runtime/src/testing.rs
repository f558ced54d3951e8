//! An in-process client for testing tools: it talks to the server's dispatcher directly, with no
//! transport, in either protocol era.
//!
//! ```standalone_crate
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::testing::TestClient;
//!
//! /// Add two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let client = TestClient::connect().await; // session era, latest version
//! let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(result.text(), "5");
//! assert_eq!(result.structured(), Some(&serde_json::json!({"result": 5})));
//!
//! let stateless = TestClient::stateless().await; // 2026-07-28: _meta on every request
//! let tools = stateless.list_tools().await.unwrap();
//! assert!(tools.iter().any(|t| t["name"] == "add"));
//! # }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Map, Value, json};

use crate::Server;
use crate::protocol::{ErrorCode, McpError, ProtocolVersion};
use crate::server::connection::{Connection, Step, Wire};
use crate::server::dispatch::on_message;

/// Checks that `T` can be an elicitation form (a flat object of primitive fields, see
/// [`Context::elicit`](crate::Context::elicit)); the error names the offending field. A form
/// is also checked when it is asked for, where an invalid one fails the ask with this reason:
/// call this in a unit test to find out before a client does.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Signup {
///     name: String,
///     newsletter: bool,
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Nested {
///     signup: Signup,
/// }
///
/// # fn main() {
/// mcp_runtime::testing::check_form::<Signup>().unwrap();
/// let why = mcp_runtime::testing::check_form::<Nested>().unwrap_err();
/// assert!(why.contains("field `signup`"), "{why}");
/// # }
/// ```
pub fn check_form<T: schemars::JsonSchema + 'static>() -> Result<(), String> {
    crate::protocol::form::check_form::<T>()
}

/// A client connected in-process to a [`Server`].
pub struct TestClient {
    conn: Arc<Connection>,
    notifications: Arc<std::sync::Mutex<Vec<Value>>>,
    asks: Arc<std::sync::Mutex<Vec<Value>>>,
    version: ProtocolVersion,
    next_id: AtomicI64,
    capabilities: Value,
    answer: Option<Answer>,
}

/// How a test client answers the server's asks: `(method, params)` to a result or an error.
pub type Answer = Arc<dyn Fn(&str, &Value) -> Result<Value, McpError> + Send + Sync>;

/// A `tools/call` result, with accessors for assertions.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResponse {
    /// The whole result object.
    pub raw: Value,
}

impl ToolResponse {
    /// All text blocks joined with newlines.
    pub fn text(&self) -> String {
        self.content()
            .iter()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The content blocks.
    pub fn content(&self) -> &[Value] {
        self.raw
            .get("content")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// `structuredContent`, if present.
    pub fn structured(&self) -> Option<&Value> {
        self.raw.get("structuredContent")
    }

    /// Whether the tool reported an error (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.raw.get("isError").and_then(Value::as_bool) == Some(true)
    }
}

impl TestClient {
    /// Connects to a server with every registered tool, through `initialize` at the newest
    /// session-era version.
    ///
    /// # Panics
    /// If the registrations are invalid (see [`ServerBuilder::build`](crate::ServerBuilder::build)).
    pub async fn connect() -> TestClient {
        Self::connect_to(default_server(), ProtocolVersion::LATEST_SESSION)
            .await
            .expect("initialize succeeds")
    }

    /// Connects to a server with every registered tool in the stateless era (2026-07-28).
    pub async fn stateless() -> TestClient {
        Self::connect_to(default_server(), ProtocolVersion::V2026_07_28)
            .await
            .expect("stateless needs no handshake")
    }

    /// Connects to `server` at `version`: session-era versions run `initialize` (and send
    /// `notifications/initialized`); the stateless era sends `_meta` on every request instead.
    pub async fn connect_to(
        server: Server,
        version: ProtocolVersion,
    ) -> Result<TestClient, McpError> {
        Self::connect_answering(server, version, json!({}), None).await
    }

    /// Like [`connect_to`](Self::connect_to), declaring `capabilities` and answering the
    /// server's asks (elicitation, sampling, roots) with `answer`: as responses to its requests
    /// in the session era, and by retrying with `inputResponses` in 2026-07-28, as real
    /// clients do. Each ask is logged for [`take_asks`](Self::take_asks).
    ///
    /// ```standalone_crate
    /// use mcp_runtime::prelude::*;
    /// use mcp_runtime::ProtocolVersion;
    /// use mcp_runtime::testing::TestClient;
    /// use serde_json::json;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name { name: String }
    ///
    /// /// Greet whoever answers.
    /// #[tool]
    /// async fn hello(ctx: Context) -> Result<String, McpError> {
    ///     Ok(match ctx.elicit::<Name>("Who are you?").await? {
    ///         Elicitation::Accept(n) => format!("Hello, {}!", n.name),
    ///         _ => "Hello, stranger!".into(),
    ///     })
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let server = mcp_runtime::Server::builder().build().unwrap();
    /// for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
    ///     let answer = std::sync::Arc::new(|_: &str, _: &serde_json::Value| {
    ///         Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    ///     });
    ///     let client = TestClient::connect_answering(
    ///         server.clone(), version, json!({"elicitation": {}}), Some(answer),
    ///     ).await.unwrap();
    ///     let result = client.call_tool("hello", json!({})).await.unwrap();
    ///     assert_eq!(result.text(), "Hello, Ada!");
    ///     assert_eq!(client.take_asks().len(), 1);
    /// }
    /// # }
    /// ```
    pub async fn connect_answering(
        server: Server,
        version: ProtocolVersion,
        capabilities: Value,
        answer: Option<Answer>,
    ) -> Result<TestClient, McpError> {
        let notifications = Arc::new(std::sync::Mutex::new(Vec::new()));
        let asks = Arc::new(std::sync::Mutex::new(Vec::new()));
        let collected = notifications.clone();
        let asked = asks.clone();
        let conn_cell: Arc<std::sync::OnceLock<std::sync::Weak<Connection>>> = Default::default();
        let conn_of_sink = conn_cell.clone();
        let answer_in_sink = answer.clone();
        let sink = crate::request::Sink::new(move |message| {
            let value: Value =
                serde_json::from_slice(&message).expect("the server sends valid JSON");
            let (Some(id), Some(method)) = (value.get("id"), value["method"].as_str()) else {
                collected.lock().expect("notifications lock").push(value);
                return true;
            };
            // A request to the client: answer it through the connection, as a client would.
            asked.lock().expect("asks lock").push(value.clone());
            let response = match answer_in_sink.as_ref().map(|a| a(method, &value["params"])) {
                Some(Ok(result)) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Some(Err(e)) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
                None => return true,
            };
            if let Some(conn) = conn_of_sink.get().and_then(std::sync::Weak::upgrade) {
                let _ = on_message(&conn, &response.to_string());
            }
            true
        });
        let conn = Connection::with_sink(server, Wire::IN_PROCESS, sink);
        let _ = conn_cell.set(Arc::downgrade(&conn));
        let client = TestClient {
            conn,
            notifications,
            asks,
            version,
            next_id: AtomicI64::new(1),
            capabilities: capabilities.clone(),
            answer,
        };
        if version.era() == crate::protocol::ProtocolEra::Session {
            let result = client
                .request(
                    "initialize",
                    json!({
                        "protocolVersion": version.as_str(),
                        "capabilities": capabilities,
                        "clientInfo": {"name": "mcp-runtime-test-client", "version": env!("CARGO_PKG_VERSION")}
                    }),
                )
                .await?;
            let negotiated = result["protocolVersion"]
                .as_str()
                .and_then(ProtocolVersion::parse);
            if negotiated != Some(version) {
                return Err(McpError::internal(format!(
                    "server negotiated {negotiated:?}, not {version}"
                )));
            }
            client.notify("notifications/initialized", json!({}));
        }
        Ok(client)
    }

    /// The notifications the server sent so far (progress, logs), oldest first; clears them.
    pub fn take_notifications(&self) -> Vec<Value> {
        std::mem::take(&mut *self.notifications.lock().expect("notifications lock"))
    }

    /// The asks the server sent so far (session-era requests as sent; 2026-07-28 input
    /// requests as `{method, params}`), oldest first; clears them.
    pub fn take_asks(&self) -> Vec<Value> {
        std::mem::take(&mut *self.asks.lock().expect("asks lock"))
    }

    /// The protocol version this client speaks.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Sends one raw message (any text) and returns the response object, or `None` when there is
    /// none (a notification, or a cancelled request).
    pub async fn send_raw(&self, text: &str) -> Option<Value> {
        let reply = match on_message(&self.conn, text) {
            Step::Reply(out) => out,
            Step::Run(pending) => tokio::spawn(pending).await.expect("request task")?,
            Step::Nothing => return None,
        };
        Some(serde_json::from_slice(&reply.bytes).expect("the server sends valid JSON"))
    }

    /// Sends a request with this id and params as given (no `_meta` added).
    pub async fn send_request(&self, id: Value, method: &str, params: Value) -> Option<Value> {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&msg.to_string()).await
    }

    /// Sends a request (adding the stateless `_meta` when in that era) and returns its result.
    /// With an answering function (see [`connect_answering`](Self::connect_answering)), an
    /// `InputRequiredResult` is answered and the request retried, up to 16 rounds.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, McpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut result = self.request_with_id(id, method, params.clone()).await?;
        let Some(answer) = &self.answer else {
            return Ok(result);
        };
        for _ in 0..16 {
            if result["resultType"] != "input_required" {
                break;
            }
            let mut responses = Map::new();
            if let Some(Value::Object(requests)) = result.get("inputRequests") {
                for (key, request) in requests {
                    self.asks.lock().expect("asks lock").push(request.clone());
                    let method = request["method"].as_str().unwrap_or_default();
                    responses.insert(key.clone(), answer(method, &request["params"])?);
                }
            }
            let mut retry = params.clone();
            if let Value::Object(map) = &mut retry {
                map.insert("inputResponses".into(), Value::Object(responses));
                if let Some(state) = result.get("requestState") {
                    map.insert("requestState".into(), state.clone());
                }
            }
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            result = self.request_with_id(id, method, retry).await?;
        }
        Ok(result)
    }

    /// Like [`request`](Self::request), with a chosen id (to cancel it, say).
    pub async fn request_with_id(
        &self,
        id: i64,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        let params = self.with_meta(params);
        let Some(mut response) = self.send_request(json!(id), method, params).await else {
            return Err(McpError::new(
                ErrorCode::INTERNAL_ERROR,
                "no response (cancelled)",
            ));
        };
        if let Some(error) = response.get_mut("error") {
            let code = error["code"].as_i64().unwrap_or(0) as i32;
            let message = error["message"].as_str().unwrap_or_default().to_owned();
            let mut e = McpError::new(ErrorCode(code), message);
            e.data = error.get_mut("data").map(Value::take);
            return Err(e);
        }
        Ok(response
            .get_mut("result")
            .map(Value::take)
            .unwrap_or(Value::Null))
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let _ = on_message(&self.conn, &msg.to_string());
    }

    /// Every tool, following `nextCursor` through all pages.
    pub async fn list_tools(&self) -> Result<Vec<Value>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let mut page = self.request("tools/list", params).await?;
            if let Some(Value::Array(items)) = page.get_mut("tools").map(Value::take) {
                tools.extend(items);
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
    }

    /// Calls a tool. Protocol errors (unknown tool, …) are `Err`; tool errors are results with
    /// [`ToolResponse::is_error`].
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResponse, McpError> {
        let raw = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        Ok(ToolResponse { raw })
    }

    fn with_meta(&self, params: Value) -> Value {
        if self.version.era() != crate::protocol::ProtocolEra::Stateless {
            return params;
        }
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.entry("io.modelcontextprotocol/protocolVersion")
                .or_insert(self.version.as_str().into());
            meta.entry("io.modelcontextprotocol/clientCapabilities")
                .or_insert(self.capabilities.clone());
            meta.entry("io.modelcontextprotocol/clientInfo").or_insert(
                json!({"name": "mcp-runtime-test-client", "version": env!("CARGO_PKG_VERSION")}),
            );
        }
        Value::Object(params)
    }
}

fn default_server() -> Server {
    Server::builder()
        .name("test-server")
        .version("0.0.0")
        .build()
        .expect("valid registrations")
}
