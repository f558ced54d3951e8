//! Tools: the registration record `#[tool]` emits, argument parsing and result conversion.

mod args;
mod def;
pub(crate) mod output;

pub use args::parse_arguments;
pub use def::{AnnotationsDef, IconDef, MetaValue, ToolCall, ToolDef, ToolFuture};
pub use output::{Json, OutputMode, OutputSpec, ToolOutput};
