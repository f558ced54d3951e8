//! The stdio transport: the server is a child process; newline-delimited JSON-RPC on its
//! stdin and stdout. The child ends when the client closes or drops.

use std::collections::VecDeque;
use std::process::Stdio as StdStdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use super::core::{Inbound, Link, LinkFuture, Outgoing};
use super::error::ClientError;

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
/// The longest line read from the server's stdout.
const MAX_LINE: usize = 64 * 1024 * 1024;

pub(crate) struct StdioLink {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    child: Mutex<Option<Child>>,
    pub(crate) stderr: Arc<Mutex<VecDeque<u8>>>,
    /// Why the server's stdout closed, once it has (set by the reader).
    gone: Arc<tokio::sync::watch::Sender<Option<String>>>,
}

impl StdioLink {
    pub(crate) fn spawn(
        mut command: Command,
        stderr: Stderr,
        inbox: mpsc::UnboundedSender<Inbound>,
    ) -> Result<StdioLink, ClientError> {
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
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            let why = loop {
                line.clear();
                match (&mut reader)
                    .take(MAX_LINE as u64 + 1)
                    .read_until(b'\n', &mut line)
                    .await
                {
                    Ok(0) => break format!("the server {program} exited (its stdout closed)"),
                    Ok(_) if line.len() > MAX_LINE => {
                        break format!("the server sent a line longer than {MAX_LINE} bytes");
                    }
                    Ok(_) => {}
                    Err(e) => break format!("reading the server's stdout failed: {e}"),
                }
                let text = String::from_utf8_lossy(&line);
                let text = text.trim();
                if text.is_empty() {
                    continue;
                }
                match serde_json::from_str(text) {
                    Ok(msg) => {
                        if inbox.send(Inbound::Message(msg)).is_err() {
                            return;
                        }
                    }
                    // Servers must write only JSON-RPC to stdout; a stray line is skipped.
                    Err(e) => {
                        tracing::warn!(error = %e, "the server wrote a line that is not JSON")
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
            let _ = inbox.send(Inbound::Closed(why));
        });
        Ok(StdioLink {
            stdin: tokio::sync::Mutex::new(stdin),
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

/// The last few lines of captured stderr, for an error message.
fn tail_of(kept: &Mutex<VecDeque<u8>>) -> String {
    let kept = kept.lock().unwrap();
    let bytes: Vec<u8> = kept.iter().copied().collect();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

impl Link for StdioLink {
    fn send(&self, out: Outgoing) -> LinkFuture<'_, Result<(), ClientError>> {
        Box::pin(async move {
            let mut stdin = self.stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(ClientError::Closed);
            };
            let mut line = out.body;
            line.push(b'\n');
            let written = async {
                pipe.write_all(&line).await?;
                pipe.flush().await
            };
            match written.await {
                Ok(()) => Ok(()),
                Err(e) => Err(self.write_failed(e).await),
            }
        })
    }

    fn close(&self) -> LinkFuture<'_, ()> {
        Box::pin(async move {
            // Closing stdin is how a stdio server is told to stop; it gets a moment to exit,
            // then it is killed.
            self.stdin.lock().await.take();
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
