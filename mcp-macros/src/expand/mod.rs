//! Code generation. Each macro: parse → model → validate → expand; any error falls back to the
//! user's fn plus the errors.

mod common;
mod prompt;
mod resource;
mod tool;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;
use syn::parse::ParseStream;

use crate::fallback;
use crate::model::{FnModel, strip_param_attrs};

/// The steps every macro shares: parse the fn and the attribute (reporting both sets of errors
/// together), model the fn, generate, and emit the fn without the parameter attributes the macro
/// consumed, followed by the generated code.
pub(crate) fn expand_fn<A>(
    macro_name: &str,
    args: TokenStream,
    input: TokenStream,
    parse_attr: fn(ParseStream<'_>) -> syn::Result<A>,
    generate: impl FnOnce(&A, &FnModel<'_>) -> syn::Result<TokenStream>,
) -> syn::Result<TokenStream> {
    let item: ItemFn = syn::parse2(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("#[{macro_name}] goes on a function (`async fn` or `fn`)"),
        )
    })?;
    let attr = syn::parse::Parser::parse2(parse_attr, args);
    let model = FnModel::parse(&item);
    let (attr, model) = match (attr, model) {
        (Ok(a), Ok(m)) => (a, m),
        (Err(mut a), Err(m)) => {
            a.combine(m);
            return Err(a);
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    let generated = generate(&attr, &model)?;
    let mut item = item.clone();
    strip_param_attrs(&mut item);
    Ok(quote! {
        #item
        #generated
    })
}

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}

pub(crate) fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    resource::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}

pub(crate) fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    prompt::try_expand(args, input.clone()).unwrap_or_else(|e| fallback::with_errors(input, e))
}
