//! [`Catalog`]: what a server offers, at run time. Enable or disable registered tools,
//! resources and prompts, and announce from anywhere in the program that a resource changed or
//! that a list did.
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
//!         mcp_runtime::catalog().resource_updated("sensor://temperature");
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

/// Which kind of registered item a name given to [`Catalog::disable`] or
/// [`Catalog::enable`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// A tool, by name.
    Tool,
    /// A resource or resource template, by name or by URI (template).
    Resource,
    /// A prompt, by name.
    Prompt,
}

/// The 0.1 name of [`ItemKind`].
#[doc(hidden)]
#[deprecated(note = "renamed to `ItemKind`")]
pub type Kind = ItemKind;

/// A handle on what the servers using it offer: it enables and disables registered tools,
/// resources and prompts, and announces changes (a list changed, a resource was updated) to
/// every client of those servers. Cheap to clone, usable from any thread.
///
/// [`run!`](crate::run) serves with the process-wide handle, [`catalog()`](crate::catalog());
/// a server built with [`Server::builder`](crate::Server::builder) has its own unless given one
/// with [`ServerBuilder::catalog`](crate::ServerBuilder::catalog).
#[derive(Clone)]
pub struct Catalog {
    hub: Arc<Hub>,
}

/// The 0.1 name of [`Catalog`].
#[doc(hidden)]
#[deprecated(note = "renamed to `Catalog`")]
pub type Changes = Catalog;

struct Hub {
    tx: broadcast::Sender<Change>,
    /// This handle's id on the change bus (its own messages are not delivered twice).
    origin: String,
    bus: OnceLock<Arc<dyn ChangeBus>>,
    disabled: RwLock<HashSet<(ItemKind, String)>>,
    /// Bumped on every enable/disable: list cursors from before are refused.
    generation: AtomicU64,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog").finish_non_exhaustive()
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new()
    }
}

/// The process-wide [`Catalog`] handle, the one [`run!`](crate::run) serves with.
pub fn catalog() -> Catalog {
    static GLOBAL: OnceLock<Catalog> = OnceLock::new();
    GLOBAL.get_or_init(Catalog::new).clone()
}

/// The 0.1 name of [`catalog()`].
#[doc(hidden)]
#[deprecated(note = "renamed to `catalog()`")]
pub fn changes() -> Catalog {
    catalog()
}

impl Catalog {
    /// This handle as a request carries it to its handler ([`Context::catalog`] reads it back).
    pub(crate) fn handle(&self) -> Opaque {
        self.hub.clone()
    }
}

// Defined here, not with `Context` in `request/`: the request layer cannot name `Catalog`
// (it imports nothing from the modules above it; `tests/module_cycles.rs`), so it carries the
// handle opaquely and this module reads it back.
impl Context {
    /// The server's [`Catalog`]: enables and disables tools, resources and prompts at run time,
    /// and announces changes (a resource updated, a list changed).
    pub fn catalog(&self) -> Catalog {
        // Only `Catalog::handle` makes what a request carries here.
        let hub = self.catalog_handle().clone().downcast::<Hub>();
        Catalog {
            hub: hub.expect("a request carries its server's catalog handle"),
        }
    }

    /// The 0.1 name of [`catalog`](Self::catalog).
    #[doc(hidden)]
    #[deprecated(note = "renamed to `catalog()`")]
    pub fn changes(&self) -> Catalog {
        self.catalog()
    }
}

impl Catalog {
    /// A new handle, not shared with any other.
    pub fn new() -> Catalog {
        Catalog {
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

    /// Whether `self` and `other` are the same handle (clones of one another).
    pub(crate) fn same_as(&self, other: &Catalog) -> bool {
        Arc::ptr_eq(&self.hub, &other.hub)
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
    pub fn disable(&self, kind: ItemKind, name: impl Into<String>) -> bool {
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
    pub fn enable(&self, kind: ItemKind, name: &str) -> bool {
        let changed = self
            .hub
            .disabled
            .write()
            .expect("disabled lock")
            .remove(&(kind, name.to_owned()));
        self.after_toggle(kind, changed)
    }

    fn after_toggle(&self, kind: ItemKind, changed: bool) -> bool {
        if changed {
            self.hub.generation.fetch_add(1, Ordering::Relaxed);
            self.send(match kind {
                ItemKind::Tool => Change::Tools,
                ItemKind::Resource => Change::Resources,
                ItemKind::Prompt => Change::Prompts,
            });
        }
        changed
    }

    /// Whether an item named by any of `keys` (its name, its URI) is enabled.
    pub(crate) fn is_enabled(&self, kind: ItemKind, keys: &[&str]) -> bool {
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
        let changes = Catalog::new();
        let mut rx = changes.subscribe();
        assert!(changes.is_enabled(ItemKind::Tool, &["t"]));
        assert!(changes.disable(ItemKind::Tool, "t"));
        assert!(!changes.disable(ItemKind::Tool, "t"));
        assert!(!changes.is_enabled(ItemKind::Tool, &["t"]));
        assert!(changes.is_enabled(ItemKind::Prompt, &["t"]));
        assert_eq!(rx.try_recv().unwrap(), Change::Tools);
        assert!(rx.try_recv().is_err());
        assert!(changes.enable(ItemKind::Tool, "t"));
        assert!(changes.is_enabled(ItemKind::Tool, &["t"]));
    }
}
