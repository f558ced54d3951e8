//! One module per command (the client commands share one: they differ only in the request).

pub(crate) mod client;
pub(crate) mod conformance;
pub(crate) mod dev;
pub(crate) mod inspect;
pub(crate) mod install;
pub(crate) mod new;

use std::future::Future;

use crate::Failure;

/// Runs `work` on a small tokio runtime (the client's I/O and the terminal prompts).
pub(crate) fn block_on<T>(work: impl Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("cannot start the async runtime: {e}")))?
        .block_on(work)
}
