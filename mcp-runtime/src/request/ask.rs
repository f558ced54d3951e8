//! One ask to the client ([`Ask`], made by `Context`'s ask methods in `context/asks.rs`): the
//! capability check, then a JSON-RPC request answered by id (session era), an answer from the
//! request's round or a stop to ask for it (2026-07-28), or a question the task waits on (a
//! 2026-07-28 task); and the `notifications/elicitation/complete` a URL elicitation may be
//! followed by ([`ElicitationHandle`]). The public docs are those of `crate::ask`.

use std::sync::{Arc, Weak};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac_sha256::Hash;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::{Answer, Asker, Context, Peer, RoundAsks, Sink, TaskAsks};
use crate::protocol::asks::{
    ElicitAction, ElicitResult, Elicitation, ListRootsResult, Root, SampledMessage, Sampling,
};
use crate::protocol::form;
use crate::protocol::jsonrpc::{encode_notification, encode_request};
use crate::protocol::{ErrorCode, McpError, ProtocolVersion, RequestId};

/// What is asked, for capability checks and keys.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum AskKind {
    Form,
    Url,
    Sample,
    Roots,
}

impl AskKind {
    pub(super) fn method(self) -> &'static str {
        match self {
            AskKind::Form | AskKind::Url => "elicitation/create",
            AskKind::Sample => "sampling/createMessage",
            AskKind::Roots => "roots/list",
        }
    }

    pub(super) fn key_prefix(self) -> &'static str {
        match self {
            AskKind::Form | AskKind::Url => "elicit",
            AskKind::Sample => "sample",
            AskKind::Roots => "roots",
        }
    }

    /// Whether the client can take this ask: it declared the capability, at a protocol
    /// version that has it.
    fn check(self, version: ProtocolVersion, caps: &Value) -> Result<(), McpError> {
        let elicitation = caps.get("elicitation").and_then(Value::as_object);
        let (ok, since, required) = match self {
            // `elicitation: {}` means form mode, for clients that predate URL mode.
            AskKind::Form => (
                elicitation.is_some_and(|e| e.is_empty() || e.contains_key("form")),
                ProtocolVersion::V2025_06_18,
                json!({ "elicitation": { "form": {} } }),
            ),
            AskKind::Url => (
                elicitation.is_some_and(|e| e.contains_key("url")),
                ProtocolVersion::V2025_11_25,
                json!({ "elicitation": { "url": {} } }),
            ),
            AskKind::Sample => (
                caps.get("sampling").is_some_and(Value::is_object),
                ProtocolVersion::V2024_11_05,
                json!({ "sampling": {} }),
            ),
            AskKind::Roots => (
                caps.get("roots").is_some_and(Value::is_object),
                ProtocolVersion::V2024_11_05,
                json!({ "roots": {} }),
            ),
        };
        if ok && version >= since {
            return Ok(());
        }
        let what = required
            .as_object()
            .and_then(|o| o.keys().next())
            .cloned()
            .unwrap_or_default();
        let why = if ok {
            format!("protocol {version} has no `{}`", self.method())
        } else {
            format!("the client did not declare the `{what}` capability this needs")
        };
        Err(McpError::new(
            ErrorCode::MISSING_CLIENT_CAPABILITY,
            format!("Cannot send `{}`: {why}", self.method()),
        )
        .with_data(json!({ "requiredCapabilities": required })))
    }
}

/// One ask with a chosen key ([`Context::ask_as`]); the methods are those of [`Context`].
pub struct Ask<'a> {
    pub(super) ctx: &'a Context,
    pub(super) key: Option<String>,
    /// Made with [`Context::ask_upfront`].
    pub(super) upfront: bool,
}

impl super::Context {
    /// Asks the client what a server elsewhere asked (`elicitation/create`,
    /// `sampling/createMessage`, `roots/list`: a proxy passes its upstream's asks on), with
    /// the capability checks and era rules of any ask; the client's answer as it gave it.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) async fn ask_forwarded(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        let kind = match method {
            "elicitation/create" if params.get("mode").and_then(Value::as_str) == Some("url") => {
                AskKind::Url
            }
            "elicitation/create" => AskKind::Form,
            "sampling/createMessage" => AskKind::Sample,
            "roots/list" => AskKind::Roots,
            other => return Err(McpError::method_not_found(other)),
        };
        let ask = Ask {
            ctx: self,
            key: None,
            upfront: false,
        };
        ask.ask::<Value>(kind, params).await
    }
}

impl Ask<'_> {
    /// [`Context::elicit`] under this key.
    pub async fn elicit<T>(self, message: impl Into<String>) -> Result<Elicitation<T>, McpError>
    where
        T: DeserializeOwned + JsonSchema + 'static,
    {
        let schema = form::form_schema_of::<T>().map_err(McpError::internal)?;
        let answer = self.elicit_form(message.into(), schema).await?;
        Ok(match answer {
            Elicitation::Accept(content) => {
                let value = serde_json::from_value(Value::Object(content)).map_err(|e| {
                    McpError::invalid_params(format!(
                        "The client's answer does not fit the form: {e}"
                    ))
                })?;
                Elicitation::Accept(value)
            }
            Elicitation::Decline => Elicitation::Decline,
            Elicitation::Cancel => Elicitation::Cancel,
        })
    }

    /// [`Context::elicit_with_schema`] under this key.
    pub async fn elicit_with_schema(
        self,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<Elicitation<Map<String, Value>>, McpError> {
        let schema = form::form_schema(&schema)
            .map_err(|e| McpError::internal(format!("Invalid elicitation form: {e}")))?;
        self.elicit_form(message.into(), schema).await
    }

    async fn elicit_form(
        &self,
        message: String,
        schema: Value,
    ) -> Result<Elicitation<Map<String, Value>>, McpError> {
        // A client that cannot take forms hears so first (not that the form is too new).
        AskKind::Form.check(self.ctx.protocol_version(), self.ctx.client_capabilities())?;
        let params = if self.ctx.protocol_version() < ProtocolVersion::V2025_11_25 {
            // 2025-06-18 forms have no `mode` (it came with URL elicitation), no defaults, no
            // titled or multiple choices: lower the form, or say why it cannot be.
            let schema = form::for_2025_06_18(&schema).map_err(|e| {
                McpError::internal(format!(
                    "This form needs protocol 2025-11-25 (the client speaks {}): {e}",
                    self.ctx.protocol_version()
                ))
            })?;
            json!({ "message": message, "requestedSchema": schema })
        } else {
            json!({ "mode": "form", "message": message, "requestedSchema": schema })
        };
        let result: ElicitResult = self.ask(AskKind::Form, params).await?;
        Ok(match result.action {
            ElicitAction::Accept => match result.content {
                Some(Value::Object(content)) => Elicitation::Accept(content),
                None | Some(Value::Null) => Elicitation::Accept(Map::new()),
                Some(_) => {
                    return Err(McpError::invalid_params(
                        "The client's elicitation answer has non-object content",
                    ));
                }
            },
            ElicitAction::Decline => Elicitation::Decline,
            ElicitAction::Cancel => Elicitation::Cancel,
        })
    }

    /// [`Context::elicit_url`] under this key.
    pub async fn elicit_url(
        self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<ElicitAction, McpError> {
        self.elicit_url_with_id(new_elicitation_id(), message, url)
            .await
    }

    /// [`Context::elicit_url_with_id`] under this key.
    pub async fn elicit_url_with_id(
        self,
        id: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<ElicitAction, McpError> {
        let mut params = json!({ "mode": "url", "message": message.into(), "url": url.into() });
        if self.ctx.era() == crate::protocol::ProtocolEra::Session {
            // 2025-11-25 correlates URL elicitations by id (2026-07-28 removed it).
            params["elicitationId"] = Value::String(id.into());
        }
        let result: ElicitResult = self.ask(AskKind::Url, params).await?;
        Ok(result.action)
    }

    /// [`Context::sample`] under this key.
    pub async fn sample(self, request: Sampling) -> Result<SampledMessage, McpError> {
        let params = serde_json::to_value(request).expect("a sampling request serializes");
        self.ask(AskKind::Sample, params).await
    }

    /// [`Context::roots`] under this key.
    pub async fn roots(self) -> Result<Vec<Root>, McpError> {
        let result: ListRootsResult = self.ask(AskKind::Roots, json!({})).await?;
        Ok(result.roots)
    }

    /// Sends one ask and parses its answer.
    async fn ask<R: DeserializeOwned>(&self, kind: AskKind, params: Value) -> Result<R, McpError> {
        kind.check(self.ctx.protocol_version(), self.ctx.client_capabilities())?;
        let parse = |value: Value| -> Result<R, McpError> {
            serde_json::from_value(value).map_err(|e| {
                McpError::invalid_params(format!(
                    "The client's answer to `{}` is malformed: {e}",
                    kind.method()
                ))
            })
        };
        match self.ctx.asker() {
            Asker::Unavailable(why) => Err(McpError::internal(format!(
                "Cannot send `{}`: {why}",
                kind.method()
            ))),
            Asker::Session(peer) => {
                let peer = peer
                    .upgrade()
                    .ok_or_else(|| McpError::internal("The client connection is gone"))?;
                let mut params = params;
                if let (Some(task), Value::Object(params)) = (self.ctx.related_task(), &mut params)
                {
                    // Messages a 2025-11-25 task sends name it.
                    params.insert(
                        "_meta".into(),
                        json!({ "io.modelcontextprotocol/related-task": { "taskId": task } }),
                    );
                }
                parse(self.request_client(&*peer, kind.method(), params).await?)
            }
            Asker::Round(round) => self.ask_round(&**round, kind, params).await.and_then(parse),
            Asker::Task(task) => {
                if self.upfront
                    && let Some(round) = task.upfront()
                {
                    return self.ask_round(round, kind, params).await.and_then(parse);
                }
                self.ask_task(task, kind, params).await.and_then(parse)
            }
        }
    }

    /// A JSON-RPC request to the client, answered by its response (session era).
    async fn request_client(
        &self,
        peer: &dyn Peer,
        method: &'static str,
        params: Value,
    ) -> Result<Value, McpError> {
        if self.ctx.is_finished() || self.ctx.is_cancelled() {
            return Err(McpError::internal(format!(
                "Cannot send `{method}`: the request is finished or cancelled"
            )));
        }
        // The request's own stream; without one (JSON-only HTTP responses), the session's
        // (its GET stream), which the spec also allows for requests to the client.
        let sink = self
            .ctx
            .live_sink()
            .cloned()
            .or_else(|| peer.standalone())
            .ok_or_else(|| {
                McpError::internal(format!(
                    "Cannot send `{method}`: no stream to the client (JSON-only HTTP responses and no GET stream open)"
                ))
            })?;
        let (id, answer) = peer.start_request();
        // Unregisters the request however this ends; tells the client when it is abandoned.
        let guard = Outgoing {
            peer,
            id: id.clone(),
            sink: &sink,
        };
        if !sink.send(encode_request(&id, method, &params)) {
            return Err(McpError::internal(format!(
                "Cannot send `{method}`: the stream to the client is closed or full"
            )));
        }
        let limit = peer.request_timeout();
        let result = tokio::select! {
            answer = answer => answer.unwrap_or_else(|_| Err(McpError::internal("The client connection is gone"))),
            _ = self.ctx.cancelled() => Err(McpError::internal("The request was cancelled")),
            _ = tokio::time::sleep(limit) => Err(McpError::internal(format!(
                "The client did not answer `{method}` within {} s", limit.as_secs()
            ))),
        };
        drop(guard);
        result
    }

    /// A 2026-07-28 ask: its answer from this round, or the request stops to ask for it.
    async fn ask_round(
        &self,
        round: &dyn RoundAsks,
        kind: AskKind,
        params: Value,
    ) -> Result<Value, McpError> {
        // A spawned task asking after the request ended would wait for ever.
        if self.ctx.is_finished() || self.ctx.is_cancelled() {
            return Err(McpError::internal(format!(
                "Cannot send `{}`: the request is finished or cancelled",
                kind.method()
            )));
        }
        let key = match &self.key {
            Some(key) => key.clone(),
            // Only an `Ask` made outside `Context`'s methods has none.
            None => round.next_key(kind.key_prefix()),
        };
        let digest = ask_digest(kind.method(), &params);
        match round.answer(&key, &digest) {
            // A malformed answer is the client's error, not a question to ask again.
            Answer::Given(answer) => return Ok(answer),
            // Asking again would never end: the handler is not deterministic.
            Answer::Changed => {
                return Err(McpError::internal(format!(
                    "The question `{key}` changed between rounds of this request: code \
                     before an ask runs again on every round and must ask the same; keep \
                     values that vary (ids, times) with ctx.remember"
                )));
            }
            Answer::Missing => {}
        }
        round.need(key, kind.method(), params, digest);
        // The dispatcher now answers `InputRequiredResult` and ends the request; an
        // ask awaited elsewhere (a spawned task) then fails rather than wait forever.
        self.ctx.cancelled().await;
        Err(McpError::internal(
            "The request ended to ask the client for input; it runs again with the answer",
        ))
    }

    /// An ask inside a 2026-07-28 task: the task waits in `input_required` until the client
    /// answers through `tasks/update`.
    async fn ask_task(
        &self,
        task: &Arc<dyn TaskAsks>,
        kind: AskKind,
        params: Value,
    ) -> Result<Value, McpError> {
        if self.ctx.is_cancelled() {
            return Err(McpError::internal(format!(
                "Cannot send `{}`: the task is cancelled",
                kind.method()
            )));
        }
        let key = match &self.key {
            Some(key) => key.clone(),
            None => task.next_key(kind.key_prefix()),
        };
        let request = json!({ "method": kind.method(), "params": params });
        let answer = task.ask(key.clone(), request).await?;
        // Takes the question back if this ask is dropped or cancelled unanswered.
        let mut pending = TaskQuestion {
            task: Some(task.clone()),
            key,
        };
        let result = tokio::select! {
            answer = answer => answer.map_err(|_| McpError::internal("The task ended before the client answered")),
            _ = self.ctx.cancelled() => Err(McpError::internal("The task was cancelled")),
        };
        if result.is_ok() {
            pending.task = None;
        }
        result
    }
}

/// A question of a task still waiting for its answer; dropped unanswered, it is withdrawn.
struct TaskQuestion {
    task: Option<Arc<dyn TaskAsks>>,
    key: String,
}

impl Drop for TaskQuestion {
    fn drop(&mut self) {
        if let Some(task) = self.task.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let key = std::mem::take(&mut self.key);
            runtime.spawn(async move { task.withdraw(&key).await });
        }
    }
}

/// Reports a URL elicitation complete to the session that was asked
/// ([`Context::elicitation_handle`](crate::Context::elicitation_handle)). Holds the session weakly.
#[derive(Clone, Debug)]
pub struct ElicitationHandle {
    pub(super) peer: Weak<dyn Peer>,
    pub(super) id: String,
}

impl ElicitationHandle {
    pub(super) fn notification(&self) -> Vec<u8> {
        encode_notification(
            "notifications/elicitation/complete",
            json!({ "elicitationId": &self.id }),
        )
    }

    /// Sends `notifications/elicitation/complete` on the session's own channel (stdout, or its
    /// GET stream). Returns whether it could: not when the session ended or has no stream open.
    pub fn complete(&self) -> bool {
        let Some(peer) = self.peer.upgrade() else {
            return false;
        };
        peer.standalone()
            .is_some_and(|sink| sink.send(self.notification()))
    }
}

/// A new URL elicitation id: 128 bits from the operating system's CSPRNG, as hex (hard to guess,
/// so it can name the elicitation in a URL).
pub fn new_elicitation_id() -> String {
    crate::id::random_id()
}

/// A request to the client awaiting its response.
struct Outgoing<'a> {
    peer: &'a dyn Peer,
    id: RequestId,
    sink: &'a Sink,
}

impl Drop for Outgoing<'_> {
    fn drop(&mut self) {
        if self.peer.forget_request(&self.id) {
            // Still unanswered (timed out, cancelled, abandoned): the client may stop asking.
            self.sink.send(encode_notification(
                "notifications/cancelled",
                json!({ "requestId": self.id, "reason": "The server no longer needs the answer" }),
            ));
        }
    }
}

/// A digest of what an ask asked (its method and params): an answer is used only for the
/// question it answered.
pub(crate) fn ask_digest(method: &str, params: &Value) -> String {
    let mut hasher = Hash::new();
    hasher.update(method.as_bytes());
    hasher.update([0u8]);
    hasher.update(crate::id::canonical_json(params));
    URL_SAFE_NO_PAD.encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ask_digest;

    #[test]
    fn ask_digests_ignore_key_order_but_not_content() {
        let a = ask_digest(
            "elicitation/create",
            &json!({"message": "m", "requestedSchema": {"a": 1, "b": 2}}),
        );
        let b = ask_digest(
            "elicitation/create",
            &json!({"requestedSchema": {"b": 2, "a": 1}, "message": "m"}),
        );
        let c = ask_digest(
            "elicitation/create",
            &json!({"message": "other", "requestedSchema": {"a": 1, "b": 2}}),
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(
            a,
            ask_digest(
                "sampling/createMessage",
                &json!({"message": "m", "requestedSchema": {"a": 1, "b": 2}})
            )
        );
    }
}
