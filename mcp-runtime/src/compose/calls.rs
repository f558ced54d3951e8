//! The calls a proxy is serving, and how what its upstream asks or logs reaches the client of
//! the call it belongs to: the client handlers every upstream connection is built with.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::client::{ClientBuilder, ElicitRequest, ElicitResult};
use crate::protocol::McpError;
use crate::protocol::asks::{ElicitAction, Root, SampledMessage};
use crate::request::Context;

tokio::task_local! {
    /// The call a proxied request serves, while it waits for the upstream (a 2026-07-28
    /// upstream's asks are answered in this task).
    pub(super) static CALL: Context;
}

/// The calls a proxy is serving, most recent last: a session-era upstream's ask arrives on
/// no task of a call, and goes to the most recent call still waiting.
#[derive(Default)]
pub(super) struct Calls {
    live: Mutex<Vec<(u64, Context)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Calls {
    /// Registers `ctx` until the returned guard drops.
    pub(super) fn enter(self: &Arc<Self>, ctx: Context) -> CallGuard {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.live.lock().expect("calls lock").push((id, ctx));
        CallGuard {
            calls: self.clone(),
            id,
        }
    }

    /// The call an upstream ask belongs to: the one whose task asks, else the latest.
    fn current(&self) -> Option<Context> {
        CALL.try_with(Context::clone).ok().or_else(|| {
            let live = self.live.lock().expect("calls lock");
            live.last().map(|(_, ctx)| ctx.clone())
        })
    }

    /// Asks the client of the current call what the upstream asked.
    async fn ask(&self, method: &str, params: Value) -> Result<Value, McpError> {
        let ctx = self.current().ok_or_else(|| {
            McpError::internal(format!(
                "Cannot forward `{method}`: no call of this proxy's clients is waiting for the upstream"
            ))
        })?;
        ctx.ask_forwarded(method, params).await
    }
}

pub(super) struct CallGuard {
    calls: Arc<Calls>,
    id: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let mut live = self.calls.live.lock().expect("calls lock");
        live.retain(|(id, _)| *id != self.id);
    }
}

/// `builder` with handlers that pass the upstream's asks on to the current call's client.
pub(super) fn forwarding(builder: ClientBuilder, calls: &Arc<Calls>) -> ClientBuilder {
    let (elicit, sample, roots, logs) =
        (calls.clone(), calls.clone(), calls.clone(), calls.clone());
    builder
        .url_elicitation(true)
        .on_notification(move |n| {
            // The upstream's log messages go to the client of the latest call still waiting
            // (with its level filter); none waiting, they are dropped.
            if n.method != "notifications/message" {
                return;
            }
            let Some(ctx) = logs.current() else { return };
            let level = n
                .params
                .get("level")
                .and_then(Value::as_str)
                .unwrap_or("info");
            let Ok(level) = crate::protocol::LogLevel::parse(level) else {
                return;
            };
            let logger = n.params.get("logger").and_then(Value::as_str);
            ctx.log_as(level, logger, n.params.get("data").unwrap_or(&Value::Null));
        })
        .on_elicitation(move |req: ElicitRequest| {
            let calls = elicit.clone();
            async move {
                let answer = calls.ask("elicitation/create", req.raw).await?;
                let action = match answer.get("action").and_then(Value::as_str) {
                    Some("accept") => ElicitAction::Accept,
                    Some("decline") => ElicitAction::Decline,
                    _ => ElicitAction::Cancel,
                };
                Ok(ElicitResult {
                    action,
                    content: answer.get("content").cloned(),
                })
            }
        })
        .on_sampling(move |params: Value| {
            let calls = sample.clone();
            async move {
                let answer = calls.ask("sampling/createMessage", params).await?;
                serde_json::from_value::<SampledMessage>(answer).map_err(|e| {
                    McpError::internal(format!("The client's sampling answer is malformed: {e}"))
                })
            }
        })
        .on_roots(move || {
            let calls = roots.clone();
            async move {
                let answer = calls.ask("roots/list", json!({})).await?;
                serde_json::from_value::<Vec<Root>>(answer["roots"].clone()).map_err(|e| {
                    McpError::internal(format!("The client's roots are malformed: {e}"))
                })
            }
        })
}
