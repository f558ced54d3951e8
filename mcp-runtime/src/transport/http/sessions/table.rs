//! The sessions of one endpoint by id, and the CLOCK order that picks which to end when they
//! reach their limit.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::session::Session;

/// The sessions by id, and the order the eviction clock visits them in.
#[derive(Default)]
pub(super) struct Table {
    pub(super) by_id: HashMap<String, Arc<Session>>,
    /// Ids in the order they were created (or last given a second chance); ids of sessions
    /// already gone are skipped when met, and swept out when they outnumber the live ones.
    clock: VecDeque<String>,
}

impl Table {
    /// The session to end to make room, by the CLOCK approximation of least-recently-used:
    /// from the oldest, a session used since the clock last passed gets a second chance (moves
    /// to the back, its mark cleared), a busy one is skipped, and the first that is neither is
    /// the one. At most two turns of the clock (amortized O(1) per eviction, where scanning
    /// every session cost ~0.7 ms per handshake at 10,000 under this lock: benches/soak).
    pub(super) fn victim(&mut self) -> Option<Arc<Session>> {
        let mut visits = 2 * self.clock.len();
        while visits > 0 {
            visits -= 1;
            let id = self.clock.pop_front()?;
            let Some(session) = self.by_id.get(&id) else {
                continue; // gone already
            };
            if session.busy() || session.take_used() {
                self.clock.push_back(id);
                continue;
            }
            return self.by_id.remove(&id);
        }
        None
    }

    pub(super) fn insert(&mut self, session: Arc<Session>) {
        // Ids of ended sessions stay in the clock until met: sweep them before they pile up.
        if self.clock.len() > 2 * self.by_id.len() + 64 {
            let live = &self.by_id;
            self.clock.retain(|id| live.contains_key(id));
        }
        self.clock.push_back(session.id.clone());
        self.by_id.insert(session.id.clone(), session);
    }
}
