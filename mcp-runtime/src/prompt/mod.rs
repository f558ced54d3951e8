//! Prompts: how a `#[prompt]` fn's return value becomes messages. The registration record the
//! attribute emits is hidden plumbing, reached by the generated code through `__private`.

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use crate::completion::CompleteFn;
use crate::protocol::{GetPromptResult, McpError, PromptMessage};
use crate::request::Context;
use crate::tool::{IconDef, MetaValue};

/// The future a prompt adapter returns.
#[doc(hidden)]
pub type PromptFuture =
    Pin<Box<dyn Future<Output = Result<GetPromptResult, McpError>> + Send + 'static>>;

/// What the dispatcher hands a prompt adapter.
#[doc(hidden)]
pub struct PromptCall<'a> {
    /// The request's context.
    pub context: Context,
    /// The arguments as the client sent them (all strings).
    pub arguments: &'a HashMap<String, String>,
}

/// One argument of a prompt, as constant data.
#[doc(hidden)]
pub struct PromptArgDef {
    /// Its name.
    pub name: &'static str,
    /// Its description (from the parameter's doc comment).
    pub description: Option<&'static str>,
    /// Whether it is required (not an `Option`).
    pub required: fn() -> bool,
}

/// Everything `#[prompt]` knows about one prompt, as constant data.
#[doc(hidden)]
pub struct PromptDef {
    /// The prompt's name.
    pub name: &'static str,
    /// Display name.
    pub title: Option<&'static str>,
    /// Description.
    pub description: Option<&'static str>,
    /// Arguments.
    pub arguments: &'static [PromptArgDef],
    /// Icons.
    pub icons: &'static [IconDef],
    /// `_meta` entries.
    pub meta: &'static [(&'static str, MetaValue)],
    /// Builds the messages.
    pub get: for<'a> fn(PromptCall<'a>) -> PromptFuture,
    /// Completion of arguments, by argument name.
    pub complete: &'static [(&'static str, CompleteFn)],
    /// OAuth scopes a caller needs (`scopes = [...]`; HTTP with authorization only).
    pub scopes: &'static [&'static str],
    /// Where it is defined.
    pub location: (&'static str, u32),
    /// The fn takes an injected parameter (`Context`, `State`, `Principal`, any `FromContext`
    /// type): only then can it ask the client something (see `ToolDef::context`).
    pub context: bool,
}

inventory::collect!(PromptDef);

/// A prompt fn's return value: a `String` (one user message), a [`PromptMessage`], a list of
/// them, or a whole [`GetPromptResult`] (with a description). `Result<T, E>` of these makes `Err`
/// a JSON-RPC error (an [`McpError`] as it is, anything else as an internal error).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    note = "return a `String`, `PromptMessage`, `Vec<PromptMessage>` or `GetPromptResult`, or a `Result` of one"
)]
pub trait PromptOutput {
    /// The result.
    fn into_prompt_result(self) -> GetPromptResult;
}

impl PromptOutput for String {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult {
            description: None,
            messages: vec![PromptMessage::user(self)],
        }
    }
}

impl PromptOutput for &'static str {
    fn into_prompt_result(self) -> GetPromptResult {
        self.to_owned().into_prompt_result()
    }
}

impl PromptOutput for PromptMessage {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult {
            description: None,
            messages: vec![self],
        }
    }
}

impl PromptOutput for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult {
            description: None,
            messages: self,
        }
    }
}

impl PromptOutput for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

/// The probe a prompt's return type is dispatched on, by autoref specialization (see
/// [`ToolReturnProbe`](crate::tool::output::ToolReturnProbe)); the table of cases and depth is
/// [`prompt_return!`](crate::__private::prompt_return).
#[doc(hidden)]
pub struct PromptReturnProbe<T>(PhantomData<fn() -> T>);

impl<T> PromptReturnProbe<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        PromptReturnProbe(PhantomData)
    }
}

/// Calls `$method($args…)` on the case of the prompt return-type table that applies to `$ty`.
/// Three `&`s: the first case is implemented for two (one per case below it, down to the
/// fallback [`PromptViaUnsupported`]), and method lookup adds the `&` of `&self`.
#[doc(hidden)]
#[macro_export]
macro_rules! __prompt_return {
    ($ty:ty, $method:ident($($arg:expr),* $(,)?)) => {{
        #[allow(unused_imports)]
        use $crate::__private::{
            PromptViaOutput as _, PromptViaResult as _, PromptViaUnsupported as _,
        };
        (&&&$crate::__private::PromptReturnProbe::<$ty>::new()).$method($($arg),*)
    }};
}

/// Priority 0: `Result<T: PromptOutput, E>` (an `McpError` is passed on, others are internal).
#[doc(hidden)]
pub trait PromptViaResult<R> {
    /// Conversion.
    fn convert(&self, value: R) -> Result<GetPromptResult, McpError>;
}

impl<T: PromptOutput, E: Display + 'static> PromptViaResult<Result<T, E>>
    for &&PromptReturnProbe<Result<T, E>>
{
    fn convert(&self, value: Result<T, E>) -> Result<GetPromptResult, McpError> {
        value.map(PromptOutput::into_prompt_result).map_err(|e| {
            let any: &dyn std::any::Any = &e;
            any.downcast_ref::<McpError>()
                .cloned()
                .unwrap_or_else(|| McpError::internal(format!("{e:#}")))
        })
    }
}

/// Priority 1: `T: PromptOutput`.
#[doc(hidden)]
pub trait PromptViaOutput<R> {
    /// Conversion.
    fn convert(&self, value: R) -> Result<GetPromptResult, McpError>;
}

impl<T: PromptOutput> PromptViaOutput<T> for &PromptReturnProbe<T> {
    fn convert(&self, value: T) -> Result<GetPromptResult, McpError> {
        Ok(value.into_prompt_result())
    }
}

/// The bound behind the table's fallback: no type has it, so a return type no case takes is
/// one error, at the return type, in these words.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "this return type is not a prompt",
    note = "return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`, or a `Result` of one; or implement `mcp_runtime::prompt::PromptOutput` for it"
)]
#[doc(hidden)]
pub trait ReturnedFromPrompt {}

/// The fallback: no case applies.
#[doc(hidden)]
pub trait PromptViaUnsupported<R> {
    /// Unreachable: `R: ReturnedFromPrompt` never holds.
    fn convert(&self, value: R) -> Result<GetPromptResult, McpError>
    where
        R: ReturnedFromPrompt;
}

impl<T> PromptViaUnsupported<T> for PromptReturnProbe<T> {
    fn convert(&self, _: T) -> Result<GetPromptResult, McpError>
    where
        T: ReturnedFromPrompt,
    {
        unreachable!("no type is `ReturnedFromPrompt`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Through the table generated code uses, at its depth.
    macro_rules! convert {
        ($t:ty, $v:expr) => {
            crate::__prompt_return!($t, convert($v))
        };
    }

    #[test]
    fn each_priority_converts() {
        let r = convert!(String, "hi".to_owned()).unwrap();
        assert_eq!(r.messages.len(), 1);
        let r = convert!(Result<Vec<PromptMessage>, String>, Ok(vec![])).unwrap();
        assert!(r.messages.is_empty());
        let e = convert!(Result<String, String>, Err("boom".into())).unwrap_err();
        assert_eq!(e.message, "boom");
        let e =
            convert!(Result<String, McpError>, Err(McpError::invalid_params("no"))).unwrap_err();
        assert_eq!(e.code, McpError::invalid_params("").code);
    }
}
