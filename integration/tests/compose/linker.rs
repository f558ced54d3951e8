//! A server whose results link to its resources and embed them (`compose.rs`'s
//! `links_to_a_mounted_servers_resources_name_them_by_their_mounted_uris`).

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::{PromptMessage, ResourceContents, Role};

/// Today's note.
#[resource("notes://today")]
pub fn today() -> &'static str {
    "water the plants"
}

/// A day's note.
#[resource("notes://day/{n}")]
pub fn day(n: String) -> String {
    format!("note of day {n}")
}

fn embedded(uri: &str) -> Content {
    Content::resource(ResourceContents::text(uri, "water the plants"))
}

/// Links to its own notes, and to a page elsewhere.
#[tool]
pub fn notes() -> Vec<Content> {
    vec![
        Content::text("see the notes"),
        Content::resource_link("notes://today", "today"),
        Content::resource_link("notes://day/3", "day 3"),
        Content::resource_link("https://example.com/notes://today", "the web"),
        Content::resource_link("other://today", "another server's"),
        embedded("notes://today"),
    ]
}

/// Today's note, embedded in a prompt.
#[prompt]
pub fn about_today() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, embedded("notes://today")),
        PromptMessage::new(Role::User, Content::resource_link("notes://day/1", "day 1")),
    ]
}
