//! `#[resource("uri")]`: a static resource, or a template whose variables bind to the fn's
//! parameters by name (parsed with `FromStr`); beside the fn, an adapter and the registration.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::common::{self, local, opt};
use crate::attr::ResourceAttr;
use crate::model::FnModel;
use crate::uri_template;

pub(super) fn try_expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    super::expand_fn("resource", args, input, ResourceAttr::parse, generate)
}

fn generate(attr: &ResourceAttr, model: &FnModel<'_>) -> syn::Result<TokenStream> {
    let private = common::private(&attr.common);
    let uri = &attr.uri;
    let vars = uri_template::variables(&uri.value())
        .map_err(|e| syn::Error::new_spanned(uri, format!("invalid URI template: {e}")))?;

    // Every variable needs a parameter and every argument parameter a variable.
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    let arguments: Vec<_> = model
        .arguments()
        .map(|(p, a)| (p, common::wire_name(p, a)))
        .collect();
    for (param, name) in &arguments {
        if !vars.contains(name) {
            push(syn::Error::new_spanned(
                param.ident,
                format!(
                    "parameter `{name}` is not a variable of the URI template `{}`",
                    uri.value()
                ),
            ));
        }
    }
    for var in &vars {
        if !arguments.iter().any(|(_, n)| n == var) {
            push(syn::Error::new_spanned(
                uri,
                format!("template variable `{var}` has no parameter of that name"),
            ));
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }

    let (f, ctx, call_in, uri_in, vars_in, ret_val, uri_owned) = (
        local("__mcp_fn"),
        local("__mcp_context"),
        local("__mcp_call"),
        local("__mcp_uri"),
        local("__mcp_variables"),
        local("__mcp_return"),
        local("__mcp_uri_owned"),
    );
    let fn_ident = model.ident();
    let parses = arguments.iter().map(|(param, name)| {
        let (ident, ty) = (param.ident, param.ty);
        // Spanned at the type: a type that does not parse from text is reported there.
        quote_spanned! {ty.span()=>
            let #ident: #ty = {
                #[allow(unused_imports)]
                use #private::{ViaOptionalText as _, ViaText as _};
                match (&&#private::ATag::<#ty>::new()).parse_text(#vars_in.get(#name).map(::std::string::String::as_str)) {
                    ::core::result::Result::Ok(value) => value,
                    ::core::result::Result::Err(why) => {
                        let why = ::std::format!("`{}`: {}", #name, why);
                        return ::std::boxed::Box::pin(::core::future::ready(::core::result::Result::Err(
                            #private::not_found(#uri_in, ::core::option::Option::Some(&why)),
                        )));
                    }
                }
            };
        }
    });
    let (checks, injections, call_args) = common::injections(model, &private, &ctx);
    let call = common::call(model, &private, &f, &ctx, &call_args);
    let ret = model.return_type();
    let name = common::name(&attr.common, model);
    let forms = common::form_checks(model, &private, "resource", &name);
    let description = common::description(&attr.common, model);
    let (title, mime) = (opt(&attr.common.title), opt(&attr.mime_type));
    let size = opt(&attr.size.as_ref().map(|s| quote!(#s as u64)));
    let a = &attr.annotations;
    let (audience, priority, last_modified) =
        (&a.audience, opt(&a.priority), opt(&a.last_modified));
    let list = opt(&attr
        .list
        .as_ref()
        .map(|p| quote!(#p as fn() -> ::std::vec::Vec<#private::Resource>)));
    let complete = common::completions(&attr.complete, &vars, "template variable", &private)?;
    let (icons, meta, location, cfgs) = (
        common::icons(&attr.common, &private),
        common::meta(&attr.common, &private),
        common::location(model),
        common::cfgs(model),
    );
    if attr.list.is_some() && vars.is_empty() {
        return Err(syn::Error::new_spanned(
            uri,
            "`list` lists the resources of a template; this URI has no variables",
        ));
    }

    Ok(quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case, unused_qualifications, deprecated, clippy::all, clippy::pedantic)]
        const _: () = {
            #(#checks)*

            fn __mcp_read(#call_in: #private::ResourceCall<'_>) -> #private::ResourceFuture {
                let #f = #fn_ident;
                let #private::ResourceCall { context: #ctx, uri: #uri_in, variables: #vars_in } = #call_in;
                let _ = #vars_in;
                #(#parses)*
                let #uri_owned = ::std::borrow::ToOwned::to_owned(#uri_in);
                ::std::boxed::Box::pin(async move {
                    #(#injections)*
                    let _ = &#ctx;
                    let #ret_val: #ret = #call;
                    #[allow(unused_imports)]
                    use #private::{
                        ViaResultOptionOutput as _, ViaResultOptionSerde as _, ViaResResultOutput as _,
                        ViaResResultSerde as _, ViaOptionOutput as _, ViaOptionSerde as _, ViaResOutput as _, ViaResSerde as _,
                    };
                    (&&&&&&&&#private::RTag::<#ret>::new()).convert(#ret_val, &#uri_owned, #mime)
                })
            }

            #forms

            #private::inventory::submit! {
                #private::ResourceDef {
                    uri: #uri,
                    name: #name,
                    title: #title,
                    description: #description,
                    mime_type: #mime,
                    size: #size,
                    annotations: #private::ResourceAnnotationsDef {
                        audience: &[#(#audience),*],
                        priority: #priority,
                        last_modified: #last_modified,
                    },
                    icons: #icons,
                    meta: #meta,
                    read: __mcp_read,
                    list: #list,
                    complete: #complete,
                    location: #location,
                }
            }
        };
    })
}
