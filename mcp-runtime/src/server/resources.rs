//! `resources/list`, `resources/read` (`resources/templates/list` is a plain list page).

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;

use super::connection::{Connection, Step};
use super::era::{Cache, Scope};
use super::handler::{ListPage, Outcome, cursor_of, list_page, params_of, run};
use crate::protocol::params::{Body, Request};
use crate::protocol::{McpError, Resource, ResourceContents};
use crate::registry::{Listed, page_of};
use crate::resource::{ResourceCall, not_found};

/// The result of `resources/read`.
#[derive(Serialize)]
pub(super) struct ReadResourceResult {
    contents: Vec<ResourceContents>,
}

impl Outcome for ReadResourceResult {}

pub(super) fn list_resources(conn: &Arc<Connection>, scope: Scope, req: Request) -> Step {
    let registry = &conn.server.inner.registry;
    let catalog = conn.server.inner.catalog.clone();
    let listers: Vec<fn() -> Vec<Resource>> = registry
        .templates
        .items
        .iter()
        .filter(|t| t.enabled(&catalog))
        .filter_map(|t| t.def.list)
        .collect();
    // Skills add their SKILL.md files (name and description from the frontmatter).
    let skills = conn.server.inner.skills.clone();
    if listers.is_empty() && skills.is_none() {
        return list_page(conn, &scope, &req, "resources", &registry.resources, |r| {
            &r.listing
        });
    }
    // Templates that list their instances make the list dynamic: the listers run on the
    // blocking pool (they typically query a store), then the whole list is paged.
    let cursor = match cursor_of(&req) {
        Ok(c) => c,
        Err(e) => return Step::Reply(scope.err(&req.id, e)),
    };
    let page_size = conn.server.inner.limits.page_size;
    let server = conn.server.clone();
    run(
        conn,
        scope,
        &req.id,
        "resources/list",
        Cache::Data,
        move |_ctx| {
            Box::pin(async move {
                let listed = tokio::task::spawn_blocking(move || {
                    listers
                        .iter()
                        .flat_map(|list| list())
                        .collect::<Vec<Resource>>()
                })
                .await
                .map_err(|_| McpError::internal("listing resources failed"))?;
                let registry = &server.inner.registry;
                let mut all: Vec<Box<RawValue>> = registry
                    .resources
                    .items
                    .iter()
                    .filter(|r| r.enabled(&catalog))
                    .map(|r| r.listing.clone())
                    .collect();
                if let Some(skills) = &skills {
                    all.extend(skills.manifests().iter().cloned());
                }
                for resource in &listed {
                    all.push(
                        serde_json::value::to_raw_value(resource)
                            .map_err(|e| McpError::internal(e.to_string()))?,
                    );
                }
                let fingerprint = all.len() as u64;
                let (items, next_cursor) = page_of(&all, fingerprint, cursor.as_deref(), page_size)
                    .ok_or_else(|| McpError::invalid_params("Invalid cursor"))?;
                Ok(ListPage {
                    key: "resources",
                    items: items.to_vec(),
                    next_cursor,
                })
            })
        },
    )
}

pub(super) fn read_resource(conn: &Arc<Connection>, mut scope: Scope, req: Request) -> Step {
    let uri = params_of!(scope, req, Body::Uri).uri.clone();
    if let Err(e) = check_uri_length(conn, &uri) {
        return Step::Reply(scope.err(&req.id, e));
    }
    let registry = &conn.server.inner.registry;
    let catalog = &conn.server.inner.catalog;
    let (def, variables) = match registry.static_resource(&uri) {
        Some(r) if r.enabled(catalog) => (r.def, HashMap::new()),
        // A disabled resource is not found, even where a template also matches its URI.
        Some(_) => return Step::Reply(scope.err(&req.id, not_found(&uri, None))),
        None => match registry
            .templates
            .items
            .iter()
            .filter(|t| t.enabled(catalog))
            .find_map(|t| t.template.matches(&uri).map(|v| (t.def, v)))
        {
            Some(found) => found,
            None => return Step::Reply(scope.err(&req.id, not_found(&uri, None))),
        },
    };
    if let Err(e) = super::input::open_round(&conn.server.inner, &mut scope, &req, def.context) {
        return Step::Reply(scope.err(&req.id, e));
    }
    let (read, ui) = (
        def.read,
        def.ui.and_then(crate::apps::UiResourceDef::to_meta),
    );
    run(
        conn,
        scope,
        &req.id,
        def.name,
        Cache::Data,
        move |context| {
            let fut = read(ResourceCall {
                context,
                uri: &uri,
                variables: &variables,
            });
            Box::pin(async move {
                let mut contents = fut.await?;
                if let Some(ui) = &ui {
                    crate::apps::decorate(&mut contents, ui);
                }
                Ok(ReadResourceResult { contents })
            })
        },
    )
}

/// -32602 for a URI longer than the server's limit (matching is linear, but a 4 MiB URI
/// tried against every template is still work no real resource needs).
pub(super) fn check_uri_length(conn: &Connection, uri: &str) -> Result<(), McpError> {
    let limit = conn.server.inner.limits.max_uri_bytes;
    if uri.len() > limit {
        return Err(McpError::invalid_params(format!(
            "Resource URI too long: {} bytes; the limit is {limit}",
            uri.len()
        )));
    }
    Ok(())
}

impl Outcome for ListPage<Box<RawValue>> {}
