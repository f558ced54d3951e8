//! `#[prompt]`: the fn's parameters are the prompt's arguments (strings, parsed with `FromStr`;
//! `Option` ones optional); beside the fn, an adapter and the registration.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::common::{self, local, opt, opt_str};
use crate::attr::PromptAttr;
use crate::model::{FnModel, doc_text};

pub(super) fn try_expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    super::expand_fn("prompt", args, input, PromptAttr::parse, generate)
}

fn generate(attr: &PromptAttr, model: &FnModel<'_>) -> syn::Result<TokenStream> {
    let private = common::private(&attr.common);
    let (f, ctx, call_in, args_in, ret_val) = (
        local("__mcp_fn"),
        local("__mcp_context"),
        local("__mcp_call"),
        local("__mcp_arguments"),
        local("__mcp_return"),
    );
    let prompt_name = common::name(&attr.common, model);
    let forms = common::form_checks(model, &private, "prompt", &prompt_name);
    let arguments: Vec<_> = model
        .arguments()
        .map(|(p, a)| (p, a, common::wire_name(p, a)))
        .collect();
    let via = quote!(#[allow(unused_imports)] use #private::{ViaOptionalText as _, ViaText as _};);
    let parses = arguments.iter().map(|(param, _, name)| {
        let (ident, ty) = (param.ident, param.ty);
        // Spanned at the type: a type that does not parse from text is reported there.
        quote_spanned! {ty.span()=>
            let #ident: #ty = {
                #via
                let raw = #args_in.get(#name).map(::std::string::String::as_str);
                match (&&#private::ATag::<#ty>::new()).parse_text(raw) {
                    ::core::result::Result::Ok(value) => value,
                    ::core::result::Result::Err(why) => {
                        let message = match raw {
                            ::core::option::Option::None => ::std::format!("Missing required argument `{}` for prompt `{}`", #name, #prompt_name),
                            ::core::option::Option::Some(_) => ::std::format!("Invalid argument `{}` for prompt `{}`: {}", #name, #prompt_name, why),
                        };
                        return ::std::boxed::Box::pin(::core::future::ready(::core::result::Result::Err(
                            #private::McpError::invalid_params(message),
                        )));
                    }
                }
            };
        }
    });
    let arg_defs = arguments.iter().map(|(param, args, name)| {
        let ty = param.ty;
        let description = opt_str(
            args.description
                .as_ref()
                .map(syn::LitStr::value)
                .or_else(|| doc_text(&args.forwarded)),
        );
        quote_spanned! {ty.span()=>
            #private::PromptArgDef {
                name: #name,
                description: #description,
                required: || { #via (&&#private::ATag::<#ty>::new()).required() },
            }
        }
    });
    let names: Vec<String> = arguments.iter().map(|(_, _, n)| n.clone()).collect();
    let complete = common::completions(&attr.complete, &names, "argument", &private)?;
    let (checks, injections, call_args) = common::injections(model, &private, &ctx);
    let call = common::call(model, &private, &f, &ctx, &call_args);
    let ret = model.return_type();
    let fn_ident = model.ident();
    let description = common::description(&attr.common, model);
    let title = opt(&attr.common.title);
    let (icons, meta, location, cfgs) = (
        common::icons(&attr.common, &private),
        common::meta(&attr.common, &private),
        common::location(model),
        common::cfgs(model),
    );

    Ok(quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case, unused_qualifications, deprecated, clippy::all, clippy::pedantic)]
        const _: () = {
            #(#checks)*

            fn __mcp_get(#call_in: #private::PromptCall<'_>) -> #private::PromptFuture {
                let #f = #fn_ident;
                let #private::PromptCall { context: #ctx, arguments: #args_in } = #call_in;
                let _ = #args_in;
                #(#parses)*
                ::std::boxed::Box::pin(async move {
                    #(#injections)*
                    let _ = &#ctx;
                    let #ret_val: #ret = #call;
                    #[allow(unused_imports)]
                    use #private::{ViaPromptResult as _, ViaPrompt as _};
                    (&&#private::PTag::<#ret>::new()).convert(#ret_val)
                })
            }

            #forms

            #private::inventory::submit! {
                #private::PromptDef {
                    name: #prompt_name,
                    title: #title,
                    description: #description,
                    arguments: &[#(#arg_defs),*],
                    icons: #icons,
                    meta: #meta,
                    get: __mcp_get,
                    complete: #complete,
                    location: #location,
                }
            }
        };
    })
}
