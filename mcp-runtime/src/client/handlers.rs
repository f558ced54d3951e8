//! How a client answers what the server asks: elicitation, sampling and roots. One handler
//! serves both eras: a session-era server sends a request (`elicitation/create`, …), a
//! 2026-07-28 server returns an `InputRequiredResult` naming the same requests, and the
//! client answers either with the handler's result.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::protocol::McpError;
use crate::protocol::asks::ElicitAction;
use crate::protocol::asks::{Root, SampledMessage};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

type ElicitFn = dyn Fn(ElicitRequest) -> BoxFuture<Result<ElicitResult, McpError>> + Send + Sync;
type SampleFn = dyn Fn(Value) -> BoxFuture<Result<SampledMessage, McpError>> + Send + Sync;
type RootsFn = dyn Fn() -> BoxFuture<Result<Vec<Root>, McpError>> + Send + Sync;
pub(crate) type NotifyFn = dyn Fn(&ServerNotification) + Send + Sync;

/// A notification from the server: progress, a log message, a list or resource change, …
#[derive(Clone, Debug, PartialEq)]
pub struct ServerNotification {
    /// The method, e.g. `notifications/progress` or `notifications/message`.
    pub method: String,
    /// Its params (`Value::Null` when it had none).
    pub params: Value,
}

/// What the server asks the user through the client (`elicitation/create`).
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitRequest {
    /// What to ask.
    pub message: String,
    /// The form's JSON Schema (form mode): a flat object of primitive fields.
    pub requested_schema: Option<Value>,
    /// The URL to open (URL mode, 2025-11-25).
    pub url: Option<String>,
    /// The whole params object as the server sent it.
    pub raw: Value,
}

impl ElicitRequest {
    fn from_params(params: Value) -> Self {
        let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
        ElicitRequest {
            message: text("message").unwrap_or_default(),
            requested_schema: params.get("requestedSchema").cloned(),
            url: text("url"),
            raw: params,
        }
    }

    /// Whether this is a URL-mode request (the user is sent to a page).
    pub fn is_url(&self) -> bool {
        self.raw.get("mode").and_then(Value::as_str) == Some("url")
    }

    /// The `default` of every field of the form that has one (SEP-1034): the content to
    /// accept with when the user changes nothing.
    pub fn defaults(&self) -> Map<String, Value> {
        self.requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .filter_map(|(k, p)| p.get("default").map(|d| (k.clone(), d.clone())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The user's answer to an [`ElicitRequest`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ElicitResult {
    /// Accepted, declined or dismissed.
    pub action: ElicitAction,
    /// The submitted form (accept only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

impl ElicitResult {
    /// The user submitted `content` (an object of the form's fields).
    pub fn accept(content: impl Serialize) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(serde_json::to_value(content).unwrap_or(Value::Null)),
        }
    }

    /// The user accepted a URL request (there is no content).
    pub fn accept_url() -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: None,
        }
    }

    /// The user declined.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
        }
    }
}

/// The handlers a client was built with.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) elicit: Option<Arc<ElicitFn>>,
    pub(crate) url_elicitation: bool,
    pub(crate) sample: Option<Arc<SampleFn>>,
    pub(crate) roots: Option<Arc<RootsFn>>,
    pub(crate) notify: Vec<Arc<NotifyFn>>,
}

impl Handlers {
    pub(crate) fn set_elicit<F, Fut>(&mut self, f: F)
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |r| Box::pin(f(r))));
    }

    pub(crate) fn set_sample<F, Fut>(&mut self, f: F)
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<SampledMessage, McpError>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |r| Box::pin(f(r))));
    }

    pub(crate) fn set_roots<F, Fut>(&mut self, f: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, McpError>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(f())));
    }

    /// The client capabilities these handlers make true. `session`: the session era, where
    /// roots can announce changes.
    pub(crate) fn capabilities(&self, session: bool) -> Value {
        let mut caps = Map::new();
        if self.elicit.is_some() {
            let mut modes = Map::new();
            modes.insert("form".into(), json!({}));
            if self.url_elicitation {
                modes.insert("url".into(), json!({}));
            }
            caps.insert("elicitation".into(), Value::Object(modes));
        }
        if self.sample.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            caps.insert(
                "roots".into(),
                if session {
                    json!({"listChanged": true})
                } else {
                    json!({})
                },
            );
        }
        Value::Object(caps)
    }

    /// Answers one server request (or one `inputRequests` entry) by its method.
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, McpError> {
        let serialize = |v: Result<Value, serde_json::Error>| {
            v.map_err(|e| McpError::internal(format!("could not encode the answer: {e}")))
        };
        match method {
            "ping" => Ok(json!({})),
            "elicitation/create" => match &self.elicit {
                Some(f) => {
                    let result = f(ElicitRequest::from_params(params)).await?;
                    serialize(serde_json::to_value(result))
                }
                None => Err(McpError::method_not_found(method)),
            },
            "sampling/createMessage" => match &self.sample {
                Some(f) => {
                    let result = f(params).await?;
                    serialize(serde_json::to_value(result))
                }
                None => Err(McpError::method_not_found(method)),
            },
            "roots/list" => match &self.roots {
                Some(f) => {
                    let roots = f().await?;
                    Ok(json!({ "roots": roots }))
                }
                None => Err(McpError::method_not_found(method)),
            },
            other => Err(McpError::method_not_found(other)),
        }
    }

    pub(crate) fn notify(&self, n: &ServerNotification) {
        for f in &self.notify {
            f(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_form() {
        let r = ElicitRequest::from_params(json!({
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John"},
                "age": {"type": "integer"}
            }}
        }));
        assert_eq!(Value::Object(r.defaults()), json!({"name": "John"}));
        assert!(!r.is_url());
    }

    #[tokio::test]
    async fn a_missing_handler_is_method_not_found() {
        let h = Handlers::default();
        let e = h
            .answer("sampling/createMessage", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.code, crate::protocol::ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(h.answer("ping", Value::Null).await.unwrap(), json!({}));
        assert_eq!(h.capabilities(true), json!({}));
    }
}
