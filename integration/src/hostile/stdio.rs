//! The peer as a stdio server: newline-delimited JSON-RPC on stdin and stdout. stdin is read
//! on a thread of its own, as a real server does, so that the client's answers to the peer's
//! own requests are taken while the peer writes; a `stall` step stops that thread.

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::Value;

use super::play::{Ended, Framing, Sink, play};
use super::{Ctx, Script, healthy_answer};

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
    let stalled = Arc::new(AtomicBool::new(false));
    let lines = read_stdin(stalled.clone());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = AtomicU64::new(0);
    let mut counts = HashMap::new();
    // The end of stdin (the client closed it, or went) ends the peer.
    while let Ok(line) = lines.recv() {
        let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let healthy = healthy_answer(&msg);
        let method = msg.get("method").and_then(Value::as_str);
        let target = match (method, msg.get("id")) {
            (Some(method), Some(_)) => script.is_target(&mut counts, method),
            _ => false,
        };
        let mut sink = Sink {
            out: &mut out,
            framing: Framing::Line,
            chunked: false,
            written: &written,
            stop_reading: Some(&stalled),
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

/// stdin's lines, read on a thread; once `stalled` is set, nothing more is read (the client's
/// writes fill the pipe) and the channel stays open.
fn read_stdin(stalled: Arc<AtomicBool>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            if stalled.load(Ordering::Acquire) {
                std::thread::sleep(LIFETIME);
                continue;
            }
            let mut line = Vec::new();
            match (&mut input).take(MAX_LINE).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}
