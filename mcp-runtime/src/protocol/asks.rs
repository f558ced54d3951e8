//! The values asks exchange with the client: elicitation answers, sampling requests and answers,
//! roots. The server asks with them (`ask/`, their public home) and the client answers with
//! them (`client/`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{Content, Role};

/// The user's answer to a form ([`Context::elicit`](crate::Context::elicit)).
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(v) => Some(v),
            _ => None,
        }
    }
}

/// The user's answer to a URL elicitation ([`Context::elicit_url`](crate::Context::elicit_url)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user agreed to open the URL (the interaction itself happens out of band).
    Accept,
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

#[derive(Deserialize)]
pub(crate) struct ElicitResult {
    pub(crate) action: ElicitAction,
    #[serde(default)]
    pub(crate) content: Option<Value>,
}

/// A `sampling/createMessage` request: messages for the client's model, and preferences.
///
/// ```
/// # use mcp_runtime::ask::Sampling;
/// let request = Sampling::prompt("Summarize: …", 200)
///     .system_prompt("You are terse.")
///     .temperature(0.2)
///     .model_hint("claude");
/// ```
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    messages: Vec<SamplingMessage>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Value>,
}

/// One message of a [`Sampling`] request or its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// A content block (or, from newer clients, a list of them).
    pub content: Value,
}

impl Sampling {
    /// A request with no messages yet, for at most `max_tokens` tokens.
    pub fn new(max_tokens: u32) -> Sampling {
        Sampling {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            metadata: None,
        }
    }

    /// A request of one user message.
    pub fn prompt(text: impl Into<String>, max_tokens: u32) -> Sampling {
        Sampling::new(max_tokens).user(text)
    }

    /// Adds a user message.
    pub fn user(self, text: impl Into<String>) -> Sampling {
        self.message(Role::User, Content::text(text))
    }

    /// Adds an assistant message.
    pub fn assistant(self, text: impl Into<String>) -> Sampling {
        self.message(Role::Assistant, Content::text(text))
    }

    /// Adds a message with any content block (text, image, audio).
    pub fn message(mut self, role: Role, content: Content) -> Sampling {
        let content = serde_json::to_value(content).expect("content serializes");
        self.messages.push(SamplingMessage { role, content });
        self
    }

    /// The system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Sampling {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, t: f64) -> Sampling {
        self.temperature = Some(t);
        self
    }

    /// Adds a stop sequence.
    pub fn stop_sequence(mut self, s: impl Into<String>) -> Sampling {
        self.stop_sequences.push(s.into());
        self
    }

    /// Adds a model name hint (the client maps it to a model it has).
    pub fn model_hint(mut self, name: impl Into<String>) -> Sampling {
        let prefs = self.model_preferences.get_or_insert_with(Map::new);
        let hints = prefs.entry("hints").or_insert_with(|| json!([]));
        if let Some(list) = hints.as_array_mut() {
            list.push(json!({ "name": name.into() }));
        }
        self
    }

    /// Sets a priority from 0 to 1: `"cost"`, `"speed"` or `"intelligence"`.
    pub fn priority(mut self, which: &str, value: f64) -> Sampling {
        let prefs = self.model_preferences.get_or_insert_with(Map::new);
        prefs.insert(format!("{which}Priority"), json!(value.clamp(0.0, 1.0)));
        self
    }

    /// Provider-specific metadata.
    pub fn metadata(mut self, metadata: Value) -> Sampling {
        self.metadata = Some(metadata);
        self
    }
}

/// The client model's answer to a [`Sampling`] request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SampledMessage {
    /// Who speaks (the assistant).
    pub role: Role,
    /// A content block, or a list of them.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SampledMessage {
    /// The text of the answer (text blocks joined), if it has any.
    pub fn text(&self) -> Option<String> {
        let blocks = match &self.content {
            Value::Array(blocks) => blocks.iter().collect(),
            block => vec![block],
        };
        let texts: Vec<&str> = blocks
            .into_iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    }
}

/// One of the client's roots ([`Context::roots`](crate::Context::roots)): a directory or file it works on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file://…`).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct ListRootsResult {
    pub(crate) roots: Vec<Root>,
}
