//! 2026-07-28 `subscriptions/listen`: a request whose stream carries the notifications asked
//! for, until the [`Listen`] is dropped.

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::Client;
use super::error::ClientError;
use super::handlers::ServerNotification;

/// The notifications a [`Listen`] holds for its reader; past it the newest are dropped.
const LISTEN_QUEUE: usize = 1024;

impl Client {
    /// 2026-07-28 `subscriptions/listen`: a stream of the notifications asked for in
    /// `notifications` (e.g. `{"toolsListChanged": true, "resourceSubscriptions": [uri]}`).
    /// The first item is the server's `notifications/subscriptions/acknowledged`. Dropping
    /// the [`Listen`] ends the subscription.
    pub async fn listen(&self, notifications: Value) -> Result<Listen, ClientError> {
        if !self.core.is_stateless() {
            return Err(ClientError::protocol(
                "subscriptions/listen is 2026-07-28; in the session era use notifications() \
                 and subscribe()",
            ));
        }
        let mut events = self.core.events.subscribe();
        let core = self.core.clone();
        let (ack_tx, ack_rx) = tokio::sync::oneshot::channel();
        // Bounded as notifications() is: a listener that falls behind misses the newest.
        let (tx, rx) = tokio::sync::mpsc::channel(LISTEN_QUEUE);
        // The listen request stays open; its notifications name it: their subscription id is
        // its request id.
        let id = self.core.alloc_id();
        let mut params = json!({ "notifications": notifications });
        params["_meta"] = Value::Object(self.core.stateless_meta());
        let request = tokio::spawn(async move {
            let call = core.request_raw_id(id, "subscriptions/listen", params, None);
            tokio::pin!(call);
            let mut ack_tx = Some(ack_tx);
            loop {
                tokio::select! {
                    done = &mut call => {
                        if let Some(ack) = ack_tx.take() {
                            let _ = ack.send(done.map(|_| ()));
                        }
                        return;
                    }
                    event = events.recv() => {
                        let n = match event {
                            Ok(n) => n,
                            Err(broadcast::error::RecvError::Lagged(_)) => continue,
                            Err(_) => return,
                        };
                        let sub = n.params.pointer("/_meta/io.modelcontextprotocol~1subscriptionId");
                        if sub != Some(&json!(id)) {
                            continue;
                        }
                        if n.method == "notifications/subscriptions/acknowledged"
                            && let Some(ack) = ack_tx.take()
                        {
                            let _ = ack.send(Ok(()));
                        }
                        match tx.try_send(n) {
                            Ok(()) => {}
                            Err(mpsc::error::TrySendError::Full(n)) => {
                                tracing::debug!(method = %n.method, "a listener fell behind: dropped");
                            }
                            Err(mpsc::error::TrySendError::Closed(_)) => return,
                        }
                    }
                }
            }
        });
        // Until the acknowledgement, dropping this future (or waiting too long) ends the
        // request; afterwards the Listen does.
        let pending = AbortOnDrop(Some(request.abort_handle()));
        let limit = self.core.limits.request_timeout;
        match tokio::time::timeout(limit, ack_rx).await {
            Ok(Ok(Ok(()))) => Ok(Listen {
                rx,
                request: pending.disarm(),
            }),
            Ok(Ok(Err(e))) => Err(e),
            Ok(Err(_)) => Err(ClientError::Closed),
            Err(_) => Err(ClientError::Timeout(limit)),
        }
    }
}

/// Aborts a task when dropped, unless disarmed.
struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl AbortOnDrop {
    fn disarm(mut self) -> tokio::task::AbortHandle {
        self.0.take().expect("armed")
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// A `subscriptions/listen` stream ([`Client::listen`]). It holds up to 1024 notifications
/// its reader has not taken yet; past that the newest are dropped.
pub struct Listen {
    rx: mpsc::Receiver<ServerNotification>,
    request: tokio::task::AbortHandle,
}

impl Listen {
    /// The next notification; `None` once the subscription ended.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        self.rx.recv().await
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        self.request.abort();
    }
}
