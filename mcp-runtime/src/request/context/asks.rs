//! `Context`'s ask methods: elicitation, sampling, roots, the keys of 2026-07-28 asks and the
//! values kept across rounds ([`Context::remember`]). Each makes an [`Ask`] (`request/ask.rs`);
//! see [`crate::ask`] for how asking works in each era.

use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::Context;
use crate::protocol::asks::{ElicitAction, Elicitation, Root, SampledMessage, Sampling};
use crate::protocol::{McpError, ProtocolVersion};
use crate::request::ask::{Ask, AskKind, ElicitationHandle, new_elicitation_id};
use crate::request::{Asker, RoundAsks};

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
