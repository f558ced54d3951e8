//! The stdio transport: the server is a child process; newline-delimited JSON-RPC on its
//! stdin and stdout. The child ends when the client closes or drops.

use std::collections::VecDeque;
use std::process::Stdio as StdStdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};

use super::core::{Inbound, Link, LinkFuture, Outgoing};
use super::error::ClientError;
use super::limits::Limits;
use super::lines::{self, Lines, TooLong};
use super::peek;
use super::router::Inbox;

/// What happens to the child's stderr (where servers log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stderr {
    /// Passed through to this process's stderr (the default).
    #[default]
    Inherit,
    /// Kept (the last 64 KiB): [`Client::stderr`](super::Client::stderr) returns it, and an
    /// error for a server that exited quotes its end.
    Capture,
    /// Discarded.
    Null,
}

/// The most stderr bytes kept by [`Stderr::Capture`].
const STDERR_KEPT: usize = 64 * 1024;

/// What one read of the server's stdout takes at most (a line may span many).
const READ_CHUNK: usize = 8 * 1024;

pub(crate) struct StdioLink {
    stdin: tokio::sync::Mutex<Writer<ChildStdin>>,
    child: Mutex<Option<Child>>,
    pub(crate) stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Why the server's stdout closed, once it has (set by the reader).
    gone: Arc<tokio::sync::watch::Sender<Option<String>>>,
}

impl StdioLink {
    pub(crate) fn spawn(
        mut command: Command,
        stderr: Stderr,
        limits: &Limits,
        inbox: Inbox,
    ) -> Result<StdioLink, ClientError> {
        let max_line = limits.max_message_bytes;
        command
            .stdin(StdStdio::piped())
            .stdout(StdStdio::piped())
            .stderr(match stderr {
                Stderr::Inherit => StdStdio::inherit(),
                Stderr::Capture => StdStdio::piped(),
                Stderr::Null => StdStdio::null(),
            })
            .kill_on_drop(true);
        let program = format!("{:?}", command.as_std().get_program());
        let mut child = command
            .spawn()
            .map_err(|e| ClientError::transport(format!("could not start {program}: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_reader = child.stderr.take().map(|mut err| {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = kept.lock().unwrap();
                    kept.extend(&buf[..n]);
                    let over = kept.len().saturating_sub(STDERR_KEPT);
                    kept.drain(..over);
                }
            })
        });
        let captured = kept.clone();
        let gone = Arc::new(tokio::sync::watch::Sender::new(None));
        let gone_tx = gone.clone();
        tokio::spawn(async move {
            let mut stdout = stdout;
            let mut reader = Lines::new(max_line);
            let mut chunk = vec![0u8; READ_CHUNK];
            let why = loop {
                let n = match stdout.read(&mut chunk).await {
                    Ok(n) => n,
                    Err(e) => break format!("reading the server's stdout failed: {e}"),
                };
                if n == 0 {
                    // A last line without a newline still counts.
                    if let Some(line) = reader.finish()
                        && !deliver(&inbox, line).await
                    {
                        return;
                    }
                    break format!("the server {program} exited (its stdout closed)");
                }
                let mut input = &chunk[..n];
                while !input.is_empty() {
                    match reader.next(&mut input) {
                        Ok(None) => {}
                        Ok(Some(line)) => {
                            if !deliver(&inbox, line).await {
                                return;
                            }
                        }
                        Err(TooLong) => {
                            // The rest of the line is never read: the connection ends here.
                            let error =
                                ClientError::too_large("a line from the server (bytes)", max_line);
                            gone_tx.send_replace(Some(error.to_string()));
                            let _ = inbox.send(Inbound::Closed(error)).await;
                            return;
                        }
                    }
                }
            };
            // A server that exits closes stdout and stderr together, but the two readers race:
            // let the stderr reader reach its end first (briefly: a grandchild may hold stderr
            // open), so the error quotes what the server said.
            if let Some(reader) = stderr_reader {
                let _ = tokio::time::timeout(Duration::from_millis(250), reader).await;
            }
            let tail = tail_of(&captured);
            let why = if tail.is_empty() {
                why
            } else {
                format!("{why}; its stderr ends with: {tail}")
            };
            gone_tx.send_replace(Some(why.clone()));
            let _ = inbox
                .send(Inbound::Closed(ClientError::transport(why)))
                .await;
        });
        Ok(StdioLink {
            stdin: tokio::sync::Mutex::new(Writer {
                pipe: stdin,
                owed: Vec::new(),
            }),
            child: Mutex::new(Some(child)),
            stderr: kept,
            gone,
        })
    }

    /// Why writing failed: the server's end as its reader saw it (exit status, stderr), when
    /// that comes within a moment, else the write error itself.
    async fn write_failed(&self, e: std::io::Error) -> ClientError {
        let mut gone = self.gone.subscribe();
        let why = tokio::time::timeout(Duration::from_millis(500), gone.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(|r| r.ok().and_then(|w| w.clone()));
        let status = self
            .child
            .lock()
            .unwrap()
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten());
        match (why, status) {
            (Some(why), Some(status)) => ClientError::transport(format!("{why} ({status})")),
            (Some(why), None) => ClientError::transport(why),
            (None, _) => {
                ClientError::transport(format!("writing to the server's stdin failed: {e}"))
            }
        }
    }
}

/// Hands the message one line holds to the client; `false` once the client is gone.
async fn deliver(inbox: &Inbox, line: &[u8]) -> bool {
    // A blank line says nothing.
    let Some(text) = lines::text(line) else {
        return true;
    };
    match peek::read(&text) {
        Ok(msg) => inbox.send(Inbound::Read(msg)).await.is_ok(),
        // Servers must write only JSON-RPC to stdout; a stray line is skipped.
        Err(e) => {
            tracing::warn!(error = %e, "the server wrote a line that is not JSON");
            true
        }
    }
}

/// The last few lines of captured stderr, for an error message.
fn tail_of(kept: &Mutex<VecDeque<u8>>) -> String {
    let kept = kept.lock().unwrap();
    let bytes: Vec<u8> = kept.iter().copied().collect();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// The server's stdin, and what a send given up part way still owes it.
///
/// A send can be dropped mid-line (its request timed out: the server stopped reading and the
/// pipe is full). Writing the next message after a cut-off line would corrupt both, so the
/// unwritten rest of the line is kept and written first by the next send: the server sees
/// whole lines, in order, whenever it reads again. Each `write` is cancel-safe (a write that
/// did not complete wrote nothing), so what is owed is exact.
struct Writer<W> {
    pipe: Option<W>,
    owed: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Writes `line` (a newline is added) after whatever an earlier send left unwritten.
    /// Cancel-safe: dropped part way, it leaves the rest of a started line owed, and a line
    /// it never started unsent.
    async fn send(&mut self, mut line: Vec<u8>) -> Result<(), WriteError> {
        let Writer { pipe, owed } = self;
        let Some(pipe) = pipe.as_mut() else {
            return Err(WriteError::Closed);
        };
        write_out(pipe, owed).await?;
        line.push(b'\n');
        // Dropped part way, the rest of the line becomes owed.
        let mut cut = CutLine {
            owed,
            line,
            written: 0,
        };
        while cut.written < cut.line.len() {
            let n = pipe.write(&cut.line[cut.written..]).await?;
            if n == 0 {
                return Err(WriteError::Io(std::io::ErrorKind::WriteZero.into()));
            }
            cut.written += n;
        }
        Ok(())
    }
}

/// Writes out and empties `owed`, one cancel-safe `write` at a time.
async fn write_out<W: AsyncWrite + Unpin>(pipe: &mut W, owed: &mut Vec<u8>) -> std::io::Result<()> {
    while !owed.is_empty() {
        let n = pipe.write(owed).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        owed.drain(..n);
    }
    Ok(())
}

/// A line being written: on drop, what was started and not finished is owed.
struct CutLine<'a> {
    owed: &'a mut Vec<u8>,
    line: Vec<u8>,
    written: usize,
}

impl Drop for CutLine<'_> {
    fn drop(&mut self) {
        if self.written > 0 && self.written < self.line.len() {
            self.owed.extend_from_slice(&self.line[self.written..]);
        }
    }
}

enum WriteError {
    Closed,
    Io(std::io::Error),
}

impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> Self {
        WriteError::Io(e)
    }
}

impl Link for StdioLink {
    fn send(&self, out: Outgoing) -> LinkFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            // A server whose stdout ended, or was given up on (too long a line), is not
            // written to: nothing would read the answer.
            if self.gone.borrow().is_some() {
                return Err(self
                    .write_failed(std::io::ErrorKind::BrokenPipe.into())
                    .await);
            }
            let mut stdin = self.stdin.lock().await;
            match stdin.send(out.body).await {
                Ok(()) => Ok(()),
                Err(WriteError::Closed) => Err(ClientError::Closed),
                Err(WriteError::Io(e)) => Err(self.write_failed(e).await),
            }
        })
    }

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            // Closing stdin is how a stdio server is told to stop; it gets a moment to exit,
            // then it is killed.
            self.stdin.lock().await.pipe.take();
            let child = self.child.lock().unwrap().take();
            if let Some(mut child) = child
                && tokio::time::timeout(Duration::from_secs(2), child.wait())
                    .await
                    .is_err()
            {
                let _ = child.kill().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::AsyncReadExt;

    /// A send dropped mid-line (its deadline passed while the reader was not reading) leaves
    /// the rest of the line owed: the reader, once it reads again, gets whole lines in order.
    #[tokio::test]
    async fn a_line_cut_off_by_a_deadline_is_finished_before_the_next() {
        let (pipe, mut reader) = tokio::io::duplex(16);
        let mut writer = Writer {
            pipe: Some(pipe),
            owed: Vec::new(),
        };
        let first = b"first line, longer than the pipe".to_vec();
        let cut = tokio::time::timeout(Duration::from_millis(50), writer.send(first)).await;
        assert!(cut.is_err(), "the pipe is full: the send is given up");
        assert!(!writer.owed.is_empty());
        // A send that never started leaves nothing behind (the pipe is still full).
        let owed = writer.owed.len();
        let never = tokio::time::timeout(Duration::from_millis(50), writer.send(b"never".to_vec()));
        assert!(never.await.is_err());
        assert_eq!(writer.owed.len(), owed);
        let read = tokio::spawn(async move {
            let mut all = Vec::new();
            let mut buf = [0u8; 8];
            while !all.ends_with(b"second\n") {
                let n = reader.read(&mut buf).await.unwrap();
                all.extend_from_slice(&buf[..n]);
            }
            all
        });
        assert!(writer.send(b"second".to_vec()).await.is_ok());
        let all = read.await.unwrap();
        assert_eq!(all, b"first line, longer than the pipe\nsecond\n");
    }
}
