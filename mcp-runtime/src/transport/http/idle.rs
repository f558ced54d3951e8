//! Closing connections that sit idle: no request in progress and nothing read for a while.
//!
//! hyper's header timeout starts at a request's first byte, so a connection that never sends
//! one (or goes quiet between keep-alive requests) would stay open forever and hold a place
//! under the connection cap. [`IdleIo`] wraps the socket: while no request is in progress (a
//! request counts from its arrival until its response body is finished or dropped, so a long
//! SSE stream is never idle), a read that waits past the deadline fails, and hyper closes the
//! connection.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The requests of one connection in progress.
#[derive(Default)]
pub(crate) struct Activity(AtomicUsize);

/// Counts a request in progress until dropped (with its response body).
pub(crate) struct Active(Arc<Activity>);

impl Activity {
    pub(crate) fn begin(self: &Arc<Self>) -> Active {
        self.0.fetch_add(1, Ordering::AcqRel);
        Active(self.clone())
    }

    fn busy(&self) -> bool {
        self.0.load(Ordering::Acquire) > 0
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection's socket, failing reads once it has been idle past its deadline: `first`
/// for the first request (the header timeout), `between` after each one.
pub(crate) struct IdleIo<T> {
    inner: T,
    activity: Arc<Activity>,
    between: Duration,
    deadline: Pin<Box<Sleep>>,
    /// A request was in progress at the last read: the idle time starts anew.
    was_busy: bool,
}

impl<T> IdleIo<T> {
    pub(crate) fn new(
        inner: T,
        activity: Arc<Activity>,
        first: Duration,
        between: Duration,
    ) -> Self {
        IdleIo {
            inner,
            activity,
            between,
            deadline: Box::pin(tokio::time::sleep(first)),
            was_busy: false,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    let next = Instant::now() + this.between;
                    this.deadline.as_mut().reset(next);
                }
                Poll::Ready(result)
            }
            Poll::Pending if this.activity.busy() => {
                this.was_busy = true;
                Poll::Pending
            }
            Poll::Pending => {
                if std::mem::take(&mut this.was_busy) {
                    let next = Instant::now() + this.between;
                    this.deadline.as_mut().reset(next);
                }
                match this.deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "idle connection",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
