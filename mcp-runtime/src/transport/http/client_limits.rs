//! Per-client limits for 2026-07-28 requests: they share one connection object and its limits
//! (`max_in_flight`, `max_listens`), so without these one client could take every slot. A
//! client is its caller identity (the digest sessions are bound to) or, without one, its IP
//! address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Who a stateless request counts against.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    Caller([u8; 32]),
    Address(IpAddr),
}

/// Requests in progress per client.
pub(crate) struct ClientLimits {
    counts: Mutex<HashMap<ClientKey, usize>>,
    limit: usize,
}

/// One request in progress for its client, until dropped (with its response body).
pub(crate) struct ClientSlot {
    clients: Arc<ClientLimits>,
    key: ClientKey,
}

impl ClientLimits {
    pub(crate) fn new(limit: usize) -> Arc<ClientLimits> {
        Arc::new(ClientLimits {
            counts: Mutex::default(),
            limit,
        })
    }

    /// A slot for `key`, or `None` when the client already has `limit` requests in progress.
    pub(crate) fn take(self: &Arc<Self>, key: ClientKey) -> Option<ClientSlot> {
        let mut counts = self.counts.lock().expect("clients lock");
        let count = counts.entry(key.clone()).or_default();
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            clients: self.clone(),
            key,
        })
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut counts = self.clients.counts.lock().expect("clients lock");
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_has_its_own_limit_and_entries_go_when_empty() {
        let clients = ClientLimits::new(2);
        let a = || ClientKey::Address("127.0.0.1".parse().unwrap());
        let b = || ClientKey::Caller([1; 32]);
        let first = clients.take(a()).unwrap();
        let _second = clients.take(a()).unwrap();
        assert!(clients.take(a()).is_none());
        assert!(
            clients.take(b()).is_some(),
            "another client is not affected"
        );
        drop(first);
        assert!(clients.take(a()).is_some());
        drop(_second);
        assert!(clients.counts.lock().unwrap().is_empty());
    }
}
