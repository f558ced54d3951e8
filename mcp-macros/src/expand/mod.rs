//! Code generation. Each macro: parse → model → validate → expand; any error falls back to the
//! user's fn plus the errors.

mod common;
mod prompt;
mod resource;
mod tool;
mod ui;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;
use syn::parse::ParseStream;

use crate::errors::Errors;
use crate::fallback;
use crate::model::{FnModel, strip_param_attrs};
use crate::valid::{self, Macro};

/// One macro's steps.
struct Steps<A> {
    mac: Macro,
    parse_attr: fn(ParseStream<'_>) -> syn::Result<A>,
    validate: fn(&A, &FnModel<'_>, &mut Errors),
    generate: fn(&A, &FnModel<'_>) -> TokenStream,
}

impl<A> Steps<A> {
    /// Parses the fn and the attribute, models the fn, validates both with the macro's rules
    /// (every error of every step reported together), generates, and emits the fn without the
    /// parameter attributes the macro consumed, followed by the generated code.
    fn run(&self, args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
        let item: ItemFn = syn::parse2(input).map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "#[{}] goes on a function (`async fn` or `fn`)",
                    self.mac.name()
                ),
            )
        })?;
        let attr = syn::parse::Parser::parse2(self.parse_attr, args);
        let mut errors = Errors::default();
        let model = FnModel::new(&item, &mut errors);
        valid::signature(self.mac, &model, &mut errors);
        if let Ok(attr) = &attr {
            (self.validate)(attr, &model, &mut errors);
        }
        let attr = match (attr, errors.finish()) {
            (Ok(attr), Ok(())) => attr,
            (Err(mut first), Err(rest)) => {
                first.combine(rest);
                return Err(first);
            }
            (Err(e), Ok(())) | (Ok(_), Err(e)) => return Err(e),
        };
        let generated = (self.generate)(&attr, &model);
        let mut item = item.clone();
        strip_param_attrs(&mut item);
        Ok(quote! {
            #item
            #generated
        })
    }

    fn expand(&self, args: TokenStream, input: TokenStream) -> TokenStream {
        self.run(args, input.clone())
            .unwrap_or_else(|e| fallback::with_errors(input, e))
    }
}

pub(crate) fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    tool::STEPS.expand(args, input)
}

pub(crate) fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    resource::STEPS.expand(args, input)
}

pub(crate) fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    prompt::STEPS.expand(args, input)
}
