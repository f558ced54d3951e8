//! Resources and resource templates: URI templates, how return values become contents, and the
//! path-traversal guard. The registration record `#[resource]` emits is hidden plumbing, reached
//! by the generated code through `__private`.

mod output;
mod path;
mod template;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

pub use output::{NotFound, ResourceOutput, not_found};
#[doc(hidden)]
pub use output::{
    ResourceReturnProbe, ResourceViaOptionOutput, ResourceViaOptionSerde, ResourceViaOutput,
    ResourceViaResultOptionOutput, ResourceViaResultOptionSerde, ResourceViaResultOutput,
    ResourceViaResultSerde, ResourceViaSerde, ResourceViaUnsupported, ReturnedFromResource,
};
pub use path::{PathError, resolve_within, safe_join};
pub use template::{TemplateError, UriTemplate, percent_decode};

use crate::completion::CompleteFn;
use crate::protocol::{McpError, Resource, ResourceContents};
use crate::request::Context;
use crate::tool::{IconDef, MetaValue};

/// The future a resource adapter returns.
#[doc(hidden)]
pub type ResourceFuture =
    Pin<Box<dyn Future<Output = Result<Vec<ResourceContents>, McpError>> + Send + 'static>>;

/// What the dispatcher hands a resource adapter.
#[doc(hidden)]
pub struct ResourceCall<'a> {
    /// The request's context.
    pub context: Context,
    /// The URI being read.
    pub uri: &'a str,
    /// The template's variables, percent-decoded (absent optional ones are missing).
    pub variables: &'a HashMap<String, String>,
}

/// `annotations(...)` of a resource.
#[derive(Clone, Copy, Debug, Default)]
#[doc(hidden)]
pub struct ResourceAnnotationsDef {
    /// `"user"` and/or `"assistant"`.
    pub audience: &'static [&'static str],
    /// 0 (least) to 1 (most important).
    pub priority: Option<f64>,
    /// ISO 8601 time of the last change.
    pub last_modified: Option<&'static str>,
}

impl ResourceAnnotationsDef {
    pub(crate) fn to_annotations(self) -> Option<crate::protocol::Annotations> {
        use crate::protocol::Role;
        if self.audience.is_empty() && self.priority.is_none() && self.last_modified.is_none() {
            return None;
        }
        Some(crate::protocol::Annotations {
            audience: (!self.audience.is_empty()).then(|| {
                self.audience
                    .iter()
                    .map(|a| {
                        if *a == "assistant" {
                            Role::Assistant
                        } else {
                            Role::User
                        }
                    })
                    .collect()
            }),
            priority: self.priority,
            last_modified: self.last_modified.map(str::to_owned),
        })
    }
}

/// Everything `#[resource]` knows about one resource or template, as constant data.
#[doc(hidden)]
pub struct ResourceDef {
    /// The URI, or an RFC 6570 template when it has `{variables}`.
    pub uri: &'static str,
    /// The name (default: the fn's).
    pub name: &'static str,
    /// Display name.
    pub title: Option<&'static str>,
    /// Description (from the doc comment unless overridden).
    pub description: Option<&'static str>,
    /// MIME type of the contents.
    pub mime_type: Option<&'static str>,
    /// Size in bytes, when known (static resources).
    pub size: Option<u64>,
    /// Hints.
    pub annotations: ResourceAnnotationsDef,
    /// Icons.
    pub icons: &'static [IconDef],
    /// `_meta` entries.
    pub meta: &'static [(&'static str, MetaValue)],
    /// Reads it.
    pub read: for<'a> fn(ResourceCall<'a>) -> ResourceFuture,
    /// Lists the concrete resources a template stands for (in `resources/list`).
    pub list: Option<fn() -> Vec<Resource>>,
    /// Completion of template variables, by variable name.
    pub complete: &'static [(&'static str, CompleteFn)],
    /// OAuth scopes a caller needs (`scopes = [...]`; HTTP with authorization only).
    pub scopes: &'static [&'static str],
    /// For an app (a `ui://` URI), its `ui(...)` settings (see [`apps`](crate::apps)).
    pub ui: Option<crate::apps::UiResourceDef>,
    /// Where it is defined (`file`, `line`).
    pub location: (&'static str, u32),
    /// The fn takes an injected parameter (`Context`, `State`, `Principal`, any `FromContext`
    /// type): only then can it ask the client something (see `ToolDef::context`).
    pub context: bool,
}

inventory::collect!(ResourceDef);
