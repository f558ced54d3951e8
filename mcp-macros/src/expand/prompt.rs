//! `#[prompt]`: the fn's parameters are the prompt's arguments (strings, parsed with `FromStr`;
//! `Option` ones optional); beside the fn, an adapter and the registration.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Steps;
use super::common::{self, local, opt, opt_str};
use crate::attr::{PromptAttr, doc_text};
use crate::model::FnModel;
use crate::valid::{self, Macro};

pub(super) const STEPS: Steps<PromptAttr> = Steps {
    mac: Macro::Prompt,
    parse_attr: PromptAttr::parse,
    validate: valid::prompt,
    generate,
};

fn generate(attr: &PromptAttr, model: &FnModel<'_>) -> TokenStream {
    let private = common::private(&attr.common);
    let (f, ctx, call_in, args_in, ret_val) = (
        local("__mcp_fn"),
        local("__mcp_context"),
        local("__mcp_call"),
        local("__mcp_arguments"),
        common::return_local(),
    );
    let prompt_name = common::name(&attr.common, model);
    let arguments: Vec<_> = model.arguments().map(|p| (p, p.wire_name())).collect();
    let parses = arguments.iter().map(|(param, name)| {
        let (ident, ty) = (param.ident, param.ty);
        let at = common::private_at(&attr.common, ty.span());
        // Spanned at the type: a type that does not parse from text is reported there.
        quote_spanned! {ty.span()=>
            let #ident: #ty = {
                let raw = #args_in.get(#name).map(::std::string::String::as_str);
                match #at::text_arg!(#ty, parse_text(raw)) {
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
    let arg_defs = arguments.iter().map(|(param, name)| {
        let (ty, args) = (param.ty, &param.attrs);
        let at = common::private_at(&attr.common, ty.span());
        let description = opt_str(
            args.description
                .as_ref()
                .map(syn::LitStr::value)
                .or_else(|| doc_text(args.forwarded.iter().copied())),
        );
        quote_spanned! {ty.span()=>
            #private::PromptArgDef {
                name: #name,
                description: #description,
                required: || #at::text_arg!(#ty, required()),
            }
        }
    });
    let complete = common::completions(&attr.complete, &private);
    let (injections, call_args) = common::injections(model, &private, &ctx);
    let context = common::takes_context(model);
    let call = common::call(model, &private, &f, &ctx, &call_args);
    let ret = model.return_type();
    // Spanned at the return type: one that is not a prompt is an error there.
    let at = common::private_at(&attr.common, model.return_span());
    let ret_arg = common::return_arg(model, &ret_val);
    let convert =
        quote_spanned!(model.return_span()=> #at::prompt_return!(#ret, convert(#ret_arg)));
    let fn_ident = model.ident();
    let description = common::description(&attr.common, model);
    let title = opt(&attr.common.title);
    let scopes = common::scopes(&attr.common);
    let (icons, meta, location, cfgs) = (
        common::icons(&attr.common, &private),
        common::meta(&attr.common, &private),
        common::location(model),
        common::cfgs(model),
    );

    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case, unused_braces, unused_qualifications, deprecated, clippy::all, clippy::pedantic)]
        const _: () = {
            fn __mcp_get(#call_in: #private::PromptCall<'_>) -> #private::PromptFuture {
                let #f = #fn_ident;
                let #private::PromptCall { context: #ctx, arguments: #args_in } = #call_in;
                let _ = #args_in;
                #(#parses)*
                ::std::boxed::Box::pin(async move {
                    #(#injections)*
                    let _ = &#ctx;
                    let #ret_val: #ret = #call;
                    #convert
                })
            }

            #private::inventory::submit! {
                #private::PromptDef {
                    name: #prompt_name,
                    title: #title,
                    description: #description,
                    arguments: &[#(#arg_defs),*],
                    icons: #icons,
                    meta: #meta,
                    get: __mcp_get,
                    scopes: #scopes,
                    complete: #complete,
                    location: #location,
                    context: #context,
                }
            }
        };
    }
}
