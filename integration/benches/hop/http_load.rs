//! The HTTP side of the driver: `sessions` keep-alive connections, each on its own thread with
//! one `tools/call add` in flight, as benches/http.rs drives them, in either era.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::{EXPECTED, Era, Load, Window, around};

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    stream: BufReader<TcpStream>,
    port: u16,
    era: Era,
    session: Option<String>,
    buf: Vec<u8>,
}

const STATELESS_HEADERS: &str =
    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n";

impl Conn {
    fn open(port: u16, era: Era) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).unwrap();
        Conn {
            stream: BufReader::new(stream),
            port,
            era,
            session: None,
            buf: Vec::new(),
        }
    }

    /// POSTs `body`; returns the response body (and keeps any session id it was given).
    fn post(&mut self, body: &str, call: bool) -> &[u8] {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        if let Some(s) = &self.session {
            req.push_str("Mcp-Session-Id: ");
            req.push_str(s);
            req.push_str("\r\n");
        }
        if call && self.era == Era::Stateless {
            req.push_str(STATELESS_HEADERS);
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream
            .get_mut()
            .write_all(req.as_bytes())
            .expect("write");
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            self.stream.read_line(&mut line).expect("read");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            } else if lower.starts_with("mcp-session-id:") {
                self.session = Some(l["mcp-session-id:".len()..].trim().to_owned());
            }
        }
        self.buf.resize(length, 0);
        self.stream.read_exact(&mut self.buf).expect("body");
        &self.buf
    }

    fn initialize(&mut self) {
        self.post(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
            false,
        );
        self.post(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            false,
        );
    }
}

/// One `tools/call add {a:2,b:3}` in `era`.
fn call_body(era: Era, id: u64) -> String {
    match era {
        Era::Stateless => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
        ),
        Era::Session => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}}}}}"#
        ),
    }
}

/// Drives `sessions` connections to `port` through the warm-up, then the measurement window,
/// with the CPU of the processes `pids` sampled around it.
pub fn load(port: u16, era: Era, sessions: usize, window: Window, pids: &[u32]) -> Load {
    let stop = Arc::new(AtomicBool::new(false));
    let measuring = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..sessions)
        .map(|_| {
            let (stop, measuring) = (stop.clone(), measuring.clone());
            thread::spawn(move || {
                let mut conn = Conn::open(port, era);
                if era == Era::Session {
                    conn.initialize();
                }
                let mut latencies = Vec::new();
                let mut mismatches = 0;
                let mut id = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    let body = call_body(era, id);
                    id += 1;
                    let start = Instant::now();
                    let response = conn.post(&body, true);
                    let took = start.elapsed();
                    if measuring.load(Ordering::Relaxed) {
                        latencies.push(took.as_nanos() as u64);
                        if !response.windows(EXPECTED.len()).any(|w| w == EXPECTED) {
                            mismatches += 1;
                            if mismatches <= 3 {
                                eprintln!(
                                    "http driver: wrong answer: {}",
                                    String::from_utf8_lossy(response)
                                );
                            }
                        }
                    }
                }
                (latencies, mismatches)
            })
        })
        .collect();
    thread::sleep(window.warmup);
    let (elapsed, cpu) = around(pids, || {
        measuring.store(true, Ordering::Relaxed);
        let start = Instant::now();
        thread::sleep(window.secs);
        measuring.store(false, Ordering::Relaxed);
        start.elapsed()
    });
    stop.store(true, Ordering::Relaxed);
    let mut latencies_ns = Vec::new();
    let mut mismatches = 0;
    for w in workers {
        let (l, m) = w.join().expect("worker");
        latencies_ns.extend(l);
        mismatches += m;
    }
    Load::new(latencies_ns, mismatches, elapsed, cpu)
}

/// Waits until something accepts connections on `port` (a bridge that is still connecting to
/// its upstream does not listen yet); `false` after `limit`.
pub fn wait_listening(port: u16, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Reads the `PORT n` line a server prints first.
pub fn read_port(stdout: impl Read) -> u16 {
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("port line");
    line.trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("expected `PORT n`, got {line:?}"))
}
