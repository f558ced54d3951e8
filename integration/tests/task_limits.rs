//! The task store's limits through the HTTP server in this process (issue #27 §2): about
//! 10,000 task calls with a 24 h TTL over 200 sessions, then `DELETE` of the sessions, filled
//! the store, and every task call from anyone was refused for up to a day. Here at small
//! scale: a store of 20 records, 5 per client. A client is its caller (here its address, as
//! no token verifier is configured), whatever session it calls through.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_runtime::prelude::*;
use mcp_runtime::task::{
    MemoryTaskStore, StoreFuture, StoreLimits, TaskRecord, TaskStore, UpdateOutcome,
};
use mcp_runtime::transport::{HttpConfig, serve_http_on};
use serde_json::{Value, json};

/// Done at once: its task is finished when the call answers.
#[tool(task = "optional")]
async fn quick() -> String {
    "done".into()
}

/// Never done: its task stays `working`.
#[tool(task = "optional")]
async fn hold() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

/// A memory store that remembers the ids it was given, to count the records it still holds.
#[derive(Default)]
struct Counted {
    inner: MemoryTaskStore,
    ids: Mutex<Vec<String>>,
}

impl Counted {
    fn held(&self) -> usize {
        let ids = self.ids.lock().unwrap().clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        ids.iter()
            .filter(|id| rt.block_on(self.inner.get(id)).unwrap().is_some())
            .count()
    }
}

impl TaskStore for Counted {
    fn create(&self, record: TaskRecord, limits: StoreLimits) -> StoreFuture<'_, ()> {
        self.ids.lock().unwrap().push(record.id.clone());
        self.inner.create(record, limits)
    }
    fn get(&self, id: &str) -> StoreFuture<'_, Option<TaskRecord>> {
        self.inner.get(id)
    }
    fn put(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        self.inner.put(record)
    }
    fn update(&self, record: TaskRecord) -> StoreFuture<'_, UpdateOutcome> {
        self.inner.update(record)
    }
    fn remove(&self, id: &str) -> StoreFuture<'_, ()> {
        self.inner.remove(id)
    }
    fn list(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreFuture<'_, (Vec<TaskRecord>, bool)> {
        self.inner.list(owner, after, limit)
    }
    fn remove_expired(&self, now: std::time::SystemTime) -> StoreFuture<'_, Vec<String>> {
        self.inner.remove_expired(now)
    }
}

/// A server with room for 20 task records, 5 per client; its port.
fn start(store: Arc<Counted>) -> u16 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            let server = mcp_runtime::Server::builder()
                .name("task-limits")
                .version("1")
                .task_store(store)
                .max_tasks(5, 20)
                .build()
                .unwrap();
            let _ = serve_http_on(server, listener, HttpConfig::default()).await;
        });
    });
    rx.recv().unwrap()
}

/// One client: requests come from `127.0.0.{host}`.
#[derive(Clone, Copy)]
struct Client {
    host: u8,
    port: u16,
}

impl Client {
    fn connect(self) -> TcpStream {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(([127, 0, 0, self.host], 0).into()).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let stream = rt
            .block_on(socket.connect(([127, 0, 0, 1], self.port).into()))
            .unwrap()
            .into_std()
            .unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    }

    /// One exchange: the status, the response head and the body.
    fn send(self, method: &str, session: Option<&str>, body: &str) -> (u16, String, String) {
        let mut req = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n",
            self.port,
            body.len()
        );
        if let Some(session) = session {
            req.push_str(&format!(
                "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            ));
        }
        req.push_str("\r\n");
        req.push_str(body);
        let mut stream = self.connect();
        stream.write_all(req.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        (status, head.to_owned(), body.to_owned())
    }

    /// A 2025-11-25 session (initialized); its id.
    fn open_session(self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "t", "version": "1"},
        }});
        let (status, head, body) = self.send("POST", None, &init.to_string());
        assert_eq!(status, 200, "{head}\n{body}");
        let id = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id:")
                    .map(|v| v.trim().to_owned())
            })
            .expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, ..) = self.send("POST", Some(&id), &initialized.to_string());
        assert_eq!(status, 202);
        id
    }

    /// A request in `session`: its JSON-RPC answer.
    fn call(self, session: &str, method: &str, params: Value) -> Value {
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let (_, head, body) = self.send("POST", Some(session), &req.to_string());
        let data = match body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .next_back()
        {
            Some(event) => event.trim().to_owned(),
            None => body.clone(),
        };
        serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {head}\n{body}"))
    }

    /// `tool` as a task with a 24 h TTL: its id, or the error message.
    fn task(self, session: &str, tool: &str) -> Result<String, String> {
        let answer = self.call(
            session,
            "tools/call",
            json!({"name": tool, "arguments": {}, "task": {"ttl": 86_400_000}}),
        );
        match answer["result"]["task"]["taskId"].as_str() {
            Some(id) => Ok(id.to_owned()),
            None => Err(answer["error"]["message"].as_str().unwrap_or("").to_owned()),
        }
    }

    fn delete(self, session: &str) {
        let (status, head, _) = self.send("DELETE", Some(session), "");
        assert!(status == 200 || status == 204, "{head}");
    }
}

fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The reproduction: one caller, many sessions, each with a task of 24 h, deleted. The
/// sessions' finished tasks go with them, and another client is served.
#[test]
fn deleted_sessions_leave_no_finished_tasks_behind() {
    let store = Arc::new(Counted::default());
    let port = start(store.clone());
    let (flood, other) = (Client { host: 1, port }, Client { host: 2, port });
    for _ in 0..25 {
        let session = flood.open_session();
        flood.task(&session, "quick").unwrap();
        flood.delete(&session);
    }
    eventually("the deleted sessions' finished tasks are removed", || {
        store.held() == 0
    });
    let session = other.open_session();
    other
        .task(&session, "quick")
        .expect("another client is served");
}

/// One caller's sessions are one client: its unfinished tasks across them count against one
/// limit, and a client at its limit does not stop another one.
#[test]
fn one_callers_sessions_count_as_one_client() {
    let store = Arc::new(Counted::default());
    let port = start(store.clone());
    let (busy, other) = (Client { host: 1, port }, Client { host: 2, port });
    let sessions: Vec<String> = (0..6).map(|_| busy.open_session()).collect();
    for session in &sessions[..5] {
        busy.task(session, "hold").unwrap();
    }
    let refused = busy
        .task(&sessions[5], "hold")
        .expect_err("a sixth unfinished task of one caller");
    assert!(refused.contains("too many tasks"), "{refused}");
    let session = other.open_session();
    other
        .task(&session, "hold")
        .expect("another client is served");
}

/// Before a task is refused, finished records make room, the oldest first: the client's own
/// at its limit, anyone's when the store is full.
#[test]
fn finished_tasks_make_room_oldest_first() {
    let store = Arc::new(Counted::default());
    let port = start(store.clone());
    let first = Client { host: 1, port };
    let session = first.open_session();
    let ids: Vec<String> = (0..6)
        .map(|_| first.task(&session, "quick").unwrap())
        .collect();
    let get = |id: &str| first.call(&session, "tasks/get", json!({"taskId": id}));
    assert_eq!(get(&ids[0])["error"]["code"], -32602, "the oldest went");
    assert_eq!(get(&ids[1])["result"]["status"], "completed");
    let listed = first.call(&session, "tasks/list", json!({}));
    assert_eq!(listed["result"]["tasks"].as_array().unwrap().len(), 5);
    assert_eq!(store.held(), 5);
    // Three more clients fill the store with finished tasks (20 records) ...
    for host in 2..=4 {
        let client = Client { host, port };
        let session = client.open_session();
        for _ in 0..5 {
            client.task(&session, "quick").unwrap();
        }
    }
    assert_eq!(store.held(), 20);
    // ... and a fifth one is served: the oldest finished record in the store goes.
    let late = Client { host: 5, port };
    let session = late.open_session();
    late.task(&session, "hold").expect("a full store made room");
    assert_eq!(store.held(), 20);
    assert_eq!(get(&ids[1])["error"]["code"], -32602, "the oldest went");
    assert_eq!(get(&ids[2])["result"]["status"], "completed");
}
