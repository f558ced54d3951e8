//! `#[resource("uri")]`: a static resource, or a template whose variables bind to the fn's
//! parameters by name (parsed with `FromStr`); beside the fn, an adapter and the registration.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Steps;
use super::common::{self, local, opt};
use crate::attr::ResourceAttr;
use crate::model::FnModel;
use crate::valid::{self, Macro};

pub(super) const STEPS: Steps<ResourceAttr> = Steps {
    mac: Macro::Resource,
    parse_attr: ResourceAttr::parse,
    validate: valid::resource,
    generate,
};

fn generate(attr: &ResourceAttr, model: &FnModel<'_>) -> TokenStream {
    let private = common::private(&attr.common);
    let uri = &attr.uri;
    let arguments: Vec<_> = model.arguments().map(|p| (p, p.wire_name())).collect();
    let (f, ctx, call_in, uri_in, vars_in, ret_val, uri_owned) = (
        local("__mcp_fn"),
        local("__mcp_context"),
        local("__mcp_call"),
        local("__mcp_uri"),
        local("__mcp_variables"),
        common::return_local(),
        local("__mcp_uri_owned"),
    );
    let fn_ident = model.ident();
    let parses = arguments.iter().map(|(param, name)| {
        let (ident, ty) = (param.ident, param.ty);
        let at = common::private_at(&attr.common, ty.span());
        // Spanned at the type: a type that does not parse from text is reported there.
        quote_spanned! {ty.span()=>
            let #ident: #ty = {
                match #at::text_arg!(#ty, parse_text(#vars_in.get(#name).map(::std::string::String::as_str))) {
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
    let (injections, call_args) = common::injections(model, &private, &ctx);
    let context = common::takes_context(model);
    let call = common::call(model, &private, &f, &ctx, &call_args);
    let ret = model.return_type();
    let name = common::name(&attr.common, model);
    let description = common::description(&attr.common, model);
    let (title, mime) = (
        opt(&attr.common.title),
        super::ui::mime_type(attr, &private),
    );
    let ui = super::ui::resource(attr, &private);
    let size = opt(&attr.size.as_ref().map(|s| quote!(#s as u64)));
    let a = &attr.annotations;
    let (audience, priority, last_modified) =
        (&a.audience, opt(&a.priority), opt(&a.last_modified));
    let list = opt(&attr
        .list
        .as_ref()
        .map(|p| quote!(#p as fn() -> ::std::vec::Vec<#private::Resource>)));
    let complete = common::completions(&attr.complete, &private);
    // Spanned at the return type: one that is not resource contents is an error there.
    let at = common::private_at(&attr.common, model.return_span());
    let ret_arg = common::return_arg(model, &ret_val);
    let convert = quote_spanned! {model.return_span()=>
        #at::resource_return!(#ret, convert(#ret_arg, &#uri_owned, #mime))
    };
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
                    #convert
                })
            }

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
                    scopes: #scopes,
                    ui: #ui,
                    list: #list,
                    complete: #complete,
                    location: #location,
                    context: #context,
                }
            }
        };
    }
}
