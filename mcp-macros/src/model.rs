//! A typed model of an annotated fn: its parameters (arguments or injected), doc comments and
//! return type. Built once, validated, then expanded; every check reports at the span of the
//! offending tokens and all problems are reported together.

use syn::{Attribute, Expr, FnArg, Ident, ItemFn, LitStr, Pat, ReturnType, Type};

/// What a parameter is.
pub(crate) enum ParamKind {
    /// Deserialized from the client's `arguments`; part of the input schema.
    Argument(Box<ArgAttrs>),
    /// Supplied by the framework (`Context`, …); not in the schema.
    Injected { by_ref: bool },
}

/// `#[arg(...)]` plus the serde/schemars/doc attributes that go on the generated field.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) rename: Option<LitStr>,
    pub(crate) default: Option<Option<Expr>>,
    pub(crate) description: Option<LitStr>,
    /// `#[doc]`, `#[serde]`, `#[schemars]` attributes, forwarded to the field.
    pub(crate) forwarded: Vec<Attribute>,
}

pub(crate) struct Param<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    pub(crate) kind: ParamKind,
}

pub(crate) struct FnModel<'a> {
    pub(crate) item: &'a ItemFn,
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) doc: Option<String>,
    pub(crate) is_async: bool,
}

/// Collects errors so all of them are reported at once.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
    pub(crate) fn spanned(&mut self, tokens: impl quote::ToTokens, msg: &str) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }
    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Attributes on parameters that this macro consumes (rustc rejects some of them on fn params).
fn is_ours(attr: &Attribute) -> bool {
    ["doc", "arg", "serde", "schemars"]
        .iter()
        .any(|n| attr.path().is_ident(n))
}

/// Removes the parameter attributes this macro consumes, leaving the fn otherwise as written.
pub(crate) fn strip_param_attrs(item: &mut ItemFn) {
    for input in &mut item.sig.inputs {
        if let FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !is_ours(a));
        }
    }
}

/// The text of `///` comments, trimmed the way rustdoc shows them.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| {
            s.lines()
                .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Whether a type is injected by the framework rather than deserialized: decided by the last
/// path segment (`Context`, `mcp_runtime::Context`, `&Context`, `State<T>`). The choice is then checked
/// through the `FromContext` / `ToolArgument` traits at the type's span.
fn injected(ty: &Type) -> Option<bool> {
    let (ty, by_ref) = match ty {
        Type::Reference(r) if r.mutability.is_none() => (&*r.elem, true),
        other => (other, false),
    };
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let injected = (last.ident == "Context" && last.arguments.is_none())
        || (last.ident == "State"
            && matches!(last.arguments, syn::PathArguments::AngleBracketed(_)));
    injected.then_some(by_ref)
}

fn parse_arg_attrs(attrs: &[Attribute], errors: &mut Errors) -> ArgAttrs {
    let mut out = ArgAttrs::default();
    for attr in attrs {
        if attr.path().is_ident("arg") {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    set_once(&mut out.rename, meta.value()?.parse()?, &meta.path)
                } else if meta.path.is_ident("description") {
                    set_once(&mut out.description, meta.value()?.parse()?, &meta.path)
                } else if meta.path.is_ident("default") {
                    let value = if meta.input.peek(syn::Token![=]) {
                        Some(meta.value()?.parse()?)
                    } else {
                        None
                    };
                    set_once(&mut out.default, value, &meta.path)
                } else {
                    Err(meta.error(
                        "unknown #[arg] argument; expected `rename`, `default` or `description`",
                    ))
                }
            });
            if let Err(e) = result {
                errors.push(e);
            }
        } else if is_ours(attr) {
            out.forwarded.push(attr.clone());
        }
    }
    out
}

pub(crate) fn set_once<T>(slot: &mut Option<T>, value: T, path: &syn::Path) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new_spanned(
            path,
            format!("duplicate `{}`", quote::quote!(#path)),
        ));
    }
    *slot = Some(value);
    Ok(())
}

impl<'a> FnModel<'a> {
    /// Builds and validates the model of `item`.
    pub(crate) fn parse(item: &'a ItemFn) -> syn::Result<FnModel<'a>> {
        let mut errors = Errors::default();
        let sig = &item.sig;
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.spanned(&sig.generics, "#[tool] functions cannot be generic: the argument types must be known to build the schema");
        }
        if let syn::Safety::Unsafe(token) = &sig.safety {
            errors.spanned(token, "#[tool] functions cannot be `unsafe`");
        }
        if let Some(v) = &sig.variadic {
            errors.spanned(v, "#[tool] functions cannot be variadic");
        }
        if let ReturnType::Type(_, ty) = &sig.output
            && contains_impl_trait(ty)
        {
            errors.spanned(
                ty,
                "#[tool] functions cannot return `impl Trait`: name the type",
            );
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            let pt = match input {
                FnArg::Receiver(r) => {
                    errors.spanned(
                        r,
                        "#[tool] goes on free functions, not methods: remove `self`",
                    );
                    continue;
                }
                FnArg::Typed(pt) => pt,
            };
            let ident = match &*pt.pat {
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => &pi.ident,
                other => {
                    errors.spanned(
                        other,
                        "tool parameters must be plain names (the name is the argument's name)",
                    );
                    continue;
                }
            };
            // `#[arg(...)]` marks an argument whatever its type is called.
            let marked_argument = pt.attrs.iter().any(|a| a.path().is_ident("arg"));
            let kind = match injected(&pt.ty).filter(|_| !marked_argument) {
                Some(by_ref) => ParamKind::Injected { by_ref },
                None => {
                    check_argument_type(&pt.ty, &mut errors);
                    ParamKind::Argument(Box::new(parse_arg_attrs(&pt.attrs, &mut errors)))
                }
            };
            params.push(Param {
                ident,
                ty: &pt.ty,
                kind,
            });
        }
        errors.finish()?;
        Ok(FnModel {
            item,
            params,
            doc: doc_text(&item.attrs),
            is_async: sig.asyncness.is_some(),
        })
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

    pub(crate) fn arguments(&self) -> impl Iterator<Item = (&Param<'a>, &ArgAttrs)> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Argument(a) => Some((p, &**a)),
            ParamKind::Injected { .. } => None,
        })
    }
}

fn check_argument_type(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(r) => {
            let hint = match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => "use `String` instead of `&str`",
                Type::Slice(_) => "use `Vec<T>` instead of a slice",
                _ => "use an owned type",
            };
            errors.spanned(
                ty,
                &format!("tool arguments are deserialized into owned values: {hint}"),
            );
        }
        t if contains_impl_trait(t) => {
            errors.spanned(ty, "tool arguments cannot be `impl Trait`: name the type")
        }
        _ => {}
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
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
