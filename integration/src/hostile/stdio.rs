//! The peer as a stdio server: newline-delimited JSON-RPC on stdin and stdout. stdin is read
//! on a thread of its own, as a real server does, so that the client's answers to the peer's
//! own requests are taken while the peer writes. That thread also picks out the request the
//! script is about, and stops reading right after it when the script `stall`s (deciding it
//! there, not when the steps run, leaves no line after it read by chance).

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::Value;

use super::play::{Ended, Framing, Sink, play};
use super::{Ctx, Script, What, healthy_answer};

/// How long the process lives at most, whatever the client does: a peer whose client was
/// killed, or that stalls on purpose, ends by itself.
const LIFETIME: Duration = Duration::from_secs(60);
/// The longest line read from the client (the corpus sends a few MiB at most).
const MAX_LINE: u64 = 64 << 20;

/// Serves `script` on stdin and stdout until stdin ends; never returns. Exits with 3 for a
/// `close` step (a server that dies mid-answer).
pub fn serve(script: Script) -> ! {
    std::thread::spawn(|| {
        std::thread::sleep(LIFETIME);
        std::process::exit(0);
    });
    let script = Arc::new(script);
    let lines = read_stdin(script.clone());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = AtomicU64::new(0);
    // The end of stdin (the client closed it, or went) ends the peer.
    while let Ok((msg, target)) = lines.recv() {
        let healthy = healthy_answer(&msg);
        let mut sink = Sink {
            out: &mut out,
            framing: Framing::Line,
            chunked: false,
            written: &written,
            stall_ends: false,
        };
        let ended = if target {
            let ctx = Ctx {
                request: msg,
                ..Ctx::default()
            };
            play(&script.steps, &ctx, healthy.as_ref(), &mut sink)
        } else if let Some(answer) = healthy {
            match sink.frame(&serde_json::to_vec(&answer).unwrap_or_default()) {
                Ok(()) => Ended::Finished,
                Err(_) => Ended::Gone,
            }
        } else {
            Ended::Finished
        };
        match ended {
            Ended::Finished | Ended::Hung | Ended::Stalled => {}
            Ended::Closed => {
                let _ = out.flush();
                std::process::exit(3);
            }
            Ended::Gone => std::process::exit(0),
        }
    }
    std::process::exit(0)
}

/// stdin's messages, read on a thread, each with whether it is the request the script is
/// about. After that request, a script that `stall`s reads nothing more (the client's writes
/// fill the pipe) and keeps the channel open.
fn read_stdin(script: Arc<Script>) -> mpsc::Receiver<(Value, bool)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut counts = HashMap::new();
        let stalls = script.steps.iter().any(|s| matches!(s.what, What::Stall));
        loop {
            let mut line = Vec::new();
            match (&mut input).take(MAX_LINE).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let target = match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
                (Some(method), Some(_)) => script.is_target(&mut counts, method),
                _ => false,
            };
            if tx.send((msg, target)).is_err() {
                return;
            }
            if target && stalls {
                loop {
                    std::thread::sleep(LIFETIME);
                }
            }
        }
    });
    rx
}
