//! Pieces of expansion every macro shares: the runtime path, optional values, icons, `_meta`,
//! the definition's location, `#[cfg]` forwarding, injected parameters and the fn call.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use crate::attr::{Common, Icon};
use crate::model::{FnModel, ParamKind};

/// `::mcp_runtime::__private`, or the user's `crate = path`.
pub(crate) fn private(common: &Common) -> TokenStream {
    let krate = common
        .krate
        .as_ref()
        .map_or_else(|| quote!(::mcp_runtime), |p| p.to_token_stream());
    quote!(#krate::__private)
}

pub(crate) fn opt_str(s: Option<String>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

pub(crate) fn opt<T: ToTokens>(v: &Option<T>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// The name: `name = "…"` or the fn's (without `r#`).
pub(crate) fn name(common: &Common, model: &FnModel<'_>) -> String {
    common.name.as_ref().map_or_else(
        || {
            model
                .ident()
                .to_string()
                .trim_start_matches("r#")
                .to_owned()
        },
        LitStr::value,
    )
}

/// The description: `description = "…"` or the doc comment.
pub(crate) fn description(common: &Common, model: &FnModel<'_>) -> TokenStream {
    opt_str(
        common
            .description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| model.doc.clone()),
    )
}

pub(crate) fn icons(common: &Common, private: &TokenStream) -> TokenStream {
    let icons = common.icons.iter().map(
        |Icon {
             src,
             mime_type,
             sizes,
             theme,
         }| {
            let (m, t) = (opt(mime_type), opt(theme));
            quote!(#private::IconDef { src: #src, mime_type: #m, sizes: &[#(#sizes),*], theme: #t })
        },
    );
    quote!(&[#(#icons),*])
}

pub(crate) fn meta(common: &Common, private: &TokenStream) -> TokenStream {
    let meta = common.meta.iter().map(|(k, v)| {
        let value = match v {
            syn::Lit::Str(s) => quote!(#private::MetaValue::Str(#s)),
            syn::Lit::Int(i) => quote!(#private::MetaValue::Int(#i)),
            syn::Lit::Float(f) => quote!(#private::MetaValue::Float(#f)),
            syn::Lit::Bool(b) => quote!(#private::MetaValue::Bool(#b)),
            other => quote!(#other),
        };
        quote!((#k, #value))
    });
    quote!(&[#(#meta),*])
}

/// `(file!(), line!())` spanned at the fn's name: where the fn is, not where the attribute is.
pub(crate) fn location(model: &FnModel<'_>) -> TokenStream {
    quote_spanned!(model.ident().span()=> (::core::file!(), ::core::line!()))
}

/// Start-up checks of the forms the fn asks for with `ctx.elicit::<T>(…)`: a `T` that is not a
/// flat form fails `ServerBuilder::build` with the tool's name and location (a `T` the macro
/// cannot see, such as an inferred one, is checked when the ask is made).
pub(crate) fn form_checks(
    model: &FnModel<'_>,
    private: &TokenStream,
    kind: &str,
    owner: &str,
) -> TokenStream {
    let location = location(model);
    let checks = crate::forms::elicited_types(&model.item.block)
        .into_iter()
        .enumerate()
        .map(|(i, ty)| {
            // Through a probe: a `T` that is not `JsonSchema` (a method of the user's own that
            // happens to be called `elicit`) is skipped rather than a compile error.
            let check = local(&format!("__mcp_form_check_{i}"));
            quote_spanned! {ty.span()=>
                fn #check() -> ::core::result::Result<(), ::std::string::String> {
                    #[allow(unused_imports)]
                    use #private::{ViaForm as _, ViaNotForm as _};
                    (&&#private::FormProbe::<#ty>::new()).check()
                }
                #private::inventory::submit! {
                    #private::FormCheck {
                        kind: #kind,
                        owner: #owner,
                        location: #location,
                        check: #check,
                    }
                }
            }
        });
    quote!(#(#checks)*)
}

/// The fn's `#[cfg]`s, which must also gate its registration.
pub(crate) fn cfgs<'a>(model: &FnModel<'a>) -> Vec<&'a syn::Attribute> {
    model
        .item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect()
}

/// A local of generated code, in its own hygiene context so no parameter can shadow it.
pub(crate) fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// For injected parameters: the bound checks (at each type) and the `let` that builds each from
/// the context named `ctx`; plus the argument list of the call, in the fn's parameter order.
pub(crate) fn injections(
    model: &FnModel<'_>,
    private: &TokenStream,
    ctx: &Ident,
) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    let (mut checks, mut lets, mut call_args) = (Vec::new(), Vec::new(), Vec::new());
    for param in &model.params {
        let ident = param.ident;
        match &param.kind {
            ParamKind::Argument(_) => call_args.push(quote!(#ident)),
            ParamKind::Injected { by_ref } => {
                let ty = param.ty;
                let owned = match ty {
                    syn::Type::Reference(r) => (*r.elem).clone(),
                    other => other.clone(),
                };
                checks.push(quote_spanned!(ty.span()=> const _: () = #private::assert_injected::<#owned>();));
                lets.push(quote! {
                    let #ident = <#owned as #private::FromContext>::from_context(&#ctx)?;
                });
                call_args.push(if *by_ref {
                    quote!(&#ident)
                } else {
                    quote!(#ident)
                });
            }
        }
    }
    (checks, lets, call_args)
}

/// The call of the user's fn (bound to `f`): awaited, or run on the blocking pool.
pub(crate) fn call(
    model: &FnModel<'_>,
    private: &TokenStream,
    f: &Ident,
    ctx: &Ident,
    args: &[TokenStream],
) -> TokenStream {
    if model.is_async {
        quote!(#f(#(#args),*).await)
    } else {
        quote!(#private::run_blocking(&#ctx, move || #f(#(#args),*)).await?)
    }
}

/// The wire name of a string-valued parameter: `#[arg(rename)]` or the ident.
pub(crate) fn wire_name(param: &crate::model::Param<'_>, args: &crate::model::ArgAttrs) -> String {
    args.rename.as_ref().map_or_else(
        || param.ident.to_string().trim_start_matches("r#").to_owned(),
        LitStr::value,
    )
}

/// `(name, path as CompleteFn)` entries, each name checked against `known`.
pub(crate) fn completions(
    complete: &[(Ident, syn::Path)],
    known: &[String],
    what: &str,
    private: &TokenStream,
) -> syn::Result<TokenStream> {
    let mut entries = Vec::new();
    for (name, path) in complete {
        let n = name.to_string();
        if !known.contains(&n) {
            return Err(syn::Error::new_spanned(
                name,
                format!("no {what} named `{n}` to complete"),
            ));
        }
        // A typed binding (not `as`) so a wrong signature is a type error at the path.
        let f = quote_spanned!(path.span()=> { let f: #private::CompleteFn = #path; f });
        entries.push(quote!((#n, #f)));
    }
    Ok(quote!(&[#(#entries),*]))
}
