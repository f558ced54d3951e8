//! The change bus: how the instances of a fleet hear of each other's changes.
//!
//! A change announced on one instance ([`Catalog::tools_changed`](super::Catalog::tools_changed),
//! a resource update, a task's new state) reaches that instance's clients at once, and is
//! [published](ChangeBus::publish) on the bus; every other instance
//! [delivers](BusInbound::deliver) it to its own `subscriptions/listen` streams and
//! session-era clients. The bus carries typed [`ChangeEvent`]s, never JSON-RPC: each instance
//! keeps its own streams, filters and acknowledgements.
//!
//! Events are refetch hints, so a bus may deliver at most once (Redis pub/sub does): when it
//! may have missed some (it reconnected), it calls [`BusInbound::resync`], and every local
//! stream hears that everything it watches changed; when it could not send some, it
//! publishes [`ChangeEvent::Missed`] once it can, which does the same on every other
//! instance.
//!
//! Without a bus (the default) changes stay in the process. [`LocalBus`] joins several
//! [`Catalog`](super::Catalog) handles of one process (tests, several servers in one
//! program); `mcp_redis::RedisChangeBus` joins the instances of a fleet.

use std::sync::{Arc, Mutex, Weak};

use serde::{Deserialize, Serialize};

use super::{Change, Hub};

/// One change, as it travels between instances.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeEvent {
    /// The list of tools changed.
    ToolsListChanged,
    /// The list of prompts changed.
    PromptsListChanged,
    /// The list of resources (or templates) changed.
    ResourcesListChanged,
    /// The resource at `uri` changed.
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// A 2026-07-28 task has a new state.
    TaskStatus {
        /// The task's id.
        id: String,
        /// Who may hear of it (the task's owner).
        owner: String,
        /// The task object, as `tasks/get` shows it.
        task: serde_json::Value,
    },
    /// The announcing instance could not publish some of its changes (its bus connection
    /// failed, or its queue overflowed): every stream should hear that everything it
    /// watches may have changed, as after a [`BusInbound::resync`].
    Missed,
}

impl ChangeEvent {
    /// The event that carries `change` to other instances (`None` for what stays local).
    pub(super) fn of(change: &Change) -> Option<ChangeEvent> {
        Some(match change {
            Change::Tools => ChangeEvent::ToolsListChanged,
            Change::Prompts => ChangeEvent::PromptsListChanged,
            Change::Resources => ChangeEvent::ResourcesListChanged,
            Change::Updated(uri) => ChangeEvent::ResourceUpdated {
                uri: uri.to_string(),
            },
            Change::Task { id, owner, task } => ChangeEvent::TaskStatus {
                id: id.to_string(),
                owner: owner.to_string(),
                task: serde_json::from_str(task).unwrap_or_default(),
            },
            Change::Everything => return None,
        })
    }
}

/// A [`ChangeEvent`] and the instance that announced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusMessage {
    /// The announcing [`Catalog`](super::Catalog) handle's id ([`Catalog::origin`](super::Catalog::origin)):
    /// it does not deliver its own messages a second time.
    pub origin: String,
    /// What changed.
    pub event: ChangeEvent,
}

/// Carries changes between the instances of a fleet. Attach one with
/// [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus) or
/// [`Catalog::attach_bus`](super::Catalog::attach_bus).
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends `message` to every instance. Called on the thread that announced the change,
    /// perhaps outside any async runtime: it must not block (queue it and return). A bus that
    /// cannot send drops the message (events are hints) and says so in its logs.
    fn publish(&self, message: BusMessage);

    /// Starts delivering the messages of other instances to `inbound`. Called once, when the
    /// bus is attached; the bus stops delivering once [`BusInbound::is_closed`].
    fn attach(&self, inbound: BusInbound);
}

/// [`Catalog::attach_bus`](super::Catalog::attach_bus) on a handle that has a bus already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusAlreadyAttached;

impl std::fmt::Display for BusAlreadyAttached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a change bus is attached to this Catalog handle already")
    }
}

impl std::error::Error for BusAlreadyAttached {}

/// Where a [`ChangeBus`] delivers: the local side of one [`Catalog`](super::Catalog) handle.
/// Cheap to clone; it does not keep the handle alive.
#[derive(Clone)]
pub struct BusInbound {
    pub(super) hub: Weak<Hub>,
}

impl std::fmt::Debug for BusInbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusInbound")
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl BusInbound {
    /// Passes a message from the bus to this instance's clients; the handle's own messages
    /// (the same origin) are dropped, as its clients heard of them when they were announced.
    pub fn deliver(&self, message: BusMessage) {
        let Some(hub) = self.hub.upgrade() else {
            return;
        };
        if message.origin == hub.origin {
            return;
        }
        let _ = hub.tx.send(Change::from(message.event));
    }

    /// Tells every local stream that everything it watches may have changed: the bus
    /// reconnected and may have lost messages meanwhile.
    pub fn resync(&self) {
        if let Some(hub) = self.hub.upgrade() {
            let _ = hub.tx.send(Change::Everything);
        }
    }

    /// Whether the [`Catalog`](super::Catalog) handle is gone: the bus may stop.
    pub fn is_closed(&self) -> bool {
        self.hub.strong_count() == 0
    }
}

impl From<ChangeEvent> for Change {
    fn from(event: ChangeEvent) -> Change {
        match event {
            ChangeEvent::ToolsListChanged => Change::Tools,
            ChangeEvent::PromptsListChanged => Change::Prompts,
            ChangeEvent::ResourcesListChanged => Change::Resources,
            ChangeEvent::ResourceUpdated { uri } => Change::Updated(uri.into()),
            ChangeEvent::TaskStatus { id, owner, task } => Change::Task {
                id: id.into(),
                owner: owner.into(),
                task: task.to_string().into(),
            },
            ChangeEvent::Missed => Change::Everything,
        }
    }
}

/// A bus inside one process: every [`Catalog`](super::Catalog) handle attached to it (or to a
/// clone) hears the others. For tests of fleet behaviour without Redis, and for programs that
/// serve several servers with separate handles.
#[derive(Clone, Default)]
pub struct LocalBus {
    inbounds: Arc<Mutex<Vec<BusInbound>>>,
}

impl std::fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBus").finish_non_exhaustive()
    }
}

impl LocalBus {
    /// A new bus with nothing attached.
    pub fn new() -> LocalBus {
        LocalBus::default()
    }

    /// Tells every attached handle's streams that everything may have changed, as a bus that
    /// reconnected does.
    pub fn resync(&self) {
        for inbound in self.inbounds.lock().expect("bus lock").iter() {
            inbound.resync();
        }
    }
}

impl ChangeBus for LocalBus {
    fn publish(&self, message: BusMessage) {
        let inbounds: Vec<BusInbound> = {
            let mut inbounds = self.inbounds.lock().expect("bus lock");
            inbounds.retain(|i| !i.is_closed());
            inbounds.clone()
        };
        for inbound in inbounds {
            inbound.deliver(message.clone());
        }
    }

    fn attach(&self, inbound: BusInbound) {
        self.inbounds.lock().expect("bus lock").push(inbound);
    }
}
