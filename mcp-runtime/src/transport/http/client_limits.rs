//! Per-client limits for 2026-07-28 requests: they share one connection object and its limits
//! (`max_in_flight`, `max_listens`), so without these one client could take every slot. A
//! client is its verified caller (the principal a token verifier named), else its IP address.
//! A caller identity nobody verified (the raw `Authorization` header, or what
//! `request_state_caller` reads from headers) may only narrow that: the request counts against
//! its address *and* that identity, so made-up headers from one address never open new buckets.

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
    keys: Vec<ClientKey>,
}

impl ClientLimits {
    pub(crate) fn new(limit: usize) -> Arc<ClientLimits> {
        Arc::new(ClientLimits {
            counts: Mutex::default(),
            limit,
        })
    }

    /// A slot counted against every one of `keys`, or `None` when any of them already has
    /// `limit` requests in progress.
    pub(crate) fn take(self: &Arc<Self>, keys: Vec<ClientKey>) -> Option<ClientSlot> {
        let mut counts = self.counts.lock().expect("clients lock");
        if keys
            .iter()
            .any(|key| counts.get(key).is_some_and(|&n| n >= self.limit))
        {
            return None;
        }
        for key in &keys {
            *counts.entry(key.clone()).or_default() += 1;
        }
        Some(ClientSlot {
            clients: self.clone(),
            keys,
        })
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut counts = self.clients.counts.lock().expect("clients lock");
        for key in &self.keys {
            if let Some(count) = counts.get_mut(key) {
                *count -= 1;
                if *count == 0 {
                    counts.remove(key);
                }
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
        let a = || vec![ClientKey::Address("127.0.0.1".parse().unwrap())];
        let b = || vec![ClientKey::Caller([1; 32])];
        let first = clients.take(a()).unwrap();
        let _second = clients.take(a()).unwrap();
        assert!(clients.take(a()).is_none());
        assert!(
            clients.take(b()).is_some(),
            "another client is not affected"
        );
        // Counted against both: the address is full, so a new identity there is refused.
        let mut both = a();
        both.push(ClientKey::Caller([2; 32]));
        assert!(clients.take(both).is_none());
        drop(first);
        assert!(clients.take(a()).is_some());
        drop(_second);
        assert!(clients.counts.lock().unwrap().is_empty());
    }
}
