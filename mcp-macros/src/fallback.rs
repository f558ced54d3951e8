//! Output on error: the user's fn (minus the parameter attributes only this macro understands,
//! which rustc would reject) plus every error, so the rest of the crate and IDEs keep working.

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::model::strip_param_attrs;

pub(crate) fn with_errors(input: TokenStream, errors: syn::Error) -> TokenStream {
    let mut out = match syn::parse2::<syn::ItemFn>(input.clone()) {
        Ok(mut item) => {
            strip_param_attrs(&mut item);
            item.into_token_stream()
        }
        Err(_) => input,
    };
    out.extend(errors.into_compile_error());
    out
}
