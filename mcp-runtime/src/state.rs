//! [`State<T>`]: values the program registers once and tools receive by type.

use std::any::type_name;
use std::ops::Deref;
use std::sync::Arc;

use crate::protocol::McpError;
use crate::request::{Context, FromContext};

/// Shared state of type `T`, registered once with [`ServerBuilder::state`](crate::ServerBuilder::state)
/// or `run!(state = value)`, and injected into any tool, resource or prompt that takes a
/// `State<T>` (or `&State<T>`) parameter. It dereferences to `T`; cloning is cheap.
///
/// ```standalone_crate
/// use mcp_runtime::prelude::*;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// struct Counter(AtomicU64);
///
/// /// Count one more visit.
/// #[tool]
/// async fn visit(counter: State<Counter>) -> u64 {
///     counter.0.fetch_add(1, Ordering::Relaxed) + 1
/// }
///
/// # fn main() {
/// let server = mcp_runtime::Server::builder().state(Counter(AtomicU64::new(0))).build().unwrap();
/// # let _ = server;
/// # }
/// ```
pub struct State<T: ?Sized>(Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for State<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        ctx.states().get::<T>().map(State).ok_or_else(|| {
            let name = type_name::<T>();
            tracing::error!("a handler takes State<{name}>, but none was registered");
            McpError::internal(format!(
                "Server misconfigured: no State<{name}> was registered (Server::builder().state(...) or run!(state = ...))"
            ))
        })
    }
}
