//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Reading and writing happen on two dedicated threads with plain blocking I/O (tokio's stdio
//! goes through the blocking pool for every read and write). Requests run concurrently as tasks,
//! so a slow tool never holds back a `ping`. Responses are batched into one `write` when several
//! are ready.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::Server;
use crate::protocol::jsonrpc::Encoded;
use crate::server::connection::{Connection, Step};

/// Serves `server` on this process's stdin and stdout until stdin closes or a SIGINT/SIGTERM.
///
/// stdout belongs to the protocol: on Unix, file descriptor 1 is pointed at stderr for the rest
/// of the process, so a stray `println!` in a tool lands in the log instead of corrupting the
/// stream.
pub async fn serve_stdio(server: Server) -> io::Result<()> {
    let out = protocol_stdout()?;
    let input = BufReader::with_capacity(64 * 1024, io::stdin());
    serve_lines(server, input, out).await
}

#[cfg(unix)]
fn protocol_stdout() -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup/dup2 on the process's standard descriptors; the new descriptor is owned by
    // the returned File and nothing else closes it.
    unsafe {
        let fd = libc::dup(libc::STDOUT_FILENO);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(std::fs::File::from_raw_fd(fd))
    }
}

#[cfg(not(unix))]
fn protocol_stdout() -> io::Result<io::Stdout> {
    Ok(io::stdout())
}

/// Serves `server` on any pair of byte streams with stdio framing (one JSON-RPC message per
/// line), e.g. a TCP or Unix socket. Returns when `input` reaches end of file (after running
/// requests finish, within the shutdown grace) or on SIGINT/SIGTERM.
pub async fn serve_lines<R, W>(server: Server, input: R, output: W) -> io::Result<()>
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let conn = Connection::new(server, "stdio");
    let limits = conn.server.inner.limits.clone();
    let (tx, rx) = mpsc::channel::<Encoded>();
    let (writer_done_tx, writer_done) = oneshot::channel();
    std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            let result = write_loop(rx, output);
            let _ = writer_done_tx.send(result);
        })?;
    let (eof_tx, eof) = oneshot::channel();
    let reader_conn = conn.clone();
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let result = read_loop(&reader_conn, input, tx, &runtime, limits.max_message_bytes);
            let _ = eof_tx.send(result);
        })?;

    let read_result = tokio::select! {
        r = eof => r.unwrap_or(Ok(())),
        _ = shutdown_signal() => {
            tracing::info!("signal received, shutting down");
            conn.cancel_all();
            Ok(())
        }
    };
    // Let running requests finish (their responses are still wanted), within the grace period.
    let deadline = tokio::time::Instant::now() + limits.shutdown_grace;
    while conn.in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    conn.cancel_all();
    drop(conn);
    // The writer ends once every sender (the reader's and the tasks') is gone.
    match tokio::time::timeout(Duration::from_secs(1), writer_done).await {
        Ok(Ok(Err(e))) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e),
        _ => {}
    }
    read_result
}

fn read_loop<R: BufRead>(
    conn: &Arc<Connection>,
    mut input: R,
    tx: mpsc::Sender<Encoded>,
    runtime: &tokio::runtime::Handle,
    max: usize,
) -> io::Result<()> {
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        let step = match read_line(&mut input, &mut line, max)? {
            Line::Eof => return Ok(()),
            Line::TooLong => Step::Reply(conn.too_large()),
            Line::Complete => {
                let text = trim_line(&line);
                if text.is_empty() {
                    continue;
                }
                match std::str::from_utf8(text) {
                    Ok(text) => conn.on_message(text),
                    Err(_) => Step::Reply(conn.invalid_utf8()),
                }
            }
        };
        match step {
            Step::Reply(out) => {
                if tx.send(out).is_err() {
                    return Ok(());
                }
            }
            Step::Run(pending) => {
                let tx = tx.clone();
                runtime.spawn(async move {
                    if let Some(out) = pending.await {
                        let _ = tx.send(out);
                    }
                });
            }
            Step::Nothing => {}
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.trim_ascii()
}

fn write_loop<W: Write>(rx: mpsc::Receiver<Encoded>, output: W) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Ok(first) = rx.recv() {
        out.write_all(&first)?;
        out.write_all(b"\n")?;
        // Batch whatever else is ready into the same write.
        while let Ok(more) = rx.try_recv() {
            out.write_all(&more)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    out.flush()
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf`, never holding more than `max` bytes: a longer line
/// is consumed and dropped, and reported as [`Line::TooLong`].
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    let mut too_long = false;
    let mut seen_any = false;
    loop {
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

#[cfg(unix)]
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

#[cfg(not(unix))]
async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await
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
            match read_line(&mut r, &mut buf, max).unwrap() {
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
