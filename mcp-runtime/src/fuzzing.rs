//! Entry points for the fuzz targets in `fuzz/` (compiled only with the `fuzzing` feature):
//! thin wrappers that call the crate-private functions a transport calls, so that a target
//! drives the real code with untrusted input. Not a public API: it changes with the runtime.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use crate::Server;
use crate::protocol::LogLevel;
use crate::protocol::params;
use crate::protocol::{ProtocolVersion, RequestId};
use crate::request::Sink;
use crate::request::{ClientInfo, ReplyKind};
use crate::request_state::seal::{Binding, Sealed, Sealer};
use crate::server::connection::{Arrival, Connection, Step, Wire};
use crate::server::envelope::Message;
use crate::server::{dispatch, envelope, era};
use crate::transport::http::sessions::{Session, Sessions};
use crate::transport::http::stateless;

/// What the envelope decoder (`server::envelope::decode`, crate-private) made of one message.
#[derive(Debug)]
pub enum Decoded {
    /// A request, with the parts of its head the runtime reads before any handler.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its params, as sent.
        params: Option<String>,
        /// Whether its params carry a `_meta` the envelope parsed.
        has_head: bool,
        /// Whether its params do not fit its method (it is refused before any check).
        invalid: bool,
        /// What the scope checks read: `(lookup, name)` of each tool, prompt, resource or
        /// template it uses (see `protocol/params.rs`).
        targets: Vec<(String, String)>,
        /// Whether `_meta` names a protocol version (a 2026-07-28 request).
        stateless: bool,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params, as sent.
        params: Option<String>,
    },
    /// A response to a server-to-client request.
    Response {
        /// Its id.
        id: RequestId,
        /// `result` (true) or `error` (false).
        ok: bool,
    },
    /// Not a message; what a transport answers with.
    Error {
        /// The id the error is sent under.
        id: Option<RequestId>,
        /// A malformed notification gets no answer.
        notification: bool,
        /// The JSON-RPC error code.
        code: i32,
    },
}

/// Decodes one message as every transport does (`server/envelope.rs`).
pub fn decode(text: &str) -> Decoded {
    match envelope::decode(text) {
        Ok(env) => {
            let stateless = env.is_stateless();
            match env.message {
                Message::Request(r) => Decoded::Request {
                    // The raw member, read by the envelope alone (the decode keeps no text).
                    params: match crate::protocol::jsonrpc::decode(text) {
                        Ok(crate::protocol::jsonrpc::Incoming::Request(raw)) => {
                            raw.params.map(|p| p.get().to_owned())
                        }
                        _ => None,
                    },
                    has_head: r.params.meta.is_some(),
                    invalid: matches!(r.params.body, params::Body::Invalid(_)),
                    targets: r
                        .targets()
                        .into_iter()
                        .map(|(lookup, name)| (lookup.to_owned(), name.to_owned()))
                        .collect(),
                    id: r.id,
                    method: r.method.into_owned(),
                    stateless,
                },
                Message::Notification(n) => Decoded::Notification {
                    method: n.method.into_owned(),
                    params: n.params.map(|p| p.get().to_owned()),
                },
                Message::Response(r) => Decoded::Response {
                    id: r.id,
                    ok: r.outcome.is_ok(),
                },
            }
        }
        Err(e) => Decoded::Error {
            id: e.id,
            notification: e.notification,
            code: e.error.code.0,
        },
    }
}

/// A response the dispatcher will produce later (a request that runs as a task).
pub type Later = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'static>>;

/// What the dispatcher did with one message.
pub enum Sent {
    /// Answered at once.
    Reply(Vec<u8>),
    /// Runs as a task; its response (if any) comes when it completes.
    Later(Later),
    /// No answer (a notification or a client response).
    Nothing,
}

fn sent(step: Step) -> Sent {
    match step {
        Step::Reply(r) => Sent::Reply(r.bytes),
        Step::Run(pending) => Sent::Later(Box::pin(async move { pending.await.map(|r| r.bytes) })),
        Step::Nothing => Sent::Nothing,
    }
}

/// One in-process connection to a server, driven with raw message text as a transport does
/// (`server/dispatch.rs::on_message`). What the server sends on its own (notifications,
/// requests to the client) is kept for [`Harness::take_outbound`].
pub struct Harness {
    conn: Arc<Connection>,
    outbound: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Harness {
    /// A connection like stdio's (sessions open with `initialize`; 2026-07-28 `_meta` works too).
    pub fn new(server: Server) -> Harness {
        let outbound: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let kept = outbound.clone();
        let sink = Sink::new(move |bytes| {
            kept.lock().expect("outbound lock").push(bytes);
            true
        });
        Harness {
            conn: Connection::with_sink(server, Wire::IN_PROCESS, sink),
            outbound,
        }
    }

    /// Hands one message (any text, a batch included) to the dispatcher.
    pub fn send(&self, text: &str) -> Sent {
        sent(dispatch::on_message(&self.conn, text))
    }

    /// What the server sent outside responses so far; clears it.
    pub fn take_outbound(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.outbound.lock().expect("outbound lock"))
    }

    /// Requests still running.
    pub fn in_flight(&self) -> usize {
        self.conn.in_flight()
    }

    /// Cancels every running request (as a transport does when the connection ends).
    pub fn cancel_all(&self) {
        self.conn.cancel_all();
    }
}

/// What the 2026-07-28 HTTP checks made of one POST (`transport/http/service.rs::post`).
#[derive(Debug)]
pub struct StatelessChecks {
    /// The method of the request the body holds.
    pub method: String,
    /// `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` against the body:
    /// the error code on a mismatch.
    pub headers: Result<(), i32>,
    /// The era of the request without a session: its version, or the error response.
    pub era: Result<ProtocolVersion, Vec<u8>>,
    /// Its era on a session opened at 2025-11-25.
    pub era_in_session: Result<ProtocolVersion, Vec<u8>>,
}

/// The header pairs that `http` accepts as names and values (hyper refuses the others).
fn header_map(headers: &[(Vec<u8>, Vec<u8>)]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name),
            http::HeaderValue::from_bytes(value),
        ) {
            map.append(n, v);
        }
    }
    map
}

/// Runs the header checks and era resolution on a POST body that decodes as a request with
/// `_meta`, as the HTTP transport does before dispatching; `None` for anything else.
pub fn stateless_checks(
    server: &Server,
    headers: &[(Vec<u8>, Vec<u8>)],
    body: &str,
) -> Option<StatelessChecks> {
    let map = header_map(headers);
    let env = envelope::decode(body).ok()?;
    if !env.is_stateless() {
        return None;
    }
    let req = env.request()?;
    let checked = stateless::check_stateless_headers(&map, req)
        .and_then(|()| stateless::check_param_headers(&map, req, &server.inner))
        .map_err(|e| e.code.0);
    let meta = || req.params.meta.as_deref().cloned();
    let resolve = |session| {
        era::resolve(&req.id, meta(), session)
            .map(|scope| scope.client.version)
            .map_err(|reply| {
                let status = stateless::stateless_status(&reply);
                debug_assert!(
                    !matches!(reply.kind, ReplyKind::Result),
                    "an era error is an error ({status})"
                );
                reply.bytes
            })
    };
    let session = Arc::new(ClientInfo {
        version: ProtocolVersion::V2025_11_25,
        info: None,
        capabilities: Value::Object(Map::new()),
    });
    Some(StatelessChecks {
        method: req.method.to_string(),
        headers: checked,
        era: resolve(None),
        era_in_session: resolve(Some((session, LogLevel::Debug))),
    })
}

/// Hands a stateless (2026-07-28) request to the connection the HTTP transport uses for
/// them, with its headers, after [`stateless_checks`] passed.
pub fn stateless_dispatch(
    conn: &StatelessConn,
    headers: &[(Vec<u8>, Vec<u8>)],
    body: &str,
) -> Sent {
    let map = header_map(headers);
    let Ok(env) = envelope::decode(body) else {
        return sent(dispatch::on_message(&conn.0, body));
    };
    let arrival = Arrival {
        headers: Some(Arc::new(map)),
        ..Arrival::default()
    };
    sent(dispatch::on_envelope(&conn.0, env, arrival))
}

/// The connection an HTTP server shares among its stateless requests.
pub struct StatelessConn(Arc<Connection>);

impl StatelessConn {
    /// Like the HTTP transport's.
    pub fn new(server: Server) -> StatelessConn {
        StatelessConn(Connection::stateless_only(server, Wire::HTTP))
    }
}

/// Seals and opens `requestState` tokens (`request_state/seal.rs`) with a known key, for the audience
/// [`StateSealer::AUDIENCE`], and forges tokens under that key to reach the checks behind the
/// MAC.
pub struct StateSealer {
    key: Vec<u8>,
    sealer: Sealer,
}

/// What a request state carries besides its binding: answers, pending asks, memo.
pub type StateParts = (Map<String, Value>, Map<String, Value>, Map<String, Value>);

impl StateSealer {
    /// The audience its states are for.
    pub const AUDIENCE: &'static str = "fuzz";

    /// A sealer with this key; states live `ttl_secs` (at least one second).
    pub fn new(key: &[u8], ttl_secs: u64) -> StateSealer {
        StateSealer {
            key: key.to_vec(),
            sealer: Sealer::with_key(key, Self::AUDIENCE, Duration::from_secs(ttl_secs)),
        }
    }

    /// The binding digest of a request: its method, params (as sent) and caller; `None` for
    /// params that do not read as a JSON value (such a request gets no state).
    pub fn digest(method: &str, params: Option<&str>, principal: Option<&[u8]>) -> Option<String> {
        Binding::of(method, params, principal)
            .ok()
            .map(|b| b.digest)
    }

    /// Seals a state for this request; `None` for params that do not read as a JSON value.
    pub fn seal(
        &self,
        method: &str,
        params: Option<&str>,
        principal: Option<&[u8]>,
        parts: StateParts,
    ) -> Option<String> {
        let (answers, pending, memo) = parts;
        let binding = Binding::of(method, params, principal).ok()?;
        Some(self.sealer.seal(
            &binding,
            Sealed {
                answers,
                pending,
                memo,
            },
        ))
    }

    /// Opens a state a client sent back with this request; the error message on failure.
    pub fn open(
        &self,
        token: &str,
        method: &str,
        params: Option<&str>,
        principal: Option<&[u8]>,
    ) -> Result<StateParts, String> {
        let binding = Binding::of(method, params, principal).map_err(|e| e.message.into_owned())?;
        self.sealer
            .open(token, &binding)
            .map(|o| (o.sealed.answers, o.sealed.pending, o.sealed.memo))
            .map_err(|e| e.message.into_owned())
    }

    /// A token with a valid MAC over any payload bytes (as only the key holder can make).
    pub fn forge(&self, payload: &[u8]) -> String {
        let mut token = format!("v2.{}.", crate::request_state::seal::key_id(&self.key));
        URL_SAFE_NO_PAD.encode_string(payload, &mut token);
        let tag = hmac_sha256::HMAC::mac(token.as_bytes(), &self.key);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(tag, &mut token);
        token
    }
}

/// Where a GET with `Last-Event-ID` resumes: the stream it names (if the session has it) and
/// the sequence number after which events are replayed.
#[derive(Debug, PartialEq, Eq)]
pub struct Resume {
    /// The stream.
    pub stream: u64,
    /// Replay what came after this event.
    pub after: u64,
}

/// One HTTP session's SSE bookkeeping (`transport/http/sessions/session.rs`): stream ids, event ids,
/// and the reading of `Last-Event-ID`.
pub struct SseSession {
    session: Arc<Session>,
    next_seq: std::sync::atomic::AtomicU64,
}

impl SseSession {
    /// A new session of `server`, as `initialize` over HTTP creates.
    pub fn new(server: &Server) -> SseSession {
        let events: Arc<dyn crate::transport::http::EventStore> =
            Arc::new(crate::transport::http::MemoryEventStore::new(8));
        let sessions = Sessions::new(1, Duration::from_secs(60), events);
        let session = sessions
            .create(server, None, None)
            .unwrap_or_else(|_| unreachable!("one slot, none used"));
        SseSession {
            session,
            next_seq: Default::default(),
        }
    }

    /// Its id.
    pub fn id(&self) -> &str {
        &self.session.id
    }

    /// Opens a stream.
    pub fn new_stream(&self) -> u64 {
        self.session.new_stream()
    }

    /// The next event id on `stream` and its sequence number (increasing across streams, as
    /// a stream's own are).
    pub fn event_id(&self, stream: u64) -> (String, u64) {
        let seq = 1 + self
            .next_seq
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (crate::transport::http::sessions::event_id(stream, seq), seq)
    }

    /// What the GET handler makes of a `Last-Event-ID` value (`Session::resume_point`, which
    /// `service.rs::get` calls).
    pub fn resume(&self, last_event_id: &str) -> Option<Resume> {
        let (stream, after) = self.session.resume_point(last_event_id, false)?;
        Some(Resume { stream, after })
    }
}

/// A checked elicitation form lowered for 2025-06-18 clients (`protocol/form.rs`).
pub fn form_for_2025_06_18(form: &Value) -> Result<Value, String> {
    crate::protocol::form::for_2025_06_18(form)
}

/// The elicitation form of a Rust type, as `Context::elicit` computes it.
pub fn form_schema_of<T: schemars::JsonSchema + 'static>() -> Result<Value, String> {
    crate::protocol::form::form_schema_of::<T>()
}

/// One event of the client's `text/event-stream` parser (`client/sse.rs`, crate-private).
#[derive(Debug, PartialEq, Eq)]
pub struct ClientSseEvent {
    /// Its `event` field.
    pub event: Option<String>,
    /// Its data lines, joined with `\n`.
    pub data: String,
    /// Its `id` field.
    pub id: Option<String>,
}

/// What the client's SSE parser made of a stream fed in the given chunks: the events, up to
/// the first error (an oversized line or event), whether there was one, and the last
/// `retry` the stream asked for.
#[derive(Debug, PartialEq, Eq)]
pub struct ClientSseRead {
    /// The events dispatched, in order.
    pub events: Vec<ClientSseEvent>,
    /// Whether the parser refused the stream (a line or an event over `max` bytes).
    pub refused: bool,
    /// The last reconnection delay asked for, in milliseconds.
    pub retry: Option<u64>,
}

/// Feeds `chunks` to a fresh client SSE parser bounded at `max` bytes.
pub fn client_sse(chunks: &[&[u8]], max: usize) -> ClientSseRead {
    let mut parser = crate::client::sse::SseParser::new(max);
    let mut events = Vec::new();
    let mut refused = false;
    for chunk in chunks {
        let fed = parser.feed(chunk);
        events.extend(fed.events.into_iter().map(|e| ClientSseEvent {
            event: e.event,
            data: e.data,
            id: e.id,
        }));
        if fed.error.is_some() {
            refused = true;
            break;
        }
    }
    ClientSseRead {
        events,
        refused,
        retry: parser.retry,
    }
}

/// One line the client's stdio reader (`client/lines.rs`, crate-private) yielded.
#[derive(Debug, PartialEq, Eq)]
pub struct ClientStdioLine {
    /// The line as yielded to the decoder.
    pub bytes: Vec<u8>,
    /// What it says: `None` for a blank line, the message, or `Err` for a line that is not
    /// JSON (skipped by the client).
    pub read: Option<Result<Value, ()>>,
}

/// What the client's stdio reader made of a child's stdout fed in the given chunks.
#[derive(Debug)]
pub struct ClientStdioRead {
    /// The lines, in order, up to the first refused one.
    pub lines: Vec<ClientStdioLine>,
    /// Whether a line over the bound ended the connection.
    pub refused: bool,
    /// The most bytes the reader held of an unfinished line after any call.
    pub most_held: usize,
}

/// Feeds `chunks` to a fresh stdio line reader bounded at `max` bytes, as the reader task of
/// `client/stdio.rs` does (one chunk per read, the lines of each taken one at a time), then
/// ends the stream.
pub fn client_stdio_lines(chunks: &[&[u8]], max: usize) -> ClientStdioRead {
    use crate::client::lines::{Lines, TooLong, text};
    let mut reader = Lines::new(max);
    let mut read = ClientStdioRead {
        lines: Vec::new(),
        refused: false,
        most_held: 0,
    };
    let line = |bytes: &[u8]| ClientStdioLine {
        bytes: bytes.to_vec(),
        read: text(bytes).map(|t| serde_json::from_str(&t).map_err(drop)),
    };
    for chunk in chunks {
        let mut input = *chunk;
        while !input.is_empty() {
            match reader.next(&mut input) {
                Ok(Some(bytes)) => read.lines.push(line(bytes)),
                Ok(None) => {}
                Err(TooLong) => {
                    read.refused = true;
                    return read;
                }
            }
            read.most_held = read.most_held.max(reader.held());
        }
    }
    if let Some(bytes) = reader.finish() {
        read.lines.push(line(bytes));
    }
    read
}

/// What a [`ClientRouter`]'s transport was handed: the client's messages, and the ids it was
/// told nothing waits for any more.
#[derive(Default)]
struct ClientWire {
    sent: Vec<Value>,
    abandoned: Vec<i64>,
}

/// A transport that keeps what the client sends (`client/core.rs::Link`).
struct RecordingLink(Arc<Mutex<ClientWire>>);

impl crate::client::Link for RecordingLink {
    fn send(
        &self,
        out: crate::client::Outgoing,
    ) -> crate::client::LinkFuture<'_, Result<(), crate::client::ClientError>> {
        let msg = serde_json::from_slice(&out.body).unwrap_or(Value::Null);
        self.0.lock().expect("wire lock").sent.push(msg);
        Box::pin(async { Ok(()) })
    }

    fn abandon(&self, id: i64) {
        self.0.lock().expect("wire lock").abandoned.push(id);
    }

    fn close(&self) -> crate::client::LinkFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// A client's engine (`client/core.rs`) on a transport that keeps what it sends, driven as
/// its router task drives it (`client/router.rs::Core::route`): requests wait for answers
/// under the ids the client allocates, and what the server sends is routed to them.
pub struct ClientRouter {
    core: Arc<crate::client::Core>,
    wire: Arc<Mutex<ClientWire>>,
    rt: &'static tokio::runtime::Runtime,
}

/// The runtime every [`ClientRouter`] runs on (one per process: building one per input would
/// cost more than the input).
fn client_runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}

/// One request of a [`ClientRouter`] waiting for its answer (the future a client call awaits).
pub struct ClientWaiter {
    id: i64,
    call: Option<ClientCall>,
}

type ClientCall = Pin<Box<dyn Future<Output = Result<Value, crate::client::ClientError>> + Send>>;

impl ClientWaiter {
    /// The request's id, as the client sent it.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// Its answer, if it has come (once: `None` after that).
    pub fn poll(&mut self) -> Option<Result<Value, crate::client::ClientError>> {
        let call = self.call.as_mut()?;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match call.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(answer) => {
                self.call = None;
                Some(answer)
            }
            std::task::Poll::Pending => None,
        }
    }
}

impl Default for ClientRouter {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientRouter {
    /// A client in the session era (nothing negotiated yet), with the default limits and no
    /// handlers: the server's requests get the answers a bare client gives.
    pub fn new() -> ClientRouter {
        let rt = client_runtime();
        let wire: Arc<Mutex<ClientWire>> = Arc::default();
        let (core, mut refusals) = crate::client::Core::new(
            Box::new(RecordingLink(wire.clone())),
            crate::client::Handlers::default(),
            Value::Object(Map::new()),
            crate::client::Limits::default(),
        );
        // As `spawn_router` does: the refusals of server requests past the bound are sent
        // by a task of their own.
        let weak = Arc::downgrade(&core);
        rt.spawn(async move {
            while let Some(out) = refusals.recv().await {
                let Some(core) = weak.upgrade() else { return };
                let _ = core.send_within_deadline(out).await;
            }
        });
        ClientRouter { core, wire, rt }
    }

    /// Sends a request under the next id the client allocates; it waits for its answer.
    pub fn request(&self) -> ClientWaiter {
        let core = self.core.clone();
        let id = core.alloc_id();
        let mut waiter = ClientWaiter {
            id,
            call: Some(Box::pin(async move {
                core.request_raw_id(id, "tools/call", serde_json::json!({"name": "t"}), None)
                    .await
            })),
        };
        let _rt = self.rt.enter();
        // The first poll registers it and sends it.
        let answer = waiter.poll();
        debug_assert!(answer.is_none(), "answered before anything was routed");
        waiter
    }

    /// Gives a request up (its deadline passed, or the caller dropped the call).
    pub fn give_up(&self, waiter: ClientWaiter) {
        let _rt = self.rt.enter();
        drop(waiter);
    }

    /// Routes one message (or batch) the transport read, as the links hand it over: as the
    /// text it came as.
    pub fn deliver(&self, msg: Value) {
        let text = serde_json::to_string(&msg).expect("a Value serializes");
        let read = crate::client::peek::read(&text).expect("what was written reads");
        self.rt
            .block_on(self.core.route(crate::client::Inbound::Read(read)));
    }

    /// The transport failed request `id` below JSON-RPC (an HTTP status, a stream cut).
    pub fn fail(&self, id: i64) {
        let error = crate::client::ClientError::transport("the request's stream broke");
        self.rt.block_on(
            self.core
                .route(crate::client::Inbound::Failed { id, error }),
        );
    }

    /// The connection ended: every waiting request fails.
    pub fn connection_closed(&self) {
        let error = crate::client::ClientError::transport("the connection closed");
        self.rt
            .block_on(self.core.route(crate::client::Inbound::Closed(error)));
    }

    /// Lets the tasks the client started run (answers to server requests, cancellations).
    pub fn settle(&self) {
        self.rt.block_on(async {
            for _ in 0..64 {
                tokio::task::yield_now().await;
            }
        });
    }

    /// How many requests wait for an answer in the client's table.
    pub fn pending(&self) -> usize {
        self.core.pending_len()
    }

    /// What the client sent since the last call, and the ids it told the transport nothing
    /// waits for any more.
    pub fn take_wire(&self) -> (Vec<Value>, Vec<i64>) {
        let mut wire = self.wire.lock().expect("wire lock");
        (
            std::mem::take(&mut wire.sent),
            std::mem::take(&mut wire.abandoned),
        )
    }
}
