//! Prompts: the registration record `#[prompt]` emits, and how return values become messages.

use std::collections::HashMap;
use std::fmt::Display;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use crate::completion::CompleteFn;
use crate::context::Context;
use crate::protocol::{GetPromptResult, McpError, PromptMessage};
use crate::tool::{IconDef, MetaValue};

/// The future a prompt adapter returns.
pub type PromptFuture =
    Pin<Box<dyn Future<Output = Result<GetPromptResult, McpError>> + Send + 'static>>;

/// What the dispatcher hands a prompt adapter.
pub struct PromptCall<'a> {
    /// The request's context.
    pub context: Context,
    /// The arguments as the client sent them (all strings).
    pub arguments: &'a HashMap<String, String>,
}

/// One argument of a prompt, as constant data.
pub struct PromptArgDef {
    /// Its name.
    pub name: &'static str,
    /// Its description (from the parameter's doc comment).
    pub description: Option<&'static str>,
    /// Whether it is required (not an `Option`).
    pub required: fn() -> bool,
}

/// Everything `#[prompt]` knows about one prompt, as constant data.
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
    /// Where it is defined.
    pub location: (&'static str, u32),
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

/// The autoref probe for prompt return types.
pub struct PTag<T>(PhantomData<fn() -> T>);

impl<T> PTag<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        PTag(PhantomData)
    }
}

#[doc(hidden)]
pub trait ViaPromptResult<R> {
    /// Conversion.
    fn convert(&self, value: R) -> Result<GetPromptResult, McpError>;
}

impl<T: PromptOutput, E: Display + 'static> ViaPromptResult<Result<T, E>> for &PTag<Result<T, E>> {
    fn convert(&self, value: Result<T, E>) -> Result<GetPromptResult, McpError> {
        value.map(PromptOutput::into_prompt_result).map_err(|e| {
            let any: &dyn std::any::Any = &e;
            any.downcast_ref::<McpError>()
                .cloned()
                .unwrap_or_else(|| McpError::internal(format!("{e:#}")))
        })
    }
}

#[doc(hidden)]
pub trait ViaPrompt<R> {
    /// Conversion.
    fn convert(&self, value: R) -> Result<GetPromptResult, McpError>;
}

impl<T: PromptOutput> ViaPrompt<T> for PTag<T> {
    fn convert(&self, value: T) -> Result<GetPromptResult, McpError> {
        Ok(value.into_prompt_result())
    }
}
