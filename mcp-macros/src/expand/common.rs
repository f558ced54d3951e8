//! Pieces of expansion every macro shares: the runtime path, optional values, icons, `_meta`,
//! the definition's location, `#[cfg]` forwarding, injected parameters, the fn call and
//! completions.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use crate::attr::{Common, Icon};
use crate::model::{FnModel, ParamKind, split_ref};

/// `::mcp_runtime::__private`, or the user's `crate = path`.
pub(crate) fn private(common: &Common) -> TokenStream {
    let krate = common
        .krate
        .as_ref()
        .map_or_else(|| quote!(::mcp_runtime), |p| p.to_token_stream());
    quote!(#krate::__private)
}

/// [`private`] with every token located at `span`: a call of one of the runtime's dispatch
/// tables through it is reported at `span` (the invocation's span starts at its path).
pub(crate) fn private_at(common: &Common, span: Span) -> TokenStream {
    fn respan(tokens: TokenStream, span: Span) -> TokenStream {
        tokens
            .into_iter()
            .map(|mut tree| {
                if let proc_macro2::TokenTree::Group(g) = &tree {
                    let mut group =
                        proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                    group.set_span(span);
                    tree = group.into();
                } else {
                    tree.set_span(tree.span().located_at(span));
                }
                tree
            })
            .collect()
    }
    respan(private(common), span)
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

/// `scopes = […]` as a `&'static [&'static str]`.
pub(crate) fn scopes(common: &Common) -> TokenStream {
    let scopes = &common.scopes;
    quote!(&[#(#scopes),*])
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

/// The local holding the fn's return value, hygienic like [`local`].
pub(crate) fn return_local() -> Ident {
    local("__mcp_return")
}

/// The return value (the local `value`) as the argument of a return table's `convert`, where
/// rustc puts the error when its type fits no case: in braces spanned at the return type. A
/// span in the user's code, not merely located there: rustc does not blame an argument from
/// the macro's hygiene context, and falls back to the call inside the runtime's table, which is
/// shown at the `#[tool]` attribute. (The braces are why the adapters allow `unused_braces`.)
///
/// On stable a span is one token, so `Result<Foo, E>` is underlined at `Result`. An argument
/// spanning the whole type (a call whose parentheses are at its last token) moves the error
/// there but leaves rustc's "required by a bound introduced by this call" at `Result` as well,
/// since the method's name is one token: one clean underline is better.
pub(crate) fn return_arg(model: &FnModel<'_>, value: &Ident) -> TokenStream {
    quote_spanned!(model.return_span()=> { #value })
}

/// For injected parameters, the `let` that builds each from the context named `ctx`; plus the
/// argument list of the call, in the fn's parameter order.
pub(crate) fn injections(
    model: &FnModel<'_>,
    private: &TokenStream,
    ctx: &Ident,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let (mut lets, mut call_args) = (Vec::new(), Vec::new());
    for param in &model.params {
        let ident = param.ident;
        match &param.kind {
            ParamKind::Argument => call_args.push(quote!(#ident)),
            ParamKind::Injected { by_ref, .. } => {
                let owned = split_ref(param.ty).0;
                // Spanned at the type: one that is not `FromContext` is one error there.
                lets.push(quote_spanned! {owned.span()=>
                    let #ident = <#owned as #private::Injected>::inject(&#ctx)?;
                });
                call_args.push(if *by_ref {
                    quote!(&#ident)
                } else {
                    quote!(#ident)
                });
            }
        }
    }
    (lets, call_args)
}

/// Whether the fn takes an injected parameter: only then does it reach its request's
/// context, and so only then can it ask the client something (the `context` of its def).
pub(crate) fn takes_context(model: &FnModel<'_>) -> bool {
    model
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Injected { .. }))
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

/// `(name, path as CompleteFn)` entries (the names are checked by `valid.rs`).
pub(crate) fn completions(complete: &[(Ident, syn::Path)], private: &TokenStream) -> TokenStream {
    let entries = complete.iter().map(|(name, path)| {
        let n = name.to_string();
        // A typed binding (not `as`) so a wrong signature is a type error at the path.
        let f = quote_spanned!(path.span()=> { let f: #private::CompleteFn = #path; f });
        quote!((#n, #f))
    });
    quote!(&[#(#entries),*])
}
