//! One round of a 2026-07-28 multi-round-trip request: the answers the client has given so far,
//! and the questions the handler asked that have none yet.
//!
//! The handler runs again on every round. Its asks are numbered per kind in the order they are
//! made (`elicit-0`, `elicit-1`, `sample-0`, …): an ask with an answer to the same question gets
//! it at once; one without is recorded and does not complete. As soon as the handler waits on
//! such an ask, the dispatcher stops it and answers `InputRequiredResult` with every ask recorded
//! by then (asks started together, e.g. with `join!`, before any of them awaits anything else,
//! go out together) and a sealed `requestState` holding the answers used so far.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Map, Value};

use super::seal::{Binding, Claim, Sealed};
use crate::protocol::McpError;
use crate::request::{Answer, Blocked, RoundAsks};

pub(crate) struct Round {
    /// Answers from the client, by key, with the digest of the question each answers when
    /// known: restored from `requestState` (which wins), then this round's `inputResponses`.
    answers: HashMap<String, (Value, Option<String>)>,
    /// Whether the request carried either (a retry, which is never cached).
    pub(crate) retry: bool,
    /// The single use of the state this round opened, to record before the handler runs
    /// (only with a single-use guard).
    pub(crate) claim: Option<Claim>,
    /// The request's method and params, digested only when a state is sealed or opened.
    method: String,
    params: Option<String>,
    /// Who sent the request (on HTTP, its `Authorization` header by default).
    principal: Option<Vec<u8>>,
    binding: std::sync::OnceLock<Result<Binding, McpError>>,
    /// The next key number of each kind of ask.
    next: Mutex<std::collections::HashMap<&'static str, usize>>,
    state: Mutex<RoundState>,
    blocked: Blocked,
}

#[derive(Default)]
struct RoundState {
    /// Answers the handler used this round (kept for the next one): `{"q", "v"}` by key.
    used: Map<String, Value>,
    /// Values remembered across rounds (restored, then added to).
    memo: Map<String, Value>,
    /// Asks with no answer yet, in order, with their digests.
    needed: Vec<(String, InputRequest, String)>,
}

/// One entry of `inputRequests`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct InputRequest {
    pub(crate) method: &'static str,
    pub(crate) params: Value,
}

/// The body of an `InputRequiredResult` (the era adapter adds `resultType`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputRequired {
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub(crate) input_requests: Map<String, Value>,
    pub(crate) request_state: String,
}

impl Round {
    pub(crate) fn new(method: &str, params: Option<String>, principal: Option<Vec<u8>>) -> Round {
        Round {
            answers: HashMap::new(),
            retry: false,
            claim: None,
            method: method.to_owned(),
            params,
            principal,
            binding: std::sync::OnceLock::new(),
            next: Mutex::default(),
            state: Mutex::default(),
            blocked: Blocked::default(),
        }
    }

    /// The round with the client's answers.
    pub(crate) fn with_answers(
        mut self,
        answers: HashMap<String, (Value, Option<String>)>,
        memo: Map<String, Value>,
        retry: bool,
    ) -> Round {
        self.answers = answers;
        self.state.get_mut().expect("round lock").memo = memo;
        self.retry = retry;
        self
    }

    /// What a state for this request is bound to (-32602 for params that do not read as a
    /// JSON value: see [`Binding::of`]).
    pub(crate) fn binding(&self) -> Result<&Binding, McpError> {
        self.binding
            .get_or_init(|| {
                Binding::of(
                    &self.method,
                    self.params.as_deref(),
                    self.principal.as_deref(),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the handler has asked something this round has no answer for.
    pub(crate) fn is_blocked(&self) -> bool {
        self.blocked.is_raised()
    }

    /// The `InputRequiredResult` body: the asks without answers and the sealed answers so far.
    pub(crate) fn input_required(
        &self,
        sealer: &super::seal::Sealer,
    ) -> Result<InputRequired, McpError> {
        let binding = self.binding()?;
        let mut state = self.state.lock().expect("round lock");
        let mut input_requests = Map::new();
        let mut pending = Map::new();
        for (key, request, digest) in std::mem::take(&mut state.needed) {
            let value = serde_json::to_value(request).expect("an input request serializes");
            input_requests.insert(key.clone(), value);
            pending.insert(key, Value::String(digest));
        }
        let sealed = Sealed {
            answers: std::mem::take(&mut state.used),
            pending,
            memo: std::mem::take(&mut state.memo),
        };
        Ok(InputRequired {
            input_requests,
            request_state: sealer.seal(binding, sealed),
        })
    }
}

impl RoundAsks for Round {
    fn next_key(&self, prefix: &'static str) -> String {
        let mut next = self.next.lock().expect("round lock");
        let n = next.entry(prefix).or_insert(0);
        let key = format!("{prefix}-{n}");
        *n += 1;
        key
    }

    fn recall(&self, key: &str) -> Option<Value> {
        self.state
            .lock()
            .expect("round lock")
            .memo
            .get(key)
            .cloned()
    }

    fn keep(&self, key: &str, value: Value) {
        self.state
            .lock()
            .expect("round lock")
            .memo
            .insert(key.to_owned(), value);
    }

    /// An answer given is kept for later rounds.
    fn answer(&self, key: &str, digest: &str) -> Answer {
        let Some((answer, asked)) = self.answers.get(key) else {
            return Answer::Missing;
        };
        if asked.as_deref().is_some_and(|asked| asked != digest) {
            return Answer::Changed;
        }
        let kept = serde_json::json!({ "q": digest, "v": answer });
        self.state
            .lock()
            .expect("round lock")
            .used
            .insert(key.to_owned(), kept);
        Answer::Given(answer.clone())
    }

    /// Raising `blocked` wakes the dispatcher, which answers `InputRequiredResult`.
    fn need(&self, key: String, method: &'static str, params: Value, digest: String) {
        self.state.lock().expect("round lock").needed.push((
            key,
            InputRequest { method, params },
            digest,
        ));
        self.blocked.raise();
    }

    fn blocked(&self) -> &Blocked {
        &self.blocked
    }
}
