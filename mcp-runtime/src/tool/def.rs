//! The constant record each `#[tool]` registers through `inventory`.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use serde_json::value::RawValue;

use super::output::{OutputMode, OutputSpec};
use crate::protocol::{CallToolResult, Icon, IconTheme, McpError, ToolAnnotations};
use crate::request::Context;

/// The future a tool adapter returns.
pub type ToolFuture =
    Pin<Box<dyn Future<Output = Result<CallToolResult, McpError>> + Send + 'static>>;

/// What the dispatcher hands a tool adapter. The adapter parses `arguments` before it returns,
/// so the future it returns owns everything it needs and the message can be dropped.
pub struct ToolCall<'a> {
    /// The request's context (injected into parameters of type [`Context`]).
    pub context: Context,
    /// The raw `arguments` object, if the client sent one.
    pub arguments: Option<&'a RawValue>,
    /// How the return value becomes a result (decided from the output schema at start-up).
    pub mode: OutputMode,
}

/// A `_meta` value given in `#[tool(meta(key = value))]`.
#[derive(Clone, Copy, Debug)]
pub enum MetaValue {
    /// A string.
    Str(&'static str),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl MetaValue {
    pub(crate) fn to_value(self) -> Value {
        match self {
            MetaValue::Str(s) => s.into(),
            MetaValue::Int(i) => i.into(),
            MetaValue::Float(f) => f.into(),
            MetaValue::Bool(b) => b.into(),
        }
    }
}

/// An icon given in `#[tool(icon(...))]`.
#[derive(Clone, Copy, Debug)]
pub struct IconDef {
    /// `https:` or `data:` URI.
    pub src: &'static str,
    /// MIME type.
    pub mime_type: Option<&'static str>,
    /// Sizes, e.g. `["48x48"]`.
    pub sizes: &'static [&'static str],
    /// `"light"` or `"dark"`.
    pub theme: Option<&'static str>,
}

impl IconDef {
    pub(crate) fn to_icon(self) -> Icon {
        Icon {
            src: self.src.to_owned(),
            mime_type: self.mime_type.map(str::to_owned),
            sizes: self.sizes.iter().map(|s| (*s).to_owned()).collect(),
            theme: match self.theme {
                Some("dark") => Some(IconTheme::Dark),
                Some(_) => Some(IconTheme::Light),
                None => None,
            },
        }
    }
}

/// Tool annotations given in `#[tool(annotations(...))]`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsDef {
    /// Display name.
    pub title: Option<&'static str>,
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
}

impl AnnotationsDef {
    pub(crate) fn to_annotations(self) -> ToolAnnotations {
        ToolAnnotations {
            title: self.title.map(str::to_owned),
            read_only_hint: self.read_only,
            destructive_hint: self.destructive,
            idempotent_hint: self.idempotent,
            open_world_hint: self.open_world,
        }
    }
}

/// Everything `#[tool]` knows about one tool, as constant data.
///
/// Generated code builds these; schemas are produced by the function pointers once, at start-up.
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// Display name.
    pub title: Option<&'static str>,
    /// Description (from the doc comment unless overridden).
    pub description: Option<&'static str>,
    /// The client-compatible input schema.
    pub input_schema: fn() -> Value,
    /// The output schema and conversion mode of the return type.
    pub output: fn() -> OutputSpec,
    /// Behaviour hints.
    pub annotations: AnnotationsDef,
    /// Icons.
    pub icons: &'static [IconDef],
    /// `_meta` entries.
    pub meta: &'static [(&'static str, MetaValue)],
    /// Runs the tool.
    pub call: for<'a> fn(ToolCall<'a>) -> ToolFuture,
    /// Whether calls may run as [tasks](crate::task).
    pub task: crate::task::TaskSupport,
    /// OAuth scopes a caller needs (`scopes = [...]`; HTTP with authorization only).
    pub scopes: &'static [&'static str],
    /// Its app and visibility (`ui = "ui://…"`, `visibility = [...]`; see [`apps`](crate::apps)).
    pub ui: Option<crate::apps::UiToolDef>,
    /// Where the tool is defined (`file`, `line`), for error messages.
    pub location: (&'static str, u32),
    /// The tool's fn takes an injected parameter (`Context`, `State`, `Principal`, any
    /// `FromContext` type). Only such a tool reaches its request's context, and so only such
    /// a tool can ask the client something: a 2026-07-28 call of one without opens no
    /// request-state round unless the client sent state or answers (checked all the same).
    pub context: bool,
}

inventory::collect!(ToolDef);
