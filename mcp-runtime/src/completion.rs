//! Argument completion (`completion/complete`) for prompt arguments and template variables.

use std::collections::HashMap;

/// What a completion fn receives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument or variable being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values already given for the other arguments (`context.arguments`).
    pub arguments: HashMap<String, String>,
}

/// A completion fn: `fn(&CompletionRequest) -> Vec<String>`, named next to the prompt or
/// resource with `complete(arg = path)`. Return every match; the server sends at most 100 with
/// `total` and `hasMore`.
pub type CompleteFn = fn(&CompletionRequest) -> Vec<String>;

/// The most values one completion result carries (the spec's limit).
pub(crate) const MAX_VALUES: usize = 100;
