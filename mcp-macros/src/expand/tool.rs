//! `#[tool]`: the user's fn stays as written; beside it, inside `const _: () = { … };`, an
//! argument struct (for the schema and deserialization), an adapter that builds the injected
//! parameters, calls the fn and converts its return value, and the `inventory` registration.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::LitStr;
use syn::spanned::Spanned;

use super::Steps;
use super::common::{self, local, opt};
use crate::attr::ToolAttr;
use crate::model::FnModel;
use crate::valid::{self, Macro};

pub(super) const STEPS: Steps<ToolAttr> = Steps {
    mac: Macro::Tool,
    parse_attr: ToolAttr::parse,
    validate: valid::tool,
    generate,
};

fn generate(attr: &ToolAttr, model: &FnModel<'_>) -> TokenStream {
    let private = common::private(&attr.common);
    // The published schema: derived from the parameters, or the user's, published verbatim
    // (arguments are still deserialized into the parameters' types).
    let input_schema_fn = match &attr.input_schema {
        Some(path) => {
            // A fn of another signature is an error at the path.
            let schema = quote_spanned! {path.span()=>
                let schema: fn() -> #private::serde_json::Value = #path;
            };
            quote! {
                fn __mcp_input_schema() -> #private::serde_json::Value {
                    #schema
                    schema()
                }
            }
        }
        None => quote! {
            fn __mcp_input_schema() -> #private::serde_json::Value {
                #private::schema_for::<__McpArguments>(#private::SchemaDirection::Input)
            }
        },
    };
    let serde_path = LitStr::new(&format!("{}::serde", private), Span::call_site());
    let schemars_path = LitStr::new(&format!("{}::schemars", private), Span::call_site());

    let fn_ident = model.ident();
    // Locals of the generated adapter live in their own hygiene context, so no parameter name
    // can shadow them; the fn itself is bound first, so a parameter named like the fn works.
    let (f, ctx, args_in, mode, ret_val) = (
        local("__mcp_fn"),
        local("__mcp_context"),
        local("__mcp_arguments"),
        local("__mcp_mode"),
        common::return_local(),
    );
    let name = common::name(&attr.common, model);
    let description = common::description(&attr.common, model);
    let title = opt(&attr.common.title);
    let ret = model.return_type();

    // The argument struct: one field per argument, carrying its docs and serde attributes.
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    for param in model.arguments() {
        let (ident, ty, args) = (param.ident, param.ty, &param.attrs);
        let mut field_attrs: Vec<TokenStream> = args
            .forwarded
            .iter()
            .map(ToTokens::to_token_stream)
            .collect();
        if let Some(rename) = &args.rename {
            field_attrs.push(quote!(#[serde(rename = #rename)]));
        }
        if let Some(description) = &args.description {
            field_attrs.push(quote!(#[schemars(description = #description)]));
        }
        match args.default.as_ref().map(|d| &d.value) {
            Some(None) => field_attrs.push(quote!(#[serde(default)])),
            Some(Some(expr)) => {
                let f = format_ident!("__mcp_default_{}", ident);
                let path = LitStr::new(&f.to_string(), Span::call_site());
                // A string literal may initialise a `String`; anything else is typed by the param.
                let value = match expr {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(_),
                        ..
                    }) => {
                        quote!(::core::convert::Into::into(#expr))
                    }
                    _ => quote!(#expr),
                };
                defaults.push(quote!(fn #f() -> #ty { #value }));
                field_attrs.push(quote!(#[serde(default = #path)]));
            }
            None => {}
        }
        // `#ty` itself, through the check: a type that cannot be an argument is one error, at
        // the type, and the field's type is then an error rustc reports nothing more about.
        let checked = quote_spanned! {ty.span()=>
            <#ty as #private::Argument<{ #private::assert_argument::<#ty>() }>>::Type
        };
        fields.push(quote!(#(#field_attrs)* #ident: #checked));
    }
    let arg_idents: Vec<_> = model.arguments().map(|p| p.ident).collect();
    let context = common::takes_context(model);

    // Injected parameters, then the call with every parameter in its original position.
    let (injections, call_args) = common::injections(model, &private, &ctx);
    let call = common::call(model, &private, &f, &ctx, &call_args);

    let annotations = {
        let a = &attr.annotations;
        let (t, r, d, i, o) = (
            opt(&a.title),
            opt(&a.read_only),
            opt(&a.destructive),
            opt(&a.idempotent),
            opt(&a.open_world),
        );
        quote!(#private::AnnotationsDef { title: #t, read_only: #r, destructive: #d, idempotent: #i, open_world: #o })
    };
    let task = match attr.task.as_ref().map(LitStr::value).as_deref() {
        Some("optional") => quote!(#private::TaskSupport::Optional),
        Some("required") => quote!(#private::TaskSupport::Required),
        _ => quote!(#private::TaskSupport::Forbidden),
    };
    let scopes = common::scopes(&attr.common);
    let ui = super::ui::tool(attr, &private);
    let (icons, meta, location, cfgs) = (
        common::icons(&attr.common, &private),
        common::meta(&attr.common, &private),
        common::location(model),
        common::cfgs(model),
    );
    // Spanned at the return type: one that is not a tool result is one error there.
    let ret_span = model.return_span();
    let at = common::private_at(&attr.common, ret_span);
    let ret_arg = common::return_arg(model, &ret_val);
    let output_spec = quote_spanned!(ret_span=> #at::tool_return!(#ret, output_spec()));
    let convert = quote_spanned!(ret_span=> #at::tool_return!(#ret, convert(#ret_arg, #mode)));

    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case, non_camel_case_types, unused_braces, unused_qualifications, deprecated, clippy::all, clippy::pedantic)]
        const _: () = {
            #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
            #[serde(crate = #serde_path, deny_unknown_fields)]
            #[schemars(crate = #schemars_path)]
            #[automatically_derived]
            struct __McpArguments {
                #(#fields,)*
            }

            #(#defaults)*

            #input_schema_fn

            fn __mcp_output() -> #private::OutputSpec {
                #output_spec
            }

            fn __mcp_call(__mcp_call: #private::ToolCall<'_>) -> #private::ToolFuture {
                let #f = #fn_ident;
                let #private::ToolCall { context: #ctx, arguments: #args_in, mode: #mode } = __mcp_call;
                let __McpArguments { #(#arg_idents),* } =
                    match #private::parse_arguments::<__McpArguments>(#name, #args_in) {
                        ::core::result::Result::Ok(arguments) => arguments,
                        ::core::result::Result::Err(result) => {
                            return ::std::boxed::Box::pin(::core::future::ready(::core::result::Result::Ok(result)));
                        }
                    };
                ::std::boxed::Box::pin(async move {
                    #(#injections)*
                    let _ = &#ctx;
                    let #ret_val: #ret = #call;
                    #convert
                })
            }

            #private::inventory::submit! {
                #private::ToolDef {
                    name: #name,
                    title: #title,
                    description: #description,
                    input_schema: __mcp_input_schema,
                    output: __mcp_output,
                    annotations: #annotations,
                    icons: #icons,
                    meta: #meta,
                    call: __mcp_call,
                    task: #task,
                    scopes: #scopes,
                    ui: #ui,
                    location: #location,
                    context: #context,
                }
            }
        };
    }
}
