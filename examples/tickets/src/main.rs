//! Run with: `cargo run -p example-tickets` (stdio), then connect any MCP client.
//!
//! The ticket desk: a small issue tracker kept in SQLite, and the next step after the quickstart.
//! It shows tools that change data, a static resource, a resource template whose instances are
//! listed and completed from the database, a file-backed template guarded against path
//! traversal, a prompt that embeds a resource, and a long report that runs as a task.
//!
//! The database is the file named by `TICKETS_DB` (default: `tickets.sqlite3` in the current
//! directory). The first run creates it with a few tickets, numbered from 1.
//!
//! Over HTTP it becomes an OAuth resource server when `MCP_AUTH_ISSUER` and `MCP_AUTH_RESOURCE`
//! are set: queries and reports need the `tickets:read` scope, changes `tickets:write` (and a
//! caller sees only the tools its token allows). Without them, every tool is open, as on stdio.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use mcp_runtime::prelude::*;
use mcp_runtime::resource::resolve_within;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension, Row, ToSql, TransactionBehavior, params};

/// Where a ticket is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    /// Reported, nobody is on it yet.
    Open,
    /// Someone is working on it.
    InProgress,
    /// Done (fixed, or won't be).
    Closed,
}

impl Status {
    /// Every status, in workflow order.
    const ALL: [Status; 3] = [Status::Open, Status::InProgress, Status::Closed];

    /// The name used on the wire and in the database.
    fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::InProgress => "in_progress",
            Status::Closed => "closed",
        }
    }
}

impl ToSql for Status {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for Status {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        Status::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| FromSqlError::Other(format!("unknown ticket status {text:?}").into()))
    }
}

/// A ticket on the desk.
#[derive(Clone, Debug, Serialize, JsonSchema)]
struct Ticket {
    /// Its number, from 1.
    id: u64,
    /// One line saying what is wrong.
    title: String,
    /// The details (may be empty).
    description: String,
    /// Where it stands.
    status: Status,
}

impl Ticket {
    /// The ticket's resource URI, `tickets://{id}`.
    fn uri(&self) -> String {
        format!("tickets://{}", self.id)
    }

    /// A ticket from a row of `SELECT id, title, description, status`.
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Ticket> {
        Ok(Ticket {
            id: row.get("id")?,
            title: row.get("title")?,
            description: row.get("description")?,
            status: row.get("status")?,
        })
    }
}

// ---------- storage ----------

/// The database connection, opened on first use and shared by every request. A `static` for
/// now: injecting shared state into tools (a parameter the server hands them) arrives in a later
/// issue, and will replace it.
static DB: OnceLock<Mutex<Connection>> = OnceLock::new();

/// The path from `TICKETS_DB`, or `tickets.sqlite3` in the current directory.
fn db_path() -> PathBuf {
    std::env::var_os("TICKETS_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("tickets.sqlite3"))
}

/// Opens the database, creating and seeding it on the first run.
fn open() -> rusqlite::Result<Connection> {
    let mut conn = Connection::open(db_path())?;
    // IMMEDIATE: two servers starting on a fresh file at once must not both seed it.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let schema_version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if schema_version == 0 {
        tx.execute_batch(
            "CREATE TABLE tickets (
                 id          INTEGER PRIMARY KEY,
                 title       TEXT NOT NULL,
                 description TEXT NOT NULL DEFAULT '',
                 status      TEXT NOT NULL DEFAULT 'open'
                             CHECK (status IN ('open', 'in_progress', 'closed'))
             );
             PRAGMA user_version = 1;",
        )?;
        let seeds = [
            (
                "Login page times out",
                "Signing in takes over 30 seconds, then fails with a gateway timeout.",
                Status::Open,
            ),
            (
                "CSV export drops the last row",
                "Exported reports are one row short when the table has more than one page.",
                Status::InProgress,
            ),
            (
                "Typo on the pricing page",
                "\"Anual\" should read \"Annual\".",
                Status::Closed,
            ),
            (
                "Dark mode ignores the system setting",
                "The app starts light even when the OS is set to dark.",
                Status::Open,
            ),
        ];
        for (title, description, status) in seeds {
            tx.execute(
                "INSERT INTO tickets (title, description, status) VALUES (?1, ?2, ?3)",
                params![title, description, status],
            )?;
        }
    }
    tx.commit()?;
    Ok(conn)
}

/// The shared connection, opened by the first request that needs it. When the database cannot
/// be opened, each request says why (and the next one tries again).
fn db() -> Result<MutexGuard<'static, Connection>, String> {
    let shared = match DB.get() {
        Some(shared) => shared,
        None => {
            let conn = open().map_err(|e| {
                format!(
                    "cannot open the ticket database {}: {e}",
                    db_path().display()
                )
            })?;
            // Two first requests may both get here: one connection is kept, the other dropped.
            DB.get_or_init(|| Mutex::new(conn))
        }
    };
    // A panic while the lock was held leaves the connection usable (SQLite rolls back an
    // unfinished transaction when it is dropped), so a poisoned lock is not an error here.
    Ok(shared.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The ticket numbered `id`, if there is one.
fn find_ticket(conn: &Connection, id: u64) -> rusqlite::Result<Option<Ticket>> {
    if i64::try_from(id).is_err() {
        return Ok(None); // SQLite numbers rows with i64
    }
    conn.query_row(
        "SELECT id, title, description, status FROM tickets WHERE id = ?1",
        [id],
        Ticket::from_row,
    )
    .optional()
}

/// Every ticket, by number.
fn all_tickets(conn: &Connection) -> rusqlite::Result<Vec<Ticket>> {
    let mut stmt =
        conn.prepare("SELECT id, title, description, status FROM tickets ORDER BY id")?;
    stmt.query_map([], Ticket::from_row)?.collect()
}

/// A storage error as the text a tool result carries.
fn storage(e: rusqlite::Error) -> String {
    format!("the ticket database failed: {e}")
}

/// For `list_tickets`, whose return type has no room for an error: a storage failure panics,
/// which the server turns into an internal error for that request alone.
fn or_panic<T>(result: Result<T, String>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

// ---------- tools ----------
//
// Everything that touches the database is a plain `fn`: the server runs those on the blocking
// pool, so SQLite's blocking calls never stall the async runtime. (`statuses` below touches
// nothing and is an `async fn`.)

/// Query tickets by status.
#[tool(scopes = ["tickets:read"], annotations(read_only, idempotent, open_world = false))]
fn query_tickets_by_status(
    /// The status to look for.
    status: Status,
) -> Result<Vec<Ticket>, String> {
    let conn = db()?;
    let mut stmt = conn
        .prepare("SELECT id, title, description, status FROM tickets WHERE status = ?1 ORDER BY id")
        .map_err(storage)?;
    let tickets = stmt
        .query_map([status], Ticket::from_row)
        .and_then(|rows| rows.collect())
        .map_err(storage)?;
    Ok(tickets)
}

/// Open a new ticket.
#[tool(scopes = ["tickets:write"], annotations(open_world = false))]
fn create_ticket(
    /// One line saying what is wrong.
    title: String,
    /// The details, if any.
    description: Option<String>,
) -> Result<Ticket, String> {
    let title = title.trim();
    if title.is_empty() {
        return Err("a ticket needs a title: `title` is empty".into());
    }
    let description = description.unwrap_or_default();
    let conn = db()?;
    conn.execute(
        "INSERT INTO tickets (title, description, status) VALUES (?1, ?2, ?3)",
        params![title, description, Status::Open],
    )
    .map_err(storage)?;
    Ok(Ticket {
        id: conn
            .last_insert_rowid()
            .try_into()
            .map_err(|_| "the database handed out a negative ticket number".to_owned())?,
        title: title.to_owned(),
        description,
        status: Status::Open,
    })
}

/// Change a ticket's status, title, or both.
#[tool(scopes = ["tickets:write"], annotations(idempotent, open_world = false))]
fn update_ticket(
    /// The ticket's number.
    id: u64,
    /// The new status, if it changes.
    status: Option<Status>,
    /// The new title, if it changes.
    title: Option<String>,
) -> Result<Ticket, String> {
    if status.is_none() && title.is_none() {
        return Err("nothing to change: give a new `status`, a new `title`, or both".into());
    }
    let title = title.map(|t| t.trim().to_owned());
    if title.as_deref() == Some("") {
        return Err("a ticket needs a title: `title` is empty".into());
    }
    let mut conn = db()?;
    let tx = conn.transaction().map_err(storage)?;
    let mut ticket = find_ticket(&tx, id)
        .map_err(storage)?
        .ok_or_else(|| format!("ticket {id} does not exist"))?;
    if let Some(status) = status {
        ticket.status = status;
    }
    if let Some(title) = title {
        ticket.title = title;
    }
    tx.execute(
        "UPDATE tickets SET title = ?1, status = ?2 WHERE id = ?3",
        params![ticket.title, ticket.status, id],
    )
    .map_err(storage)?;
    tx.commit().map_err(storage)?;
    Ok(ticket)
}

/// Export every ticket as a Markdown report, reporting progress ticket by ticket. Runs as a
/// task for clients that support tasks (the call returns at once; poll the task for the report).
#[tool(task = "optional", scopes = ["tickets:read"], annotations(read_only, open_world = false))]
async fn report(
    /// Milliseconds to spend on each ticket (to watch the progress on a small desk).
    #[arg(default = 0)]
    pace_ms: u64,
    ctx: Context,
) -> Result<String, String> {
    // SQLite blocks: read on the blocking pool, then format here.
    let tickets =
        tokio::task::spawn_blocking(|| db().and_then(|c| all_tickets(&c).map_err(storage)))
            .await
            .map_err(|e| format!("the report failed: {e}"))??;
    let total = tickets.len();
    let mut out = format!("# Ticket report\n\n{total} tickets\n\n");
    for (done, ticket) in tickets.iter().enumerate() {
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_millis(pace_ms)) => {}
            _ = ctx.cancelled() => {
                tracing::info!(done, total, "report cancelled");
                return Err(format!("cancelled after {done} of {total} tickets"));
            }
        }
        out.push_str(&format!(
            "- #{} [{}] {}\n",
            ticket.id,
            ticket.status.as_str(),
            ticket.title
        ));
        let message = format!("{} of {total} tickets", done + 1);
        ctx.progress((done + 1) as f64, Some(total as f64), Some(&message));
    }
    Ok(out)
}

// ---------- resources ----------

/// The statuses a ticket can have, in workflow order.
#[resource("tickets://statuses", mime_type = "application/json")]
async fn statuses() -> [Status; 3] {
    Status::ALL
}

/// A ticket by number, as JSON.
#[resource(
    "tickets://{id}",
    mime_type = "application/json",
    list = list_tickets,
    complete(id = complete_ticket_id)
)]
fn ticket(
    /// The ticket's number.
    id: u64,
) -> Result<Option<Ticket>, String> {
    // `Ok(None)` is "resource not found"; `Err` an internal error with its message.
    db().and_then(|conn| find_ticket(&conn, id).map_err(storage))
}

/// Every ticket, for `resources/list`.
fn list_tickets() -> Vec<Resource> {
    or_panic(db().and_then(|conn| all_tickets(&conn).map_err(storage)))
        .into_iter()
        .map(|t| {
            Resource::new(t.uri(), format!("ticket {}", t.id))
                .with_title(t.title.clone())
                .with_description(format!("[{}] {}", t.status.as_str(), t.title))
                .with_mime_type("application/json")
        })
        .collect()
}

/// Ticket numbers that start with what the user typed.
fn complete_ticket_id(req: &CompletionRequest) -> Vec<String> {
    // Suggestions are best effort: a storage failure just means none.
    db().and_then(|conn| all_tickets(&conn).map_err(storage))
        .unwrap_or_default()
        .into_iter()
        .map(|t| t.id.to_string())
        .filter(|id| id.starts_with(&req.value))
        .collect()
}

/// A file attached to tickets, from the `attachments` folder next to the database. The path
/// comes from the client, so it goes through `resolve_within`: `attachments://../secret` is
/// refused, and so is a symbolic link in the folder that leads out of it.
#[resource("attachments://{+path}")]
fn attachment(
    /// The file's path inside the `attachments` folder.
    path: String,
) -> Result<Option<String>, McpError> {
    let base = db_path()
        .parent()
        .map(|p| p.join("attachments"))
        .unwrap_or_else(|| "attachments".into());
    let file = match resolve_within(&base, &path) {
        Ok(file) => file,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(McpError::invalid_params(e.to_string())),
    };
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(McpError::internal(format!(
            "cannot read the attachment: {e}"
        ))),
    }
}

// ---------- prompts ----------

/// Triage a ticket: judge its severity, suggest a status and the next step.
#[prompt(title = "Triage a ticket", complete(id = complete_ticket_id))]
fn triage_ticket(
    /// The ticket to triage.
    id: u64,
) -> Result<GetPromptResult, McpError> {
    let ticket = db()
        .and_then(|conn| find_ticket(&conn, id).map_err(storage))
        .map_err(McpError::internal)?
        .ok_or_else(|| McpError::invalid_params(format!("ticket {id} does not exist")))?;
    let json =
        serde_json::to_string_pretty(&ticket).map_err(|e| McpError::internal(e.to_string()))?;
    Ok(GetPromptResult {
        description: Some(format!("Triage of ticket {id}: {}", ticket.title)),
        messages: vec![
            PromptMessage::user(format!(
                "Please triage ticket {id} below. Say how severe it is (low, medium, high or \
                 critical) and why, whether its status \"{}\" should change, and what the next \
                 step is.",
                ticket.status.as_str()
            )),
            PromptMessage::new(
                Role::User,
                Content::resource(
                    ResourceContents::text(ticket.uri(), json).with_mime_type("application/json"),
                ),
            ),
        ],
    })
}

/// Serves the ticket desk: stdio by default, `--http ADDR` for HTTP.
fn main() {
    mcp_runtime::run!();
}
