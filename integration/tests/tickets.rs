//! The ticket desk example (`examples/tickets`) as a real server process over stdio, in the
//! session era (`initialize`) and the stateless one (2026-07-28, `_meta` on every request), each
//! test on a fresh SQLite file.

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};
use support::Proc;

/// A database path of its own under the temp dir, removed (with any SQLite side files) on drop.
struct TempDb(PathBuf);

impl TempDb {
    fn new() -> TempDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "mcp-tickets-test-{}-{n}.sqlite3",
            std::process::id()
        ));
        let db = TempDb(path);
        db.remove();
        db
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn remove(&self) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let mut side = self.0.clone().into_os_string();
            side.push(suffix);
            let _ = std::fs::remove_file(side);
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        self.remove();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    /// `initialize` first, protocol 2025-11-25.
    Session,
    /// No handshake; 2026-07-28 `_meta` on each request.
    Stateless,
}

const ERAS: [Era; 2] = [Era::Session, Era::Stateless];

/// A ticket desk server on `db`, spoken to in one era, one request at a time.
struct Desk {
    proc: Proc,
    era: Era,
    next_id: i64,
}

impl Desk {
    fn start(db: &TempDb, era: Era) -> Desk {
        let path = db.path().to_str().expect("a UTF-8 temp path");
        let mut proc = Proc::spawn("tickets", &[], &[("TICKETS_DB", path)]);
        if era == Era::Session {
            let init = proc.initialize();
            assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        }
        Desk {
            proc,
            era,
            next_id: 1,
        }
    }

    /// Sends one request and returns the whole response.
    fn send(&mut self, method: &str, mut params: Value) -> Value {
        if self.era == Era::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        self.proc.request(id, method, params);
        let response = self.proc.recv();
        assert_eq!(response["id"], id, "{response}");
        response
    }

    /// The result of a request that must succeed.
    fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.send(method, params);
        assert!(
            response.get("error").is_none(),
            "{:?} {method}: unexpected error {response}",
            self.era
        );
        if self.era == Era::Stateless {
            assert_eq!(response["result"]["resultType"], "complete", "{response}");
        }
        response["result"].clone()
    }

    /// The JSON-RPC error of a request that must fail.
    fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.send(method, params);
        assert!(
            response.get("result").is_none(),
            "{:?} {method}: expected an error, got {response}",
            self.era
        );
        response["error"].clone()
    }

    /// A successful tool result (`isError` absent or false).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.ok("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], true, "{tool}: {result}");
        result
    }

    /// The text of a tool result that must be an `isError` result.
    fn call_fails(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.ok("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_eq!(result["isError"], true, "{tool}: {result}");
        result["content"][0]["text"]
            .as_str()
            .expect("an error text")
            .to_owned()
    }

    /// The one text content of `resources/read`, parsed as JSON.
    fn read_json(&mut self, uri: &str) -> Value {
        let result = self.ok("resources/read", json!({"uri": uri}));
        let contents = result["contents"].as_array().expect("contents");
        assert_eq!(contents.len(), 1, "{result}");
        assert_eq!(contents[0]["uri"], uri, "{result}");
        assert_eq!(contents[0]["mimeType"], "application/json", "{result}");
        serde_json::from_str(contents[0]["text"].as_str().expect("text contents"))
            .expect("JSON text")
    }

    fn complete(&mut self, reference: Value, name: &str, value: &str) -> Value {
        let result = self.ok(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}}),
        );
        result["completion"].clone()
    }
}

/// The ids of a list of tickets.
fn ids(tickets: &Value) -> Vec<u64> {
    tickets
        .as_array()
        .expect("a list of tickets")
        .iter()
        .map(|t| t["id"].as_u64().expect("an id"))
        .collect()
}

fn uris(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r[field].as_str().expect("a string").to_owned())
        .collect()
}

#[test]
fn first_run_creates_and_seeds_the_database() {
    let db = TempDb::new();
    assert!(!db.path().exists());
    let mut desk = Desk::start(&db, Era::Session);
    let open = desk.call("query_tickets_by_status", json!({"status": "open"}));
    assert_eq!(ids(&open["structuredContent"]["result"]), [1, 4]);
    drop(desk);

    assert!(
        db.path().exists(),
        "the server created {}",
        db.path().display()
    );
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    let rows: Vec<(i64, String, String)> = conn
        .prepare("SELECT id, title, status FROM tickets ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let numbers: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        numbers,
        [1, 2, 3, 4],
        "seeded and numbered from 1: {rows:?}"
    );
    let statuses: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(statuses, ["open", "in_progress", "closed", "open"]);
    assert!(rows.iter().all(|r| !r.1.is_empty()), "{rows:?}");
}

#[test]
fn data_persists_across_server_runs() {
    let db = TempDb::new();
    let mut desk = Desk::start(&db, Era::Session);
    let created = desk.call(
        "create_ticket",
        json!({"title": "Survives a restart", "description": "Written by the first run."}),
    );
    assert_eq!(created["structuredContent"]["id"], 5);
    desk.call("update_ticket", json!({"id": 2, "status": "closed"}));
    drop(desk);

    for era in ERAS {
        let mut desk = Desk::start(&db, era);
        let ticket = desk.read_json("tickets://5");
        assert_eq!(
            ticket,
            json!({"id": 5, "title": "Survives a restart", "description": "Written by the first run.", "status": "open"}),
            "{era:?}"
        );
        assert_eq!(desk.read_json("tickets://2")["status"], "closed", "{era:?}");
        let open = desk.call("query_tickets_by_status", json!({"status": "open"}));
        assert_eq!(
            ids(&open["structuredContent"]["result"]),
            [1, 4, 5],
            "{era:?}"
        );
        let listed = desk.ok("resources/list", json!({}));
        assert_eq!(
            uris(&listed, "resources", "uri").len(),
            6,
            "{era:?}: statuses and five tickets"
        );
    }
}

#[test]
fn tools_query_create_and_update_in_both_eras() {
    for era in ERAS {
        let db = TempDb::new();
        let mut desk = Desk::start(&db, era);

        let list = desk.ok("tools/list", json!({}));
        let mut names = uris(&list, "tools", "name");
        names.sort();
        assert_eq!(
            names,
            [
                "create_ticket",
                "query_tickets_by_status",
                "report",
                "update_ticket"
            ],
            "{era:?}"
        );
        let query = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "query_tickets_by_status")
            .unwrap();
        assert_eq!(query["description"], "Query tickets by status.");
        assert_eq!(
            query["inputSchema"]["properties"]["status"]["enum"],
            json!(["open", "in_progress", "closed"])
        );
        assert_eq!(query["inputSchema"]["required"], json!(["status"]));

        // Query: a list comes back as structuredContent {"result": [...]}, and as JSON text.
        let r = desk.call("query_tickets_by_status", json!({"status": "in_progress"}));
        let tickets = &r["structuredContent"]["result"];
        assert_eq!(ids(tickets), [2], "{era:?}: {r}");
        assert_eq!(tickets[0]["status"], "in_progress");
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(&text, tickets, "{era:?}");
        let r = desk.call("query_tickets_by_status", json!({"status": "closed"}));
        assert_eq!(ids(&r["structuredContent"]["result"]), [3], "{era:?}");

        // Create, then read it back as a resource.
        let r = desk.call(
            "create_ticket",
            json!({"title": "  Printer on fire  ", "description": "Smoke from tray 2."}),
        );
        let created = r["structuredContent"].clone();
        assert_eq!(
            created,
            json!({"id": 5, "title": "Printer on fire", "description": "Smoke from tray 2.", "status": "open"}),
            "{era:?}"
        );
        assert_eq!(desk.read_json("tickets://5"), created, "{era:?}");
        let r = desk.call("create_ticket", json!({"title": "No details"}));
        assert_eq!(
            (
                r["structuredContent"]["id"].clone(),
                r["structuredContent"]["description"].clone()
            ),
            (json!(6), json!("")),
            "{era:?}"
        );

        // Update the status, then the title; each is read back.
        let r = desk.call("update_ticket", json!({"id": 5, "status": "in_progress"}));
        assert_eq!(r["structuredContent"]["status"], "in_progress", "{era:?}");
        assert_eq!(r["structuredContent"]["title"], "Printer on fire");
        let r = desk.call(
            "update_ticket",
            json!({"id": 5, "title": "Printer on fire (tray 2)"}),
        );
        assert_eq!(
            r["structuredContent"],
            json!({"id": 5, "title": "Printer on fire (tray 2)", "description": "Smoke from tray 2.", "status": "in_progress"}),
            "{era:?}"
        );
        assert_eq!(
            desk.read_json("tickets://5"),
            r["structuredContent"],
            "{era:?}"
        );
        let r = desk.call("query_tickets_by_status", json!({"status": "in_progress"}));
        assert_eq!(ids(&r["structuredContent"]["result"]), [2, 5], "{era:?}");

        // Failures are isError results the model can read.
        let text = desk.call_fails("query_tickets_by_status", json!({"status": "stuck"}));
        assert!(text.contains("`status`"), "{era:?}: {text}");
        let text = desk.call_fails("update_ticket", json!({"id": 99, "status": "closed"}));
        assert_eq!(text, "ticket 99 does not exist", "{era:?}");
        let text = desk.call_fails("update_ticket", json!({"id": 1}));
        assert!(text.contains("nothing to change"), "{era:?}: {text}");
        let text = desk.call_fails("update_ticket", json!({"id": 1, "status": "paused"}));
        assert!(text.contains("`status`"), "{era:?}: {text}");
        let text = desk.call_fails("create_ticket", json!({"title": "   "}));
        assert!(text.contains("title"), "{era:?}: {text}");
        let text = desk.call_fails("create_ticket", json!({}));
        assert!(text.contains("`title`"), "{era:?}: {text}");
        assert_eq!(
            desk.read_json("tickets://1")["status"],
            "open",
            "{era:?}: failed calls changed nothing"
        );
    }
}

#[test]
fn resources_list_and_read_in_both_eras() {
    for era in ERAS {
        let db = TempDb::new();
        let mut desk = Desk::start(&db, era);

        let list = desk.ok("resources/list", json!({}));
        assert_eq!(
            uris(&list, "resources", "uri"),
            [
                "tickets://statuses",
                "tickets://1",
                "tickets://2",
                "tickets://3",
                "tickets://4"
            ],
            "{era:?}"
        );
        let statuses = &list["resources"][0];
        assert_eq!(statuses["mimeType"], "application/json");
        assert_eq!(
            statuses["description"],
            "The statuses a ticket can have, in workflow order."
        );
        for r in &list["resources"].as_array().unwrap()[1..] {
            assert_eq!(r["mimeType"], "application/json", "{r}");
            assert!(
                r["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{r}"
            );
        }

        // A new ticket shows up in the list.
        desk.call("create_ticket", json!({"title": "Listed"}));
        let list = desk.ok("resources/list", json!({}));
        assert_eq!(
            uris(&list, "resources", "uri").last().unwrap(),
            "tickets://5"
        );

        let templates = desk.ok("resources/templates/list", json!({}));
        assert_eq!(
            uris(&templates, "resourceTemplates", "uriTemplate"),
            ["attachments://{+path}", "tickets://{id}"],
            "{era:?}"
        );
        assert_eq!(
            templates["resourceTemplates"][1]["mimeType"],
            "application/json"
        );

        assert_eq!(
            desk.read_json("tickets://statuses"),
            json!(["open", "in_progress", "closed"]),
            "{era:?}"
        );
        let one = desk.read_json("tickets://1");
        assert_eq!(
            (one["id"].clone(), one["status"].clone()),
            (json!(1), json!("open")),
            "{era:?}"
        );
        assert!(one["title"].as_str().is_some_and(|t| !t.is_empty()));

        // Missing: "resource not found", -32002 in the session era and -32602 in 2026-07-28,
        // with the URI in data either way.
        let code = match era {
            Era::Session => -32002,
            Era::Stateless => -32602,
        };
        for uri in [
            "tickets://99",
            "tickets://abc",
            "tickets://18446744073709551615",
        ] {
            let e = desk.err("resources/read", json!({"uri": uri}));
            assert_eq!(e["code"], code, "{era:?} {uri}: {e}");
            assert_eq!(e["data"], json!({"uri": uri}), "{era:?} {uri}: {e}");
        }
    }
}

#[test]
fn prompts_list_and_get_in_both_eras() {
    for era in ERAS {
        let db = TempDb::new();
        let mut desk = Desk::start(&db, era);

        let list = desk.ok("prompts/list", json!({}));
        assert_eq!(uris(&list, "prompts", "name"), ["triage_ticket"], "{era:?}");
        assert_eq!(
            list["prompts"][0]["arguments"],
            json!([{"name": "id", "description": "The ticket to triage.", "required": true}]),
            "{era:?}"
        );

        let got = desk.ok(
            "prompts/get",
            json!({"name": "triage_ticket", "arguments": {"id": "1"}}),
        );
        assert!(
            got["description"]
                .as_str()
                .is_some_and(|d| d.contains("ticket 1")),
            "{got}"
        );
        let messages = got["messages"].as_array().expect("messages");
        assert_eq!(messages.len(), 2, "{era:?}: {got}");
        assert_eq!(messages[0]["role"], "user");
        assert_eq!(messages[0]["content"]["type"], "text");
        assert!(
            messages[0]["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("triage")),
            "{got}"
        );
        assert_eq!(messages[1]["role"], "user");
        let embedded = &messages[1]["content"];
        assert_eq!(embedded["type"], "resource", "{era:?}: {got}");
        assert_eq!(embedded["resource"]["uri"], "tickets://1");
        let ticket: Value =
            serde_json::from_str(embedded["resource"]["text"].as_str().unwrap()).unwrap();
        assert_eq!(ticket, desk.read_json("tickets://1"), "{era:?}");

        for (arguments, what) in [
            (json!({}), "Missing required argument `id`"),
            (json!({"id": "one"}), "Invalid argument `id`"),
            (json!({"id": "99"}), "ticket 99 does not exist"),
        ] {
            let e = desk.err(
                "prompts/get",
                json!({"name": "triage_ticket", "arguments": arguments}),
            );
            assert_eq!(e["code"], -32602, "{era:?} {arguments}: {e}");
            assert!(
                e["message"].as_str().is_some_and(|m| m.contains(what)),
                "{era:?} {arguments}: {e}"
            );
        }
        let e = desk.err("prompts/get", json!({"name": "triage_ticket"}));
        assert_eq!(e["code"], -32602, "{era:?}: no arguments at all: {e}");
    }
}

#[test]
fn completion_of_ticket_ids_in_both_eras() {
    for era in ERAS {
        let db = TempDb::new();
        let mut desk = Desk::start(&db, era);
        let template = json!({"type": "ref/resource", "uri": "tickets://{id}"});
        let prompt = json!({"type": "ref/prompt", "name": "triage_ticket"});

        for reference in [&template, &prompt] {
            let c = desk.complete(reference.clone(), "id", "1");
            assert_eq!(
                c,
                json!({"values": ["1"], "total": 1, "hasMore": false}),
                "{era:?} {reference}"
            );
        }
        for n in 5..=12 {
            let r = desk.call("create_ticket", json!({"title": format!("ticket {n}")}));
            assert_eq!(r["structuredContent"]["id"], n);
        }
        for reference in [&template, &prompt] {
            let c = desk.complete(reference.clone(), "id", "1");
            assert_eq!(
                c,
                json!({"values": ["1", "10", "11", "12"], "total": 4, "hasMore": false}),
                "{era:?} {reference}"
            );
            let c = desk.complete(reference.clone(), "id", "");
            assert_eq!(c["total"], 12, "{era:?} {reference}: {c}");
            assert_eq!(c["values"].as_array().unwrap().len(), 12);
            let c = desk.complete(reference.clone(), "id", "7x");
            assert_eq!(
                c,
                json!({"values": [], "total": 0, "hasMore": false}),
                "{era:?}"
            );
        }
    }
}

#[test]
fn attachments_are_served_from_beside_the_database_and_guarded() {
    let db = TempDb::new();
    let dir = db
        .path()
        .parent()
        .unwrap()
        .join("attachments")
        .join(format!("t{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("note.txt"), "first note").unwrap();
    let rel = format!("t{}/note.txt", std::process::id());
    for era in ERAS {
        let mut desk = Desk::start(&db, era);
        let result = desk.ok(
            "resources/read",
            json!({"uri": format!("attachments://{rel}")}),
        );
        assert_eq!(result["contents"][0]["text"], "first note", "{era:?}");
        let missing = desk.err(
            "resources/read",
            json!({"uri": "attachments://nope/none.txt"}),
        );
        let expected = if era == Era::Session { -32002 } else { -32602 };
        assert_eq!(missing["code"], expected, "{era:?}");
        let escape = desk.err(
            "resources/read",
            json!({"uri": "attachments://../etc/passwd"}),
        );
        assert_eq!(escape["code"], -32602, "{era:?}: {escape}");
        assert!(
            escape["message"].as_str().unwrap().contains(".."),
            "{escape}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
