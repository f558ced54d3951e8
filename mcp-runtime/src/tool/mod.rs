//! Tools: the registration record `#[tool]` emits, argument parsing and result conversion.

mod args;
mod def;
pub(crate) mod output;

pub use output::{Json, ToolOutput};
// The registration record `#[tool]` emits and what it names: the generated code reaches them
// through `__private`, users never do.
#[doc(hidden)]
pub use args::parse_arguments;
#[doc(hidden)]
pub use def::{AnnotationsDef, IconDef, MetaValue, ToolCall, ToolDef, ToolFuture};
#[doc(hidden)]
pub use output::{OutputMode, OutputSpec};
