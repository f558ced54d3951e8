//! Code generation. Each macro: parse → model → validate → expand; any error falls back to the
//! user's fn plus the errors.

mod tool;

use proc_macro2::TokenStream;

use crate::fallback;

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}
