//! A request's cancellation flag, and its place among a connection's requests in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// One request's cancellation flag. It lives inside the request's shared state, so creating,
/// sharing and dropping it costs nothing beyond the `Arc` the `Context` already is (a
/// `tokio_util` `CancellationToken` takes a lock on every clone and drop, which showed in the
/// per-call profile, and its token trees are not needed here).
#[derive(Debug, Default)]
pub(crate) struct Cancellation {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    pub(crate) fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    pub(crate) async fn cancelled(&self) {
        loop {
            // A `Notified` receives `notify_waiters` from its creation on, so checking the flag
            // after creating it cannot miss a cancellation.
            let notified = self.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// How many requests of a connection hold a [`Slot`], and a way to wait until none does.
#[derive(Debug, Default)]
pub(crate) struct Gauge {
    count: AtomicUsize,
    /// Set while someone waits for zero: only then does the last slot's drop notify (the hot
    /// path pays one relaxed load).
    watched: AtomicBool,
    idle: Notify,
}

impl Gauge {
    pub(crate) fn get(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Takes a slot if fewer than `limit` are taken.
    pub(crate) fn try_take(self: &Arc<Self>, limit: usize) -> Option<Slot> {
        if self.count.load(Ordering::Relaxed) >= limit {
            return None;
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        Some(Slot(self.clone()))
    }

    /// Completes when no slot is taken.
    pub(crate) async fn idle(&self) {
        self.watched.store(true, Ordering::SeqCst);
        loop {
            let notified = self.idle.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One unit of a connection's `max_in_flight`, released when the request's last `Context`
/// clone is dropped (which a sync tool's blocking closure holds until it returns).
#[derive(Debug)]
pub(crate) struct Slot(Arc<Gauge>);

impl Drop for Slot {
    fn drop(&mut self) {
        let gauge = &self.0;
        if gauge.count.fetch_sub(1, Ordering::SeqCst) == 1 && gauge.watched.load(Ordering::SeqCst) {
            gauge.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_gauge_is_idle_when_its_last_slot_goes() {
        let gauge = Arc::new(Gauge::default());
        let a = gauge.try_take(2).unwrap();
        let b = gauge.try_take(2).unwrap();
        assert!(gauge.try_take(2).is_none(), "the limit holds");
        let waiter = tokio::spawn({
            let gauge = gauge.clone();
            async move { gauge.idle().await }
        });
        drop(a);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(b);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("woken when the last slot goes")
            .unwrap();
        assert_eq!(gauge.get(), 0);
    }
}
