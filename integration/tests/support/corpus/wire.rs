//! Raw HTTP/1.1 exchanges with an example server (every header and byte under the test's
//! control, a body written while the answer is read), and stdio helpers for [`Proc`].

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::conn::base_headers;
use super::{Headers, TIMEOUT};
use crate::support::Proc;

/// An example serving HTTP on an ephemeral loopback port (with environment variables, which
/// [`crate::support::http::HttpServer`] does not take).
pub struct HttpProc {
    pub proc: Proc,
    pub port: u16,
}

impl HttpProc {
    pub(crate) fn start(name: &str, env: &[(&str, &str)]) -> HttpProc {
        let proc = Proc::spawn(name, &["--http", "127.0.0.1:0"], env);
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = proc
                .stderr
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("{name} did not start serving HTTP: {e}"));
            let port = line
                .split("serving MCP on http://")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| p.trim().parse().ok());
            if let Some(port) = port {
                return HttpProc { proc, port };
            }
        }
    }

    pub(crate) fn open_session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bad-input", "version": "1"}}})
        .to_string();
        let headers = base_headers(Some(""), b"")
            .into_iter()
            .filter(|(n, _)| n != "Mcp-Session-Id" && n != "MCP-Protocol-Version")
            .collect::<Vec<_>>();
        let reply = self
            .exchange(&headers, init.as_bytes(), false)
            .expect("initialize");
        assert_eq!(reply.status, 200, "initialize");
        let id = reply
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("mcp-session-id"))
            .map(|(_, v)| v.clone())
            .expect("a session id");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let reply = self
            .exchange(&base_headers(Some(&id), b""), note.as_bytes(), false)
            .expect("notifications/initialized");
        assert_eq!(reply.status, 202, "notifications/initialized");
        id
    }

    /// POSTs `body` to `/mcp`; returns the status and the JSON-RPC messages of the response
    /// (its JSON body, or the data of its SSE events).
    pub(crate) fn post(
        &self,
        headers: &[(String, String)],
        body: &[u8],
        chunked: bool,
    ) -> Result<(u16, Vec<Vec<u8>>), String> {
        let HttpReply {
            status,
            headers: head,
            body,
        } = self.exchange(headers, body, chunked)?;
        let sse = head.iter().any(|(n, v)| {
            n.eq_ignore_ascii_case("content-type") && v.contains("text/event-stream")
        });
        let messages = if sse {
            String::from_utf8_lossy(&body)
                .split("\n\n")
                .filter_map(|event| {
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|d| d.strip_prefix(' ').unwrap_or(d))
                        .collect();
                    (!data.is_empty() && !data.concat().trim().is_empty())
                        .then(|| data.join("\n").into_bytes())
                })
                .collect()
        } else if body.iter().all(u8::is_ascii_whitespace) {
            Vec::new()
        } else {
            vec![body]
        };
        Ok((status, messages))
    }

    /// One request on a new connection. The body is written on a thread, so a server that
    /// answers (413) before reading it all is heard instead of deadlocking the writer.
    fn exchange(
        &self,
        headers: &[(String, String)],
        body: &[u8],
        chunked: bool,
    ) -> Result<HttpReply, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).ok();
        let mut head = "POST /mcp HTTP/1.1\r\n".to_owned();
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        } else {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        let mut wire = head.into_bytes();
        if chunked {
            for chunk in body.chunks(64 * 1024) {
                wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                wire.extend_from_slice(chunk);
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend_from_slice(b"0\r\n\r\n");
        } else {
            wire.extend_from_slice(body);
        }
        let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
        let write = std::thread::spawn(move || {
            // The server may close early (413): a reset write is not the test's failure.
            let _ = writer.write_all(&wire);
            let _ = writer.flush();
        });
        stream.set_read_timeout(Some(TIMEOUT)).ok();
        let mut raw = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset && !raw.is_empty() => break,
                Err(e) => return Err(format!("reading the response: {e}")),
            }
        }
        let _ = stream.shutdown(std::net::Shutdown::Both);
        let _ = write.join();
        parse_response(&raw)
    }
}

/// A whole HTTP response.
struct HttpReply {
    status: u16,
    headers: Headers,
    body: Vec<u8>,
}

fn parse_response(raw: &[u8]) -> Result<HttpReply, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no response head in {} bytes", raw.len()))?;
    let text = String::from_utf8_lossy(&raw[..end]);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("bad status line")?;
    let headers: Headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    if chunked {
        let mut out = Vec::new();
        let mut rest = &body[..];
        while let Some(i) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = std::str::from_utf8(&rest[..i]).unwrap_or("");
            let size = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| format!("bad chunk size {size:?}"))?;
            rest = &rest[i + 2..];
            if size == 0 || rest.len() < size {
                out.extend_from_slice(&rest[..size.min(rest.len())]);
                break;
            }
            out.extend_from_slice(&rest[..size]);
            rest = rest.get(size + 2..).unwrap_or(&[]);
        }
        body = out;
    }
    Ok(HttpReply {
        status,
        headers,
        body,
    })
}

impl Proc {
    /// Writes `bytes` and a newline to stdin; an error (the server closed stdin) is returned.
    pub fn send_bytes_line(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin closed"))?;
        stdin.write_all(bytes)?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// The next raw stdout line, waiting at most `wait`.
    pub fn next_line(&mut self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }
}
