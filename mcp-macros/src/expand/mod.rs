//! Code generation. Each macro: parse → model → validate → expand; any error falls back to the
//! user's fn plus the errors.

mod common;
mod prompt;
mod resource;
mod tool;

use proc_macro2::TokenStream;

use crate::fallback;

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}

pub(crate) fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    resource::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}

pub(crate) fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    prompt::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}
