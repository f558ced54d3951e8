//! The stdio side of the driver: N `tools/call add` requests kept in flight on one child's
//! stdin (a writer thread sends one request per response the reader thread receives), as
//! benches/stdio.rs drives them, in either era.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Instant;

use crate::{EXPECTED, Era, Load, Window, around};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// Request ids start here (0 is the handshake's).
const FIRST_ID: u64 = 1;

/// The handshake of `era`: `initialize` and `notifications/initialized` in the session era,
/// `server/discover` (which also says the server is up) in 2026-07-28.
fn handshake(era: Era, stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>) {
    match era {
        Era::Session => writeln!(stdin, "{INITIALIZE}"),
        Era::Stateless => writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{{{META}}}}}"#
        ),
    }
    .expect("send the handshake");
    stdin.flush().expect("flush");
    let mut line = String::new();
    stdout
        .read_line(&mut line)
        .expect("read the handshake's response");
    assert!(
        line.contains("\"result\""),
        "bad handshake response: {line}"
    );
    if era == Era::Session {
        writeln!(stdin, "{INITIALIZED}").expect("send initialized");
        stdin.flush().expect("flush");
    }
}

/// Send times of the requests in flight, by id.
type SendTimes = Arc<Mutex<HashMap<u64, Instant>>>;

/// Drives `child` (its stdin and stdout piped) with `in_flight` requests through the warm-up,
/// then the measurement window, with the CPU of `pids` sampled around the window. Returns
/// the child's stdin, still open (closing it stops the child).
pub fn load(
    child: &mut Child,
    era: Era,
    in_flight: usize,
    window: Window,
    pids: &[u32],
) -> (Load, ChildStdin) {
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("stdout"));
    handshake(era, &mut stdin, &mut stdout);

    let sent_at: SendTimes = Arc::new(Mutex::new(HashMap::with_capacity(in_flight * 2)));
    let (credit_tx, credit_rx) = mpsc::channel::<usize>();
    let writer = {
        let sent_at = sent_at.clone();
        thread::spawn(move || write_requests(stdin, era, in_flight, credit_rx, sent_at))
    };
    let start = Instant::now();
    let from = start + window.warmup;
    let to = from + window.secs;
    let reader = {
        let sent_at = sent_at.clone();
        thread::spawn(move || read_responses(stdout, in_flight, credit_tx, sent_at, (from, to)))
    };
    thread::sleep(from.saturating_duration_since(Instant::now()));
    let ((), cpu) = around(pids, || {
        thread::sleep(to.saturating_duration_since(Instant::now()));
    });
    let (latencies_ns, mismatches) = reader.join().expect("reader thread");
    let stdin = writer.join().expect("writer thread");
    (Load::new(latencies_ns, mismatches, window.secs, cpu), stdin)
}

/// Sends `in_flight` requests, then one more per credit, batching whatever credits are ready
/// into one write. Returns stdin (still open) once the reader stops granting credits.
fn write_requests(
    stdin: ChildStdin,
    era: Era,
    in_flight: usize,
    credits: mpsc::Receiver<usize>,
    sent_at: SendTimes,
) -> ChildStdin {
    let mut out = BufWriter::with_capacity(64 * 1024, stdin);
    let mut next_id = FIRST_ID;
    let meta = match era {
        Era::Session => "",
        Era::Stateless => META,
    };
    let comma = if meta.is_empty() { "" } else { "," };
    let mut send = |n: usize, out: &mut BufWriter<ChildStdin>| -> io::Result<()> {
        let now = Instant::now();
        {
            let mut map = sent_at.lock().unwrap();
            for id in next_id..next_id + n as u64 {
                map.insert(id, now);
            }
        }
        for _ in 0..n {
            writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{next_id},"method":"tools/call","params":{{{meta}{comma}"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
            )?;
            next_id += 1;
        }
        out.flush()
    };
    if let Err(e) = send(in_flight, &mut out) {
        eprintln!("stdio driver: {e}");
    }
    while let Ok(mut n) = credits.recv() {
        while let Ok(more) = credits.try_recv() {
            n += more;
        }
        if let Err(e) = send(n, &mut out) {
            eprintln!("stdio driver: {e}");
            break;
        }
    }
    out.into_inner()
        .map_err(|e| e.into_error())
        .expect("flush stdin")
}

/// Reads responses until every request the writer was allowed to send has been answered
/// (credits stop at the end of the window). Returns the latencies of the responses received
/// in the window, and the count of wrong answers.
fn read_responses(
    mut stdout: BufReader<ChildStdout>,
    in_flight: usize,
    credits: mpsc::Sender<usize>,
    sent_at: SendTimes,
    (from, to): (Instant, Instant),
) -> (Vec<u64>, usize) {
    let mut latencies_ns = Vec::with_capacity(1 << 20);
    let mut mismatches = 0usize;
    let mut granted = 0usize;
    let mut received = 0usize;
    let mut granting = true;
    let mut pending: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut ids: Vec<u64> = Vec::with_capacity(1024);
    while received < in_flight + granted {
        let n = match stdout.read(&mut chunk) {
            Ok(0) => {
                eprintln!(
                    "stdio driver: the server closed its stdout with {} responses missing",
                    in_flight + granted - received
                );
                break;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                eprintln!("stdio driver: {e}");
                break;
            }
        };
        let now = Instant::now();
        pending.extend_from_slice(&chunk[..n]);
        ids.clear();
        let mut unmatched = 0;
        let mut consumed = 0;
        while let Some(len) = pending[consumed..].iter().position(|&b| b == b'\n') {
            let line = &pending[consumed..consumed + len];
            consumed += len + 1;
            let Some(id) = response_id(line) else {
                // Counted as an answer all the same, so the run cannot wait for it forever.
                mismatches += 1;
                unmatched += 1;
                eprintln!(
                    "stdio driver: a line without a numeric id: {}",
                    String::from_utf8_lossy(line)
                );
                continue;
            };
            ids.push(id);
            if !line.windows(EXPECTED.len()).any(|w| w == EXPECTED) {
                mismatches += 1;
                if mismatches <= 3 {
                    eprintln!(
                        "stdio driver: wrong answer: {}",
                        String::from_utf8_lossy(line)
                    );
                }
            }
        }
        pending.drain(..consumed);
        received += ids.len() + unmatched;
        if ids.is_empty() {
            continue;
        }
        let in_window = now >= from && now <= to;
        {
            let mut map = sent_at.lock().unwrap();
            for id in &ids {
                match map.remove(id) {
                    Some(sent) if in_window => latencies_ns.push((now - sent).as_nanos() as u64),
                    Some(_) => {}
                    None => {
                        mismatches += 1;
                        eprintln!("stdio driver: a response to id {id}, which is not in flight");
                    }
                }
            }
        }
        if granting {
            if now <= to {
                granted += ids.len();
                let _ = credits.send(ids.len());
            } else {
                granting = false;
            }
        }
    }
    drop(credits);
    (latencies_ns, mismatches)
}

/// The numeric `"id":` of a response line, found by a byte scan.
fn response_id(line: &[u8]) -> Option<u64> {
    let start = line.windows(5).position(|w| w == b"\"id\":")? + 5;
    let rest = &line[start..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}')?;
    std::str::from_utf8(rest[..end].trim_ascii())
        .ok()?
        .parse()
        .ok()
}
