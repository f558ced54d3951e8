//! [`Changes`]: announce from anywhere in the program that a resource changed or that the lists
//! of tools, resources or prompts did, and enable or disable registered items at run time.
//!
//! Clients hear of it the way their protocol era says: session-era clients get
//! `notifications/resources/updated` for the URIs they subscribed to (`resources/subscribe`)
//! and the `list_changed` notifications, on stdout or their HTTP session's GET stream;
//! 2026-07-28 clients get what they asked for on their `subscriptions/listen` streams.
//!
//! Behind a load balancer, attach a [`ChangeBus`] (for instance `mcp_redis::RedisChangeBus`)
//! so that a change announced on one instance reaches the clients of every instance.
//!
//! ```standalone_crate
//! use mcp_runtime::prelude::*;
//!
//! /// The current temperature.
//! #[resource("sensor://temperature")]
//! fn temperature() -> String {
//!     "21.5".into()
//! }
//!
//! fn main() {
//!     // A background task tells subscribed clients when the reading changes.
//!     std::thread::spawn(|| loop {
//!         std::thread::sleep(std::time::Duration::from_secs(60));
//!         mcp_runtime::changes().resource_updated("sensor://temperature");
//!     });
//!     # if false {
//!     mcp_runtime::run!();
//!     # }
//! }
//! ```

mod bus;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use tokio::sync::broadcast;

use crate::request::{Context, Opaque};

pub use bus::{BusAlreadyAttached, BusInbound, BusMessage, ChangeBus, ChangeEvent, LocalBus};

/// One announced change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Tools,
    Prompts,
    Resources,
    Updated(Arc<str>),
    /// A 2026-07-28 task's new state (`notifications/tasks` on listen streams that watch it):
    /// its id, its owner, and the task object as JSON text.
    Task {
        id: Arc<str>,
        owner: Arc<str>,
        task: Arc<str>,
    },
    /// Anything may have changed: the change bus reconnected and may have missed changes.
    /// Every stream hears of everything it watches.
    Everything,
}

/// What a name given to [`Changes::disable`] refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A tool, by name.
    Tool,
    /// A resource or resource template, by name or by URI (template).
    Resource,
    /// A prompt, by name.
    Prompt,
}

/// A handle that announces changes to every client of the servers using it. Cheap to clone,
/// usable from any thread.
///
/// [`run!`](crate::run) serves with the process-wide handle, [`changes()`](crate::changes());
/// a server built with [`Server::builder`](crate::Server::builder) has its own unless given one
/// with [`ServerBuilder::changes`](crate::ServerBuilder::changes).
#[derive(Clone)]
pub struct Changes {
    hub: Arc<Hub>,
}

struct Hub {
    tx: broadcast::Sender<Change>,
    /// This handle's id on the change bus (its own messages are not delivered twice).
    origin: String,
    bus: OnceLock<Arc<dyn ChangeBus>>,
    disabled: RwLock<HashSet<(Kind, String)>>,
    /// Bumped on every enable/disable: list cursors from before are refused.
    generation: AtomicU64,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes").finish_non_exhaustive()
    }
}

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

/// The process-wide [`Changes`] handle, the one [`run!`](crate::run) serves with.
pub fn changes() -> Changes {
    static GLOBAL: OnceLock<Changes> = OnceLock::new();
    GLOBAL.get_or_init(Changes::new).clone()
}

impl Changes {
    /// This handle as a request carries it to its handler ([`Context::changes`] reads it back).
    pub(crate) fn handle(&self) -> Opaque {
        self.hub.clone()
    }
}

impl Context {
    /// The handle that announces changes (a resource updated, a list changed) and enables or
    /// disables tools, resources and prompts at run time.
    pub fn changes(&self) -> Changes {
        // Only `Changes::handle` makes what a request carries here.
        let hub = self.changes_handle().clone().downcast::<Hub>();
        Changes {
            hub: hub.expect("a request carries its server's change handle"),
        }
    }
}

impl Changes {
    /// A new handle, not shared with any other.
    pub fn new() -> Changes {
        Changes {
            hub: Arc::new(Hub {
                // Subscribers that fall this far behind skip ahead (list changes are idempotent).
                tx: broadcast::channel(1024).0,
                origin: crate::id::random_id(),
                bus: OnceLock::new(),
                disabled: RwLock::default(),
                generation: AtomicU64::new(0),
            }),
        }
    }

    fn send(&self, change: Change) {
        if let Some(bus) = self.hub.bus.get()
            && let Some(event) = ChangeEvent::of(&change)
        {
            bus.publish(BusMessage {
                origin: self.hub.origin.clone(),
                event,
            });
        }
        // No receiver (no client listening) is not an error.
        let _ = self.hub.tx.send(change);
    }

    /// Carries this handle's changes to the other instances of a fleet, and theirs to this
    /// handle's clients, from now on. A handle takes one bus: a second is refused.
    ///
    /// What [`disable`](Self::disable) and [`enable`](Self::enable) hide stays per instance
    /// (each instance of a fleet should make the same calls); the list change they announce
    /// travels.
    pub fn attach_bus(&self, bus: impl ChangeBus) -> Result<(), BusAlreadyAttached> {
        self.attach_shared_bus(Arc::new(bus))
    }

    pub(crate) fn attach_shared_bus(
        &self,
        bus: Arc<dyn ChangeBus>,
    ) -> Result<(), BusAlreadyAttached> {
        let mut ours = false;
        self.hub.bus.get_or_init(|| {
            ours = true;
            bus.clone()
        });
        if !ours {
            return Err(BusAlreadyAttached);
        }
        bus.attach(BusInbound {
            hub: Arc::downgrade(&self.hub),
        });
        Ok(())
    }

    /// Whether a [`ChangeBus`] is attached.
    pub fn has_bus(&self) -> bool {
        self.hub.bus.get().is_some()
    }

    /// This handle's id on the change bus ([`BusMessage::origin`]): random per handle.
    pub fn origin(&self) -> &str {
        &self.hub.origin
    }

    /// Announces that the resource at `uri` changed (`notifications/resources/updated`, to the
    /// clients subscribed to it or to a resource it is part of).
    pub fn resource_updated(&self, uri: impl Into<String>) {
        self.send(Change::Updated(uri.into().into()));
    }

    /// Announces that the list of tools changed.
    pub fn tools_changed(&self) {
        self.send(Change::Tools);
    }

    /// Announces that the list of resources (or templates) changed.
    pub fn resources_changed(&self) {
        self.send(Change::Resources);
    }

    /// Announces a 2026-07-28 task's new state to the listen streams of its owner watching it.
    pub(crate) fn task_changed(&self, id: &str, owner: &str, task: &serde_json::Value) {
        self.send(Change::Task {
            id: id.into(),
            owner: owner.into(),
            task: task.to_string().into(),
        });
    }

    /// Announces that the list of prompts changed.
    pub fn prompts_changed(&self) {
        self.send(Change::Prompts);
    }

    /// Hides a registered item: it leaves its list, and calling, reading or getting it is an
    /// unknown-item error, until [`enable`](Self::enable)d. Returns whether it was enabled;
    /// if it was, the list change is announced.
    pub fn disable(&self, kind: Kind, name: impl Into<String>) -> bool {
        let changed = self
            .hub
            .disabled
            .write()
            .expect("disabled lock")
            .insert((kind, name.into()));
        self.after_toggle(kind, changed)
    }

    /// Serves a disabled item again. Returns whether it was disabled; if it was, the list change
    /// is announced.
    pub fn enable(&self, kind: Kind, name: &str) -> bool {
        let changed = self
            .hub
            .disabled
            .write()
            .expect("disabled lock")
            .remove(&(kind, name.to_owned()));
        self.after_toggle(kind, changed)
    }

    fn after_toggle(&self, kind: Kind, changed: bool) -> bool {
        if changed {
            self.hub.generation.fetch_add(1, Ordering::Relaxed);
            self.send(match kind {
                Kind::Tool => Change::Tools,
                Kind::Resource => Change::Resources,
                Kind::Prompt => Change::Prompts,
            });
        }
        changed
    }

    /// Whether an item named by any of `keys` (its name, its URI) is enabled.
    pub(crate) fn is_enabled(&self, kind: Kind, keys: &[&str]) -> bool {
        if self.hub.generation.load(Ordering::Relaxed) == 0 {
            return true; // nothing was ever disabled: no lock on the hot path
        }
        let disabled = self.hub.disabled.read().expect("disabled lock");
        !keys
            .iter()
            .any(|k| disabled.contains(&(kind, (*k).to_owned())))
    }

    /// Changes to the enabled set so far (part of list cursors).
    pub(crate) fn generation(&self) -> u64 {
        self.hub.generation.load(Ordering::Relaxed)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.hub.tx.subscribe()
    }
}

/// Whether an update of `updated` concerns a subscription to `subscribed`: the same URI, a
/// fragment of it, or a sub-resource of it (`file:///dir/` covers `file:///dir/a.txt`).
///
/// Only a URI with a path covers the URIs below it: `file://`, `memo://board` or `a` cover
/// themselves (and their fragments) only; otherwise a subscription to a bare scheme would
/// cover every URI of that scheme.
pub(crate) fn covers(subscribed: &str, updated: &str) -> bool {
    updated == subscribed
        || updated.strip_prefix(subscribed).is_some_and(|rest| {
            rest.starts_with('#')
                || (has_path(subscribed) && (subscribed.ends_with('/') || rest.starts_with('/')))
        })
}

/// Whether `uri` has a hierarchical path: a `/` after `scheme://authority` (or after
/// `scheme:` when there is no authority).
fn has_path(uri: &str) -> bool {
    let after_scheme = match uri.split_once("://") {
        Some((_, rest)) => rest,
        None => uri.split_once(':').map_or("", |(_, rest)| rest),
    };
    after_scheme.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_resources_are_covered() {
        assert!(covers("file:///a", "file:///a"));
        assert!(covers("file:///a", "file:///a/b"));
        assert!(covers("file:///a/", "file:///a/b"));
        assert!(!covers("file:///a", "file:///ab"));
        assert!(covers("file:///", "file:///etc/passwd"));
        assert!(covers("memo://board", "memo://board#top"));
    }

    /// A bare scheme (or scheme and authority) is not a directory of everything below it.
    #[test]
    fn uris_without_a_path_cover_only_themselves() {
        assert!(!covers("file://", "file:///etc/passwd"));
        assert!(!covers("file:", "file:/etc/passwd"));
        assert!(!covers("memo://board", "memo://board/secret"));
        assert!(!covers("a", "a/b"));
        assert!(!covers("", "x"));
        assert!(covers("file://", "file://"));
        assert!(covers("urn:x/", "urn:x/y"));
    }

    #[test]
    fn disabling_announces_once_and_hides() {
        let changes = Changes::new();
        let mut rx = changes.subscribe();
        assert!(changes.is_enabled(Kind::Tool, &["t"]));
        assert!(changes.disable(Kind::Tool, "t"));
        assert!(!changes.disable(Kind::Tool, "t"));
        assert!(!changes.is_enabled(Kind::Tool, &["t"]));
        assert!(changes.is_enabled(Kind::Prompt, &["t"]));
        assert_eq!(rx.try_recv().unwrap(), Change::Tools);
        assert!(rx.try_recv().is_err());
        assert!(changes.enable(Kind::Tool, "t"));
        assert!(changes.is_enabled(Kind::Tool, &["t"]));
    }
}
