//! A session's record in the [`SessionStore`](super::SessionStore) and back: what a session
//! saves, what a record restores, and the gate that makes concurrent requests of one unknown
//! session restore it once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::session::Session;
use super::store::SessionRecord;

/// Restores under way, by session id.
pub(super) type Restoring = Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>;

/// One request's place in the restore of a session: requests for the same id take turns, and
/// the last to leave removes the entry, however it leaves (a request whose client went away
/// is dropped mid-restore). Every clone of an entry is taken and dropped under the map's lock,
/// so the count it reads is exact.
pub(super) struct RestoreGate<'a> {
    restoring: &'a Restoring,
    id: &'a str,
    gate: Option<Arc<tokio::sync::Mutex<()>>>,
}

impl<'a> RestoreGate<'a> {
    pub(super) fn enter(restoring: &'a Restoring, id: &'a str) -> RestoreGate<'a> {
        let gate = restoring
            .lock()
            .expect("restoring lock")
            .entry(id.to_owned())
            .or_default()
            .clone();
        RestoreGate {
            restoring,
            id,
            gate: Some(gate),
        }
    }

    pub(super) async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.gate.as_ref().expect("held until dropped").lock().await
    }
}

impl Drop for RestoreGate<'_> {
    fn drop(&mut self) {
        let mut restoring = self.restoring.lock().expect("restoring lock");
        drop(self.gate.take());
        if restoring
            .get(self.id)
            .is_some_and(|gate| Arc::strong_count(gate) == 1)
        {
            restoring.remove(self.id);
        }
    }
}

/// The record of a session whose handshake succeeded.
pub(super) fn record_of(session: &Session) -> Option<SessionRecord> {
    let client = session.conn.session()?;
    let mut subscriptions: Vec<String> = session
        .conn
        .subscriptions()
        .map(|s| {
            s.lock()
                .expect("subscriptions lock")
                .iter()
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    subscriptions.sort();
    Some(SessionRecord {
        v: 1,
        protocol_version: client.version.as_str().to_owned(),
        client_info: client.info.clone(),
        capabilities: client.capabilities.clone(),
        log_level: session.conn.log_level().as_str().to_owned(),
        subscriptions,
        owner: session.owner.map(|o| crate::id::hex(&o)),
    })
}

/// What a record restores.
pub(super) struct Restored {
    pub(super) client: crate::request::ClientInfo,
    pub(super) level: crate::protocol::LogLevel,
    pub(super) subscriptions: Vec<String>,
    pub(super) owner: Option<[u8; 32]>,
}

impl Restored {
    /// `None` for a record this version cannot serve (an unknown protocol version, a
    /// malformed owner): the session is then unknown, and its client initializes again.
    pub(super) fn of(record: &SessionRecord) -> Option<Restored> {
        let version = crate::protocol::ProtocolVersion::parse(&record.protocol_version)
            .filter(|v| v.era() == crate::protocol::ProtocolEra::Session)?;
        let level = crate::protocol::LogLevel::parse(&record.log_level).ok()?;
        let owner = match &record.owner {
            None => None,
            Some(hex) => Some(parse_digest(hex)?),
        };
        Some(Restored {
            client: crate::request::ClientInfo {
                version,
                info: record.client_info.clone(),
                capabilities: record.capabilities.clone(),
            },
            level,
            subscriptions: record.subscriptions.clone(),
            owner,
        })
    }
}

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::parse_digest;

    #[test]
    fn digests_round_trip_through_hex() {
        let digest = [0xa5u8; 32];
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(parse_digest(&hex), Some(digest));
        assert_eq!(parse_digest(&hex[1..]), None);
        assert_eq!(parse_digest(&"zz".repeat(32)), None);
    }
}
