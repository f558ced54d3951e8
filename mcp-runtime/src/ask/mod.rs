//! Asking the client: elicitation (a form or a URL for the user), sampling (a completion from
//! the client's model) and roots (the client's workspace folders), in both protocol eras.
//!
//! - Session era (2025-11-25 and earlier): each ask is a JSON-RPC request to the client on the
//!   live channel (stdout on stdio; the SSE stream of the tool call's POST on HTTP), answered by
//!   the client's response, with a time limit.
//! - 2026-07-28: servers send no requests. An ask with no answer yet stops the handler, and the
//!   call returns `InputRequiredResult`; the client retries with the answers, the handler runs
//!   again from the start, and this time each ask returns its answer (those of earlier rounds
//!   come back from the sealed `requestState`). **Code before an ask may therefore run more than
//!   once**: keep side effects after the last ask, and ask the same questions in the same order
//!   (an answer is only used for the question it answered). A value that must not change from
//!   one run to the next (a random id, a timestamp) goes through [`Context::remember`].
//!
//! An ask the client did not declare a capability for fails with
//! [`ErrorCode::MISSING_CLIENT_CAPABILITY`](crate::protocol::ErrorCode::MISSING_CLIENT_CAPABILITY)
//! (-32021) before anything is sent: handle it (fall back to a default), or return it from the
//! tool (`?`) and the client gets that JSON-RPC error.

pub(crate) mod form;
mod session;

use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::protocol::{ErrorCode, McpError, ProtocolVersion};
use crate::request::{Answer, Asker, Context, RoundAsks, TaskAsks};

pub use crate::protocol::asks::{
    ElicitAction, Elicitation, Root, SampledMessage, Sampling, SamplingMessage,
};
use crate::protocol::asks::{ElicitResult, ListRootsResult};
pub use form::form_schema;
// The 0.1 home of the requestState guard, now in `request_state` (a trait cannot be a
// deprecated alias, so the old paths stay as hidden re-exports).
#[doc(hidden)]
pub use crate::request_state::{GuardError, GuardFuture, MemoryStateGuard, RequestStateGuard};
pub use session::{ElicitationHandle, new_elicitation_id};

/// What is asked, for capability checks and keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AskKind {
    Form,
    Url,
    Sample,
    Roots,
}

impl AskKind {
    fn method(self) -> &'static str {
        match self {
            AskKind::Form | AskKind::Url => "elicitation/create",
            AskKind::Sample => "sampling/createMessage",
            AskKind::Roots => "roots/list",
        }
    }

    fn key_prefix(self) -> &'static str {
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

impl Context {
    /// Names the next ask's key in a 2026-07-28 `InputRequiredResult` (by default asks are
    /// numbered per kind: `elicit-0`, `elicit-1`, `sample-0`, …). Use distinct keys within one request; the
    /// session era ignores them.
    ///
    /// ```standalone_crate
    /// # use mcp_runtime::prelude::*;
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name { name: String }
    ///
    /// /// Greets the user.
    /// #[tool]
    /// async fn hello(ctx: Context) -> Result<String, McpError> {
    ///     let answer = ctx.ask_as("user_name").elicit::<Name>("What is your name?").await?;
    ///     Ok(answer.accepted().map_or("Hello!".into(), |n| format!("Hello, {}!", n.name)))
    /// }
    /// # fn main() {}
    /// ```
    pub fn ask_as(&self, key: impl Into<String>) -> Ask<'_> {
        Ask {
            ctx: self,
            key: Some(key.into()),
            upfront: false,
        }
    }

    /// Like [`ask_as`](Self::ask_as), for a question a [task](crate::task) tool asks before its
    /// work starts: in protocol 2026-07-28 the call answers it as a multi-round-trip request
    /// (`InputRequiredResult`, the tool running again with the answer) and only then becomes a
    /// task, so the client answers it in the call itself rather than through `tasks/update`. Ask
    /// these first, before the tool awaits anything else; elsewhere (the session era, a call
    /// that is not a task, an ask after the work started) it is an ordinary ask.
    ///
    /// ```standalone_crate
    /// # use mcp_runtime::prelude::*;
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name { name: String }
    ///
    /// /// Builds a long report for someone.
    /// #[tool(task = "required")]
    /// async fn report(ctx: Context) -> Result<String, McpError> {
    ///     let who = ctx.ask_upfront("user_name").elicit::<Name>("For whom?").await?;
    ///     let name = who.accepted().map_or("you".into(), |n| n.name);
    ///     tokio::time::sleep(std::time::Duration::from_millis(10)).await; // the long part
    ///     Ok(format!("A report for {name}"))
    /// }
    /// # fn main() {}
    /// ```
    pub fn ask_upfront(&self, key: impl Into<String>) -> Ask<'_> {
        Ask {
            ctx: self,
            key: Some(key.into()),
            upfront: true,
        }
    }

    /// The next ask of `kind`. Its 2026-07-28 key is taken now, when the ask is created, not
    /// when it is first polled: asks made together (`join!`, which may poll in any order) get
    /// the same keys on every round.
    fn ask_next(&self, kind: AskKind) -> Ask<'_> {
        let key = match self.asker() {
            Asker::Round(round) => Some(round.next_key(kind.key_prefix())),
            Asker::Task(task) => Some(task.next_key(kind.key_prefix())),
            _ => None,
        };
        Ask {
            ctx: self,
            key,
            upfront: false,
        }
    }

    /// Asks the user to fill in a form shaped like `T` (`elicitation/create`, form mode) and
    /// waits for the answer: [`Elicitation::Accept`] with the typed value, `Decline` or
    /// `Cancel`.
    ///
    /// `T` must be a struct of primitive fields: strings (with `#[schemars(email)]`, `url`,
    /// or a date format), numbers, booleans, fieldless enums (single choice; variant doc
    /// comments or `#[schemars(title = …)]` become the choices' titles) and `Vec`s of such
    /// enums (multiple choice); `Option` fields are optional, `#[serde(default)]` gives
    /// defaults. Another shape is an error naming the field: when the server starts for a `T`
    /// named with a turbofish (`ctx.elicit::<Order>(…)`, which the tool's macro sees), else
    /// when the ask is made (-32603). A 2025-06-18 client gets the form lowered (titled choices
    /// as `enumNames`, no defaults; a multiple choice is an error). Never ask for passwords,
    /// API keys or other secrets in a form: use [`elicit_url`](Self::elicit_url).
    ///
    /// See the [module docs](crate::ask) for how this works in each protocol era.
    pub fn elicit<T>(
        &self,
        message: impl Into<String>,
    ) -> impl Future<Output = Result<Elicitation<T>, McpError>> + Send + '_
    where
        T: DeserializeOwned + JsonSchema + 'static,
    {
        self.ask_next(AskKind::Form).elicit(message.into())
    }

    /// Like [`elicit`](Self::elicit), with a hand-written `requestedSchema` (checked against
    /// the same rules; an invalid one is -32603 before anything is sent). The answer is the
    /// form's content as submitted.
    pub fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        schema: Value,
    ) -> impl Future<Output = Result<Elicitation<Map<String, Value>>, McpError>> + Send + '_ {
        self.ask_next(AskKind::Form)
            .elicit_with_schema(message.into(), schema)
    }

    /// Asks the user to open `url` (`elicitation/create`, URL mode): for what must not pass
    /// through the client, such as credentials or a payment. `Accept` means the user agreed to
    /// open it; the interaction completes out of band. The URL must not carry credentials or
    /// personal data, and the server must check that the user who completes it is the one who
    /// was asked.
    pub fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> impl Future<Output = Result<ElicitAction, McpError>> + Send + '_ {
        self.ask_next(AskKind::Url).elicit_url_with_id(
            new_elicitation_id(),
            message.into(),
            url.into(),
        )
    }

    /// Like [`elicit_url`](Self::elicit_url), naming the elicitation: make the id with
    /// [`new_elicitation_id`], put it in your URL so the page knows which elicitation (and
    /// which user) it serves, and call [`complete_elicitation`](Self::complete_elicitation)
    /// when the page is done. Session-era clients receive the id (`elicitationId`); 2026-07-28
    /// has none (its URL alone identifies the interaction).
    pub fn elicit_url_with_id(
        &self,
        id: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> impl Future<Output = Result<ElicitAction, McpError>> + Send + '_ {
        self.ask_next(AskKind::Url)
            .elicit_url_with_id(id.into(), message.into(), url.into())
    }

    /// A value that stays the same on every round of a 2026-07-28 request: `make()`'s the first
    /// time, the same value (sealed in `requestState`) when the handler runs again with the
    /// client's answers. Use it for what code before an ask must not compute anew: a random
    /// id, a timestamp, a reservation. Elsewhere it is simply `make()`. `key` names the value
    /// within the request. A value that does not come back as `T` is made anew.
    ///
    /// ```standalone_crate
    /// # use mcp_runtime::prelude::*;
    /// /// Connects the user's account on a page of ours.
    /// #[tool]
    /// async fn connect(ctx: Context) -> Result<String, McpError> {
    ///     let id: String = ctx.remember("connect", mcp_runtime::ask::new_elicitation_id);
    ///     let url = format!("https://example.com/connect?elicitation={id}");
    ///     let action = ctx.elicit_url_with_id(id.clone(), "Connect your account", url).await?;
    ///     Ok(format!("{action:?}"))
    /// }
    /// # fn main() {}
    /// ```
    pub fn remember<T>(&self, key: &str, make: impl FnOnce() -> T) -> T
    where
        T: Serialize + DeserializeOwned,
    {
        let round: &dyn RoundAsks = match self.asker() {
            Asker::Round(round) => &**round,
            // A task's work runs once; only its upfront phase may run again.
            Asker::Task(task) => match task.upfront() {
                Some(round) => round,
                None => return make(),
            },
            _ => return make(),
        };
        if let Some(kept) = round.recall(key)
            && let Ok(value) = serde_json::from_value(kept)
        {
            return value;
        }
        let value = make();
        // A value JSON cannot hold (a NaN, a u128 beyond u64) would come back different.
        let kept = serde_json::to_value(&value)
            .unwrap_or_else(|e| panic!("ctx.remember({key:?}): the value has no JSON form: {e}"));
        round.keep(key, kept);
        value
    }

    /// Tells a session-era client, while this request runs, that the out-of-band interaction
    /// of URL elicitation `id` is finished (`notifications/elicitation/complete`). Returns
    /// whether it was sent: 2026-07-28 has no such notification. To report it later, when the
    /// page is done, keep an [`elicitation_handle`](Self::elicitation_handle) (a `Context`
    /// kept alive would hold the request's place among those in flight).
    pub fn complete_elicitation(&self, id: &str) -> bool {
        let Some(handle) = self.elicitation_handle(id) else {
            return false;
        };
        if self.live_sink().is_some() && self.send_live(handle.notification()) {
            return true;
        }
        handle.complete()
    }

    /// A handle that reports URL elicitation `id` complete at any later time, from anywhere
    /// (the web handler of your page); `None` where there is no such notification
    /// (2026-07-28, or a client before 2025-11-25).
    pub fn elicitation_handle(&self, id: impl Into<String>) -> Option<ElicitationHandle> {
        let Asker::Session(peer) = self.asker() else {
            return None;
        };
        (self.protocol_version() >= ProtocolVersion::V2025_11_25).then(|| ElicitationHandle {
            peer: peer.clone(),
            id: id.into(),
        })
    }

    /// Asks the client's model for a completion (`sampling/createMessage`). The client
    /// usually shows the request to the user first, and may change or refuse it.
    pub fn sample(
        &self,
        request: Sampling,
    ) -> impl Future<Output = Result<SampledMessage, McpError>> + Send + '_ {
        self.ask_next(AskKind::Sample).sample(request)
    }

    /// The client's roots (`roots/list`): the directories or files the user works on.
    pub fn roots(&self) -> impl Future<Output = Result<Vec<Root>, McpError>> + Send + '_ {
        self.ask_next(AskKind::Roots).roots()
    }
}

/// One ask with a chosen key ([`Context::ask_as`]); the methods are those of [`Context`].
pub struct Ask<'a> {
    ctx: &'a Context,
    key: Option<String>,
    /// Made with [`Context::ask_upfront`].
    upfront: bool,
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
        let digest = crate::request_state::seal::ask_digest(kind.method(), &params);
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
        task: &std::sync::Arc<dyn TaskAsks>,
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
    task: Option<std::sync::Arc<dyn TaskAsks>>,
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
