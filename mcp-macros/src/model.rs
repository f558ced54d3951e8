//! A typed model of an annotated fn, shared by the three macros: its parameters (arguments or
//! injected), doc comments and return type. It borrows the syn nodes, so every later check can
//! report at the offending tokens; it judges nothing (that is `valid.rs`).

use syn::{Attribute, FnArg, Ident, ItemFn, Pat, Receiver, ReturnType, Type};

use crate::attr::{ParamAttrs, doc_text, is_param_attr};
use crate::errors::Errors;

/// What a parameter is.
pub(crate) enum ParamKind<'a> {
    /// Given by the client: a tool's JSON argument, a prompt's argument, a template variable.
    Argument,
    /// Supplied by the server through `FromContext`: a built-in (`Context`, `State<T>`, by
    /// name) or any type marked `#[inject]` (`marker`).
    Injected {
        by_ref: bool,
        marker: Option<&'a Attribute>,
    },
}

pub(crate) struct Param<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: ParamAttrs<'a>,
    pub(crate) kind: ParamKind<'a>,
}

impl Param<'_> {
    /// The name the client uses: `#[arg(rename)]` or the ident (without `r#`).
    pub(crate) fn wire_name(&self) -> String {
        self.attrs.rename.as_ref().map_or_else(
            || self.ident.to_string().trim_start_matches("r#").to_owned(),
            syn::LitStr::value,
        )
    }
}

pub(crate) struct FnModel<'a> {
    pub(crate) item: &'a ItemFn,
    /// Parameters bound to a plain name, in order.
    pub(crate) params: Vec<Param<'a>>,
    /// Parameters bound to a pattern (`(a, b): (i64, i64)`): no name to publish.
    pub(crate) patterns: Vec<&'a Pat>,
    pub(crate) receiver: Option<&'a Receiver>,
    pub(crate) doc: Option<String>,
    pub(crate) is_async: bool,
}

/// Removes the parameter attributes the macros consume (rustc rejects them on fn params),
/// leaving the fn otherwise as written.
pub(crate) fn strip_param_attrs(item: &mut ItemFn) {
    for input in &mut item.sig.inputs {
        if let FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !is_param_attr(a));
        }
    }
}

/// Whether a type is one the framework injects with no marker: its last path segment is
/// `Context`, `Principal` or `State<…>` (`&` allowed). Only a convenience for the built-ins: any other
/// `FromContext` type is marked `#[inject]`, and either way the choice is checked through the
/// `FromContext` bound at the type's span.
fn builtin_injected(ty: &Type) -> Option<bool> {
    let (ty, by_ref) = split_ref(ty);
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let injected = ((last.ident == "Context" || last.ident == "Principal")
        && last.arguments.is_none())
        || (last.ident == "State"
            && matches!(last.arguments, syn::PathArguments::AngleBracketed(_)));
    (injected && by_ref.is_none_or(|r| r.mutability.is_none())).then_some(by_ref.is_some())
}

/// `T` and the `&` of `&T`.
pub(crate) fn split_ref(ty: &Type) -> (&Type, Option<&syn::TypeReference>) {
    match ty {
        Type::Reference(r) => (&r.elem, Some(r)),
        other => (other, None),
    }
}

impl<'a> FnModel<'a> {
    /// Models `item`; malformed parameter attributes are pushed to `errors`.
    pub(crate) fn new(item: &'a ItemFn, errors: &mut Errors) -> FnModel<'a> {
        let sig = &item.sig;
        let (mut params, mut patterns, mut receiver) = (Vec::new(), Vec::new(), None);
        for input in &sig.inputs {
            let pt = match input {
                FnArg::Receiver(r) => {
                    receiver = Some(r);
                    continue;
                }
                FnArg::Typed(pt) => pt,
            };
            let ident = match &*pt.pat {
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => &pi.ident,
                other => {
                    patterns.push(other);
                    continue;
                }
            };
            let attrs = ParamAttrs::parse(&pt.attrs, errors);
            let kind = match (&attrs.inject, &attrs.arg) {
                (Some(marker), _) => ParamKind::Injected {
                    by_ref: matches!(&*pt.ty, Type::Reference(_)),
                    marker: Some(marker),
                },
                // `#[arg(...)]` marks an argument whatever its type is called.
                (None, Some(_)) => ParamKind::Argument,
                (None, None) => match builtin_injected(&pt.ty) {
                    Some(by_ref) => ParamKind::Injected {
                        by_ref,
                        marker: None,
                    },
                    None => ParamKind::Argument,
                },
            };
            params.push(Param {
                ident,
                ty: &pt.ty,
                attrs,
                kind,
            });
        }
        FnModel {
            item,
            params,
            patterns,
            receiver,
            doc: doc_text(&item.attrs),
            is_async: sig.asyncness.is_some(),
        }
    }

    pub(crate) fn ident(&self) -> &Ident {
        &self.item.sig.ident
    }

    pub(crate) fn return_type(&self) -> Type {
        match &self.item.sig.output {
            ReturnType::Default => syn::parse_quote!(()),
            ReturnType::Type(_, ty) => (**ty).clone(),
        }
    }

    /// Where errors about the return type go: the type, or the fn's name when there is none.
    pub(crate) fn return_span(&self) -> proc_macro2::Span {
        match &self.item.sig.output {
            ReturnType::Default => self.ident().span(),
            ReturnType::Type(_, ty) => syn::spanned::Spanned::span(&**ty),
        }
    }

    /// The parameters the client gives.
    pub(crate) fn arguments(&self) -> impl Iterator<Item = &Param<'a>> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Argument))
    }
}

/// Whether `ty` mentions `impl Trait` anywhere.
pub(crate) fn contains_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut f = Finder(false);
    syn::visit::Visit::visit_type(&mut f, ty);
    f.0
}
