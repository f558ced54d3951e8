//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! One thread reads stdin with plain blocking I/O (tokio's stdio sends every read through the
//! blocking pool). It decodes each line, answers cheap requests at once, and polls a tool call's
//! future once in place: most calls finish on that first poll, and their response goes straight
//! into the output buffer, flushed whenever the reader is about to wait for more input. A call
//! that is not finished (it awaits I/O or a timer, or is a sync tool on the blocking pool) moves
//! to a tokio task, so a slow tool does not hold back a `ping`; its response reaches the output
//! through a writer thread, as do notifications (a tokio worker never writes to stdout itself,
//! so a client that stops reading cannot block the runtime). The price: an `async fn` tool that blocks before its first `.await`
//! holds up the reader (later requests, cancellations, even noticing EOF) until it returns,
//! which is why blocking work belongs in a sync `fn` tool. Crossing threads only for the calls that need it is what makes this
//! transport fast (see BENCHMARKS.md).

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::Server;
use crate::protocol::jsonrpc::Encoded;
use crate::request::Sink;
use crate::server::connection::{Connection, Step, Wire};
use crate::server::dispatch;

/// Serves `server` on this process's stdin and stdout until stdin closes or a SIGINT/SIGTERM.
///
/// stdin and stdout belong to the protocol. On Unix they are moved to new close-on-exec
/// descriptors: file descriptor 1 then points at stderr, so a stray `println!` in a tool lands
/// in the log instead of corrupting the stream, and descriptor 0 at `/dev/null`, so a child
/// process a tool starts can neither eat protocol input nor hold the client's pipe open.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    let (input, output) = protocol_stdio()?;
    serve_lines(server, input, output).await
}

#[cfg(unix)]
fn protocol_stdio() -> io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl/open/dup2 on the process's standard descriptors. Each new descriptor is
    // owned by exactly one returned File, and nothing else closes it.
    unsafe {
        let dup = |fd: libc::c_int| {
            let new = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
            if new < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(new)
            }
        };
        let input = std::fs::File::from_raw_fd(dup(libc::STDIN_FILENO)?);
        let output = std::fs::File::from_raw_fd(dup(libc::STDOUT_FILENO)?);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, libc::STDIN_FILENO);
            libc::close(null);
        }
        // stdout now writes to stderr; if stderr is not open, to /dev/null.
        if libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if null >= 0 {
                libc::dup2(null, libc::STDOUT_FILENO);
                libc::close(null);
            }
        }
        Ok((input, output))
    }
}

#[cfg(not(unix))]
fn protocol_stdio() -> io::Result<(io::Stdin, io::Stdout)> {
    Ok((io::stdin(), io::stdout()))
}

/// The output stream, shared by the reader thread (responses it finished itself) and the writer
/// thread (responses of spawned tasks, notifications).
type Output<W> = Arc<Mutex<BufWriter<W>>>;

/// Notifications queued beyond this many unwritten messages are dropped (a client that stops
/// reading loses progress and logs, never the server its memory).
const NOTES_QUEUED_MAX: usize = 256;
/// The reader reads no more input while this many messages wait to be written: a client
/// that stops reading stdout stops the server reading stdin.
const QUEUED_MAX: usize = 1024;

/// Messages on their way to the writer thread, counted until written. Nothing but the reader
/// and writer threads ever writes to the output: a tokio worker sending a notification only
/// queues it, so a client that stops reading cannot block the runtime.
struct Outbox {
    tx: mpsc::Sender<Encoded>,
    backlog: Arc<Backlog>,
}

/// The count of queued, unwritten messages. The writer thread holds only this, not the
/// sender: it ends when the last sender is gone, not at a timeout.
#[derive(Default)]
struct Backlog {
    queued: AtomicUsize,
    /// Signalled (under its lock) when `queued` falls back below `QUEUED_MAX`.
    room: (Mutex<()>, Condvar),
}

impl Backlog {
    /// One message written (by the writer thread).
    fn written(&self) {
        if self.queued.fetch_sub(1, Ordering::AcqRel) == QUEUED_MAX {
            // Under the lock, so a reader between its check and its wait cannot miss it.
            let _room = self.room.0.lock().expect("outbox lock");
            self.room.1.notify_all();
        }
    }
}

impl Outbox {
    fn send(&self, message: Encoded) -> bool {
        self.backlog.queued.fetch_add(1, Ordering::AcqRel);
        if self.tx.send(message).is_err() {
            self.backlog.queued.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    fn notify(&self, message: Encoded) -> bool {
        self.queued() < NOTES_QUEUED_MAX && self.send(message)
    }

    /// Messages queued and not yet written.
    fn queued(&self) -> usize {
        self.backlog.queued.load(Ordering::Acquire)
    }

    /// Blocks the reader while `QUEUED_MAX` messages wait to be written.
    fn wait_for_room(&self) {
        let mut room = self.backlog.room.0.lock().expect("outbox lock");
        while self.queued() >= QUEUED_MAX {
            room = self.backlog.room.1.wait(room).expect("outbox lock");
        }
    }
}

/// Serves `server` on any pair of byte streams with stdio framing (one JSON-RPC message per
/// line), e.g. a TCP or Unix socket. Returns when `input` reaches end of file (after running
/// requests finish, within the shutdown grace) or on SIGINT/SIGTERM.
pub async fn serve_lines<R, W>(server: Server, input: R, output: W) -> io::Result<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let output: Output<W> = Arc::new(Mutex::new(BufWriter::with_capacity(64 * 1024, output)));
    let (tx, rx) = mpsc::channel::<Encoded>();
    let outbox = Arc::new(Outbox {
        tx,
        backlog: Arc::default(),
    });
    // Notifications (progress, logs) go through the writer thread. They still precede their
    // request's result: a result the reader finished itself is written directly only when
    // nothing is queued, and queued behind them otherwise.
    let notes = outbox.clone();
    let sink = Sink::new(move |message| notes.notify(message));
    let conn = Connection::with_sink(server, Wire::STDIO, sink);
    let limits = conn.server.inner.limits.clone();
    let (writer_done_tx, writer_done) = oneshot::channel();
    let writer_output = output.clone();
    let shared_output = output.clone();
    let written = outbox.backlog.clone();
    std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            let result = write_loop(rx, &writer_output, &written);
            let _ = writer_done_tx.send(result);
        })?;
    let (eof_tx, eof) = oneshot::channel();
    let reader_conn = conn.clone();
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let input = BufReader::with_capacity(64 * 1024, input);
            let result = read_loop(
                &reader_conn,
                input,
                &output,
                outbox,
                &runtime,
                limits.max_message_bytes,
            );
            let _ = eof_tx.send(result);
        })?;

    let mut signalled = false;
    let read_result = tokio::select! {
        r = eof => r.unwrap_or_else(|_| Err(io::Error::other("the stdin reader thread failed"))),
        _ = super::shutdown_signal() => {
            tracing::info!("signal received, shutting down");
            conn.cancel_all();
            signalled = true;
            Ok(())
        }
    };
    // Let running requests finish (their responses are still wanted), within the grace period;
    // listen streams have no end of their own, so they end now.
    conn.end_listens();
    let _ = tokio::time::timeout(limits.shutdown_grace, conn.drained()).await;
    conn.cancel_all();
    conn.server.inner.tasks.shutdown().await;
    drop(conn);
    if signalled {
        // The reader thread is still blocked in `read` and holds a sender, so the writer will
        // not end on its own: flush what is there (unless a write is stuck) and go.
        if let Ok(mut out) = shared_output.try_lock() {
            let _ = out.flush();
        }
        return read_result;
    }
    // The writer ends once every sender (the reader's and the tasks') is gone, after a flush.
    match tokio::time::timeout(Duration::from_secs(1), writer_done).await {
        Ok(Ok(Err(e))) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e),
        _ => {}
    }
    read_result
}

fn read_loop<R: Read, W: Write>(
    conn: &Arc<Connection>,
    mut input: BufReader<R>,
    output: &Output<W>,
    outbox: Arc<Outbox>,
    runtime: &tokio::runtime::Handle,
    max: usize,
) -> io::Result<()> {
    // Tool futures polled here may touch tokio's timers and spawn tasks.
    let _runtime = runtime.enter();
    let mut line = Vec::with_capacity(4096);
    let mut unflushed = false;
    let flush = |unflushed: &mut bool| -> io::Result<()> {
        if std::mem::take(unflushed) {
            output.lock().expect("output lock").flush()?;
        }
        Ok(())
    };
    loop {
        line.clear();
        // Backpressure: while the client is not reading what it has been sent, read nothing.
        outbox.wait_for_room();
        // Responses written so far go out before we might wait for more input.
        let read = read_line(&mut input, &mut line, max, &mut || flush(&mut unflushed))?;
        let step = match read {
            Line::Eof => return flush(&mut unflushed),
            Line::TooLong => Step::Reply(dispatch::too_large(conn)),
            Line::Complete => {
                let text = trim_line(&line);
                if text.is_empty() {
                    continue;
                }
                match std::str::from_utf8(text) {
                    Ok(text) => dispatch::on_message(conn, text),
                    Err(_) => Step::Reply(dispatch::invalid_utf8()),
                }
            }
        };
        let ready = match step {
            Step::Reply(out) => Some(out.bytes),
            Step::Run(mut pending) => {
                match pending
                    .as_mut()
                    .poll(&mut TaskContext::from_waker(Waker::noop()))
                {
                    Poll::Ready(out) => out.map(|r| r.bytes),
                    Poll::Pending => {
                        let outbox = outbox.clone();
                        runtime.spawn(async move {
                            if let Some(out) = pending.await {
                                outbox.send(out.bytes);
                            }
                        });
                        None
                    }
                }
            }
            Step::Nothing => None,
        };
        if let Some(out) = ready {
            // Behind anything queued (a notification of this request sent from a task), or
            // straight into the buffer when nothing is: a count of zero means all queued
            // messages are already in the buffer (the writer counts them down under the lock).
            if outbox.queued() > 0 {
                outbox.send(out);
            } else {
                write_message(&mut output.lock().expect("output lock"), &out)?;
                unflushed = true;
            }
        }
    }
}

/// One message and its newline (the framing), into the buffered output.
fn write_message<W: Write>(w: &mut BufWriter<W>, message: &[u8]) -> io::Result<()> {
    w.write_all(message)?;
    w.write_all(b"\n")
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.trim_ascii()
}

fn write_loop<W: Write>(
    rx: mpsc::Receiver<Encoded>,
    output: &Output<W>,
    backlog: &Backlog,
) -> io::Result<()> {
    while let Ok(first) = rx.recv() {
        let mut w = output.lock().expect("output lock");
        write_message(&mut w, &first)?;
        backlog.written();
        // Batch whatever else is ready into the same write.
        while let Ok(more) = rx.try_recv() {
            write_message(&mut w, &more)?;
            backlog.written();
        }
        w.flush()?;
    }
    output.lock().expect("output lock").flush()
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf`, never holding more than `max` bytes: a longer line
/// is consumed and dropped, and reported as [`Line::TooLong`]. `before_wait` runs whenever the
/// buffer is empty, that is before a read that may block.
fn read_line<R: Read>(
    input: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
    before_wait: &mut dyn FnMut() -> io::Result<()>,
) -> io::Result<Line> {
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        if input.buffer().is_empty() {
            before_wait()?;
        }
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (seen_any, too_long) {
                (false, _) => Line::Eof,
                (true, true) => Line::TooLong,
                (true, false) => Line::Complete,
            });
        }
        seen_any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if buf.len() + chunk.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        input.consume(used);
        if done {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line(&mut r, &mut buf, max, &mut || Ok(())).unwrap() {
                Line::Eof => return out,
                Line::TooLong => out.push(Err("too long")),
                Line::Complete => out.push(Ok(String::from_utf8(buf.clone()).unwrap())),
            }
        }
    }

    #[test]
    fn splits_lines_and_bounds_their_length() {
        assert_eq!(
            lines(b"ab\ncd\n", 10),
            vec![Ok("ab".into()), Ok("cd".into())]
        );
        assert_eq!(
            lines(b"ab\nlast", 10),
            vec![Ok("ab".into()), Ok("last".into())]
        );
        assert_eq!(
            lines(b"0123456789abc\nok\n", 10),
            vec![Err("too long"), Ok("ok".into())]
        );
        assert_eq!(lines(b"", 10), vec![]);
    }

    #[test]
    fn trims_crlf_and_blanks() {
        assert_eq!(trim_line(b" {}\r"), b"{}");
    }
}
