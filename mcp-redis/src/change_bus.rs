//! The change bus over Redis pub/sub: one channel per fleet, `mcp:{fleet}:changes`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_runtime::catalog::{BusInbound, BusMessage, ChangeBus, ChangeEvent};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::Redis;

/// Messages waiting to be published; past this, new ones are dropped (with a warning): a
/// Redis that does not keep up must not make the announcing code block or the queue grow.
const QUEUE: usize = 4096;
/// How often the subscription's connection is pinged: a connection that died silently (no
/// reset) is noticed within this plus [`PING_TIMEOUT`].
const PING_EVERY: Duration = Duration::from_secs(5);
const PING_TIMEOUT: Duration = Duration::from_secs(2);
/// Tries per message while Redis was reachable (none more once it is known down).
const PUBLISH_ATTEMPTS: u32 = 3;
/// Reconnection backoff, doubling from the first to the last.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(2));

/// A [`ChangeBus`] on Redis pub/sub: what one instance announces, every instance subscribed to
/// the fleet's channel hears. Give it to
/// [`ServerBuilder::change_bus`](mcp_runtime::ServerBuilder::change_bus).
///
/// Delivery is at most once, as pub/sub is: a message published while an instance's
/// subscription is down is lost to it. So when the subscription comes back (Redis restarted,
/// the connection dropped), the bus [resyncs](BusInbound::resync) its instance: every listen
/// stream and session client hears that everything it watches changed, and refetches.
/// Publishing never blocks: messages queue (up to 4,096) for a task that sends them. A message
/// that could not be sent (Redis unreachable, the queue full) is dropped, and the next message
/// that goes through is followed by [`ChangeEvent::Missed`], which resyncs every other
/// instance the same way.
///
/// Its two tasks run on the runtime it was created on, until it is dropped.
pub struct RedisChangeBus {
    queue: mpsc::Sender<BusMessage>,
    /// Set when a message was dropped because the queue was full.
    overflowed: Arc<AtomicBool>,
    inbound: Arc<OnceLock<BusInbound>>,
    tasks: [JoinHandle<()>; 2],
}

impl std::fmt::Debug for RedisChangeBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisChangeBus").finish_non_exhaustive()
    }
}

impl RedisChangeBus {
    /// The bus of `redis`'s fleet. Must be called inside a Tokio runtime: it starts its
    /// subscription at once (a change published before it is subscribed is not heard).
    pub fn new(redis: &Redis) -> RedisChangeBus {
        let channel = redis.key("changes");
        let (queue, rx) = mpsc::channel(QUEUE);
        let overflowed = Arc::new(AtomicBool::new(false));
        let inbound = Arc::new(OnceLock::new());
        let publisher = tokio::spawn(publish(
            redis.clone(),
            channel.clone(),
            rx,
            overflowed.clone(),
        ));
        let subscriber = tokio::spawn(subscribe(redis.client.clone(), channel, inbound.clone()));
        RedisChangeBus {
            queue,
            overflowed,
            inbound,
            tasks: [publisher, subscriber],
        }
    }
}

impl Drop for RedisChangeBus {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl ChangeBus for RedisChangeBus {
    fn publish(&self, message: BusMessage) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.queue.try_send(message)
            && !self.overflowed.swap(true, Ordering::AcqRel)
        {
            tracing::warn!(
                "change bus: {QUEUE} messages waiting for Redis; dropping changes (the other instances will be told to refetch everything)"
            );
        }
    }

    fn attach(&self, inbound: BusInbound) {
        if self.inbound.set(inbound).is_err() {
            tracing::warn!("change bus: attached twice; the first handle keeps it");
        }
    }
}

/// Sends queued messages until the bus is dropped. A failed send is logged once per outage.
/// Once a message goes through after some were dropped (here, or by a full queue), a
/// [`ChangeEvent::Missed`] follows it.
async fn publish(
    redis: Redis,
    channel: String,
    mut rx: mpsc::Receiver<BusMessage>,
    overflowed: Arc<AtomicBool>,
) {
    let mut conn = redis.connection();
    let mut failing = false;
    let mut dropped = false;
    while let Some(message) = rx.recv().await {
        let payload = match serde_json::to_string(&message) {
            Ok(payload) => payload,
            Err(e) => {
                tracing::warn!(error = %e, "change bus: a message did not serialize");
                continue;
            }
        };
        // The connection notices that Redis went away on the command that fails, then
        // reconnects: a message is tried again a few times (over about a second) so that the
        // first change after an outage is not lost.
        let mut attempt = 0;
        let sent = loop {
            let sent = publish_payload(&mut conn, &channel, &payload).await;
            attempt += 1;
            if sent.is_ok() || failing || attempt == PUBLISH_ATTEMPTS {
                break sent;
            }
            tokio::time::sleep(BACKOFF.0 * (1 << attempt)).await;
        };
        match sent {
            Ok(_) => {
                if failing {
                    failing = false;
                    tracing::info!("change bus: publishing to Redis again");
                }
                dropped |= overflowed.swap(false, Ordering::AcqRel);
                if dropped {
                    let missed = BusMessage {
                        origin: message.origin,
                        event: ChangeEvent::Missed,
                    };
                    let payload = serde_json::to_string(&missed).unwrap_or_default();
                    dropped = publish_payload(&mut conn, &channel, &payload)
                        .await
                        .is_err();
                }
            }
            Err(e) => {
                dropped = true;
                if !failing {
                    failing = true;
                    tracing::warn!(error = %e, "change bus: cannot publish to Redis; changes stay on this instance meanwhile");
                }
            }
        }
    }
}

/// One `PUBLISH` of `payload` on `channel`: how many subscribers received it.
async fn publish_payload(
    conn: &mut redis::aio::ConnectionManager,
    channel: &str,
    payload: &str,
) -> redis::RedisResult<i64> {
    redis::cmd("PUBLISH")
        .arg(channel)
        .arg(payload)
        .query_async(conn)
        .await
}

/// Keeps a subscription to `channel`, reconnecting with backoff; delivers what it hears, and
/// resyncs after every reconnection.
async fn subscribe(client: redis::Client, channel: String, inbound: Arc<OnceLock<BusInbound>>) {
    let mut backoff = BACKOFF.0;
    let mut subscribed_before = false;
    loop {
        if inbound.get().is_some_and(BusInbound::is_closed) {
            return;
        }
        let life = listen(
            &client,
            &channel,
            &inbound,
            &mut subscribed_before,
            &mut backoff,
        );
        if let Err(e) = life.await {
            tracing::warn!(error = %e, "change bus: the Redis subscription failed; retrying");
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF.1);
    }
}

/// One subscription's life: subscribe, resync if it follows an earlier one, deliver until the
/// connection ends or stops answering pings.
async fn listen(
    client: &redis::Client,
    channel: &str,
    inbound: &OnceLock<BusInbound>,
    subscribed_before: &mut bool,
    backoff: &mut Duration,
) -> redis::RedisResult<()> {
    let (mut sink, mut stream) = client.get_async_pubsub().await?.split();
    sink.subscribe(channel).await?;
    *backoff = BACKOFF.0;
    if std::mem::replace(subscribed_before, true) {
        tracing::info!("change bus: subscribed again; telling every stream to refetch");
        if let Some(inbound) = inbound.get() {
            inbound.resync();
        }
    }
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    loop {
        tokio::select! {
            message = stream.next() => {
                let Some(message) = message else {
                    tracing::warn!("change bus: the Redis subscription closed");
                    return Ok(());
                };
                let Some(inbound) = inbound.get() else { continue };
                if inbound.is_closed() {
                    return Ok(());
                }
                match serde_json::from_slice::<BusMessage>(message.get_payload_bytes()) {
                    Ok(message) => inbound.deliver(message),
                    // Another version's event kind, or something else on the channel.
                    Err(e) => tracing::debug!(error = %e, "change bus: ignoring a message"),
                }
            }
            _ = ping.tick() => {
                match tokio::time::timeout(PING_TIMEOUT, sink.ping::<redis::Value>()).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return Err(e),
                    Err(_) => {
                        tracing::warn!("change bus: Redis did not answer a ping; reconnecting");
                        return Ok(());
                    }
                }
            }
        }
    }
}
