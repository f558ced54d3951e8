//! The skills extension's methods (SEP-2640): `skills/list`, `skills/get`,
//! `resources/directory/read`, and `resources/read` of skill files. The catalog behind them
//! is scanned once at build (`crate::skills`); these only look it up, so every answer but a
//! file read is immediate.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use super::connection::{Connection, Step};
use super::era::{Cache, Scope};
use super::handler::{ListPage, Outcome, cursor_of, params_of, reply, run};
use super::resources::{check_uri_length, read_resource};
use crate::protocol::params::{Body, Request};
use crate::protocol::{McpError, ResourceContents};
use crate::registry::page_of;
use crate::skills::SkillCatalog;

/// `skills/list`: the entries, paged like the other lists (an entry is never split).
pub(super) fn list_skills(conn: &Connection, scope: &Scope, req: &Request) -> Step {
    let Some(skills) = catalog(conn) else {
        return not_served(scope, req);
    };
    let cursor = match cursor_of(req) {
        Ok(c) => c,
        Err(e) => return Step::Reply(scope.err(&req.id, e)),
    };
    page(
        conn,
        scope,
        req,
        "skills",
        skills.entries(),
        cursor.as_deref(),
    )
}

/// `skills/get {uri}`: one entry, as `skills/list` has it; -32602 for a URI that is not a
/// skill's `SKILL.md`.
pub(super) fn get_skill(conn: &Connection, scope: &Scope, req: &Request) -> Step {
    let Some(skills) = catalog(conn) else {
        return not_served(scope, req);
    };
    #[derive(Serialize)]
    struct GetSkillResult<'a> {
        skill: &'a RawValue,
    }
    let params = params_of!(scope, req, Body::Uri);
    match skills.entry(&params.uri) {
        Some(skill) => reply(conn, scope, req, &GetSkillResult { skill }, Cache::Listing),
        None => Step::Reply(scope.err(
            &req.id,
            McpError::invalid_params(format!("Unknown skill: {}", params.uri)),
        )),
    }
}

/// `resources/directory/read {uri, cursor?}`: the direct children of a skill directory;
/// -32602 for anything that is not one (a file, an unknown URI).
pub(super) fn read_directory(conn: &Connection, scope: &Scope, req: &Request) -> Step {
    let Some(skills) = catalog(conn) else {
        return not_served(scope, req);
    };
    let params = params_of!(scope, req, Body::Directory);
    match skills.directory(&params.uri) {
        Some(children) => page(
            conn,
            scope,
            req,
            "resources",
            children,
            params.cursor.as_deref(),
        ),
        None => Step::Reply(scope.err(
            &req.id,
            McpError::invalid_params(format!("Not a directory resource: {}", params.uri)),
        )),
    }
}

/// The server's skills (the dispatcher routes here only when it has some).
fn catalog(conn: &Connection) -> Option<&Arc<SkillCatalog>> {
    conn.server.inner.skills.as_ref()
}

fn not_served(scope: &Scope, req: &Request) -> Step {
    Step::Reply(scope.err(&req.id, McpError::method_not_found(&req.method)))
}

fn page(
    conn: &Connection,
    scope: &Scope,
    req: &Request,
    key: &'static str,
    items: &[Box<RawValue>],
    cursor: Option<&str>,
) -> Step {
    let page_size = conn.server.inner.limits.page_size;
    // The set is fixed at build: its length is a sufficient fingerprint.
    let Some((items, next_cursor)) = page_of(items, items.len() as u64, cursor, page_size) else {
        return Step::Reply(scope.err(&req.id, McpError::invalid_params("Invalid cursor")));
    };
    let body = ListPage {
        key,
        items: items.iter().map(|i| &**i).collect(),
        next_cursor,
    };
    reply(conn, scope, req, &body, Cache::Listing)
}

/// The result of reading a skill file.
#[derive(Serialize)]
struct SkillFileContents {
    contents: Vec<ResourceContents>,
}

impl Outcome for SkillFileContents {}

/// `resources/read`: a skill file when `uri` is one, else the registered resources (or
/// not found when there are none).
pub(super) fn read(
    conn: &Arc<Connection>,
    scope: Scope,
    req: Request,
    has_resources: bool,
) -> Step {
    let Some(skills) = catalog(conn) else {
        return not_served(&scope, &req);
    };
    let uri = params_of!(scope, req, Body::Uri).uri.clone();
    let Some(file) = skills.file(&uri).cloned() else {
        if has_resources {
            return read_resource(conn, scope, req);
        }
        if let Err(e) = check_uri_length(conn, &uri) {
            return Step::Reply(scope.err(&req.id, e));
        }
        return Step::Reply(scope.err(&req.id, crate::resource::not_found(&uri, None)));
    };
    let skills = skills.clone();
    run(
        conn,
        scope,
        &req.id,
        "resources/read",
        Cache::Listing,
        move |_ctx| {
            Box::pin(async move {
                let bytes =
                    tokio::task::spawn_blocking(move || skills.read(&file).map(|b| (b, file)))
                        .await
                        .map_err(|_| McpError::internal("reading a skill file failed"))?
                        .map_err(|why| {
                            tracing::warn!(%why, "skill file refused");
                            McpError::internal(format!("Cannot read {uri}: {why}"))
                        })?;
                let (bytes, file) = bytes;
                let content = if file.is_text {
                    ResourceContents::Text {
                        uri,
                        mime_type: Some(file.mime.into()),
                        text: String::from_utf8(bytes)
                            .map_err(|_| McpError::internal("not UTF-8"))?,
                        meta: serde_json::Map::new(),
                    }
                } else {
                    ResourceContents::blob(uri, &bytes, file.mime)
                };
                Ok(SkillFileContents {
                    contents: vec![content],
                })
            })
        },
    )
}
