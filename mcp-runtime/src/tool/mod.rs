//! Tools: how a `#[tool]` fn's return value becomes its result. The registration record the
//! attribute emits is hidden plumbing, reached by the generated code through `__private`.

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
