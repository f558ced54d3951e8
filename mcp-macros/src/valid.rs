//! Semantic checks of a modelled fn and its attribute, with the rules of the macro that runs:
//! what a parameter may be and which attributes it may carry differ between a tool (JSON
//! arguments), a prompt (text arguments) and a resource (template variables). Every problem is
//! collected and reported at once, each at the span of the offending tokens.

use syn::{Ident, Path, Type};

use crate::attr::{PromptAttr, ResourceAttr, ToolAttr};
use crate::errors::Errors;
use crate::model::{FnModel, Param, ParamKind, contains_impl_trait, split_ref};
use crate::uri_template;

/// The macro being expanded, for its rules and its words.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Macro {
    Tool,
    Resource,
    Prompt,
}

impl Macro {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Macro::Tool => "tool",
            Macro::Resource => "resource",
            Macro::Prompt => "prompt",
        }
    }

    /// What the client's values for the parameters are called.
    fn arguments(self) -> &'static str {
        match self {
            Macro::Tool => "tool arguments",
            Macro::Resource => "template variables",
            Macro::Prompt => "prompt arguments",
        }
    }

    /// What a parameter's name is.
    fn param_name(self) -> &'static str {
        match self {
            Macro::Resource => "the template variable's name",
            Macro::Tool | Macro::Prompt => "the argument's name",
        }
    }
}

/// The checks of the fn's signature and parameters, with `mac`'s rules.
pub(crate) fn signature(mac: Macro, model: &FnModel<'_>, errors: &mut Errors) {
    let m = mac.name();
    let sig = &model.item.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let why = match mac {
            Macro::Tool => "the argument types must be known to build the schema",
            Macro::Resource | Macro::Prompt => "the parameter types must be known to parse them",
        };
        errors.spanned(
            &sig.generics,
            format!("#[{m}] functions cannot be generic: {why}"),
        );
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.spanned(token, format!("#[{m}] functions cannot be `unsafe`"));
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, format!("#[{m}] functions cannot be variadic"));
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && contains_impl_trait(ty)
    {
        errors.spanned(
            ty,
            format!("#[{m}] functions cannot return `impl Trait`: name the type"),
        );
    }
    if let Some(r) = model.receiver {
        errors.spanned(
            r,
            format!("#[{m}] goes on free functions, not methods: remove `self`"),
        );
    }
    for pattern in &model.patterns {
        errors.spanned(
            pattern,
            format!(
                "{m} parameters must be plain names (the name is {})",
                mac.param_name()
            ),
        );
    }
    for param in &model.params {
        match &param.kind {
            ParamKind::Injected { marker, .. } => injected(param, *marker, errors),
            ParamKind::Argument => argument(mac, param, errors),
        }
    }
}

fn injected(param: &Param<'_>, marker: Option<&syn::Attribute>, errors: &mut Errors) {
    let attrs = &param.attrs;
    if let (Some(marker), Some(_)) = (marker, attrs.arg) {
        errors.spanned(
            marker,
            "a parameter is either injected (`#[inject]`) or an argument (`#[arg(...)]`), not both",
        );
    }
    for attr in attrs.field_attrs() {
        errors.spanned(
            attr,
            format!(
                "`#[{}]` applies to arguments; an injected parameter is not deserialized",
                path_text(attr.path())
            ),
        );
    }
    let (owned, by_ref) = split_ref(param.ty);
    if let Some(r) = by_ref.filter(|r| r.mutability.is_some()) {
        errors.spanned(
            r,
            "an injected parameter is taken by value or by `&`, not by `&mut`",
        );
    }
    if contains_impl_trait(owned) {
        errors.spanned(
            param.ty,
            "injected parameters cannot be `impl Trait`: name the type",
        );
    }
}

fn argument(mac: Macro, param: &Param<'_>, errors: &mut Errors) {
    let (ty, attrs) = (param.ty, &param.attrs);
    match ty {
        Type::Reference(r) => {
            let hint = match &*r.elem {
                Type::Path(p) if p.path.is_ident("str") => "use `String` instead of `&str`",
                Type::Slice(_) => "use `Vec<T>` instead of a slice",
                _ => "use an owned type",
            };
            let how = match mac {
                Macro::Tool => "deserialized",
                Macro::Resource | Macro::Prompt => "parsed from text",
            };
            errors.spanned(
                ty,
                format!("{} are {how} into owned values: {hint}", mac.arguments()),
            );
        }
        t if contains_impl_trait(t) => errors.spanned(
            ty,
            format!("{} cannot be `impl Trait`: name the type", mac.arguments()),
        ),
        _ => {}
    }
    if mac == Macro::Tool {
        return;
    }
    // Prompt arguments and template variables are text parsed with `FromStr`: the attributes
    // that shape a JSON argument would be silently ignored, so they are errors.
    let m = mac.name();
    if let Some(default) = &attrs.default {
        errors.spanned(
            &default.path,
            format!(
                "`#[arg(default)]` is for #[tool] arguments; a #[{m}] parameter that may be absent is an `Option<T>`"
            ),
        );
    }
    for attr in attrs.field_attrs() {
        errors.spanned(
            attr,
            format!(
                "`#[{}]` is for #[tool] arguments, which are deserialized from JSON; {} are parsed with `FromStr`",
                path_text(attr.path()),
                mac.arguments()
            ),
        );
    }
    if let (Macro::Resource, Some(description)) = (mac, &attrs.description) {
        errors.spanned(
            description,
            "template variables have no description; describe the resource in its doc comment",
        );
    }
}

fn path_text(path: &Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}

/// `#[tool]`: the default name (the fn's) follows the rules of an explicit one.
pub(crate) fn tool(attr: &ToolAttr, model: &FnModel<'_>, errors: &mut Errors) {
    if attr.common.name.is_none() {
        let ident = model.ident();
        errors.ok(crate::attr::check_name(
            ident.to_string().trim_start_matches("r#"),
            ident.span(),
        ));
    }
}

/// `#[resource]`: the URI template parses, every variable has a parameter and every argument
/// parameter a variable, `list` goes with a template, completions name variables.
pub(crate) fn resource(attr: &ResourceAttr, model: &FnModel<'_>, errors: &mut Errors) {
    let uri = &attr.uri;
    let vars = match uri_template::variables(&uri.value()) {
        Ok(vars) => vars,
        Err(e) => {
            errors.spanned(uri, format!("invalid URI template: {e}"));
            return;
        }
    };
    let arguments: Vec<_> = model.arguments().map(|p| (p, p.wire_name())).collect();
    for (param, name) in &arguments {
        if !vars.contains(name) {
            errors.spanned(
                param.ident,
                format!(
                    "parameter `{name}` is not a variable of the URI template `{}`",
                    uri.value()
                ),
            );
        }
    }
    for var in &vars {
        if !arguments.iter().any(|(_, n)| n == var) {
            errors.spanned(
                uri,
                format!("template variable `{var}` has no parameter of that name"),
            );
        }
    }
    if attr.list.is_some() && vars.is_empty() {
        errors.spanned(
            uri,
            "`list` lists the resources of a template; this URI has no variables",
        );
    }
    completions(&attr.complete, &vars, "template variable", errors);
    app(attr, errors);
}

/// An MCP App: `ui(...)` goes with a `ui://` URI, which is served as the one MIME type the
/// spec allows for it.
fn app(attr: &ResourceAttr, errors: &mut Errors) {
    if let (Some(ui), false) = (&attr.ui, attr.is_app()) {
        errors.spanned(
            &ui.path,
            "`ui(...)` sets an MCP App's settings; an app's URI starts with `ui://`",
        );
    }
    if let (Some(mime), true) = (&attr.mime_type, attr.is_app())
        && mime.value() != crate::attr::ui::APP_MIME_TYPE
    {
        errors.spanned(
            mime,
            format!(
                "a `ui://` resource is an MCP App, served as {:?} (the default): remove `mime_type`",
                crate::attr::ui::APP_MIME_TYPE
            ),
        );
    }
}

/// `#[prompt]`: completions name arguments.
pub(crate) fn prompt(attr: &PromptAttr, model: &FnModel<'_>, errors: &mut Errors) {
    let names: Vec<String> = model.arguments().map(Param::wire_name).collect();
    completions(&attr.complete, &names, "argument", errors);
}

fn completions(complete: &[(Ident, Path)], known: &[String], what: &str, errors: &mut Errors) {
    for (name, _) in complete {
        let n = name.to_string();
        if !known.contains(&n) {
            errors.spanned(name, format!("no {what} named `{n}` to complete"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages `mac` reports for `item`, in order.
    fn messages(mac: Macro, item: syn::ItemFn) -> Vec<String> {
        let mut errors = Errors::default();
        let model = FnModel::new(&item, &mut errors);
        signature(mac, &model, &mut errors);
        errors
            .finish()
            .err()
            .map_or_else(Vec::new, |e| e.into_iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn the_words_are_those_of_the_macro_that_runs() {
        let generic: syn::ItemFn = syn::parse_quote!(
            fn f<T>() {}
        );
        assert!(
            messages(Macro::Prompt, generic.clone())[0]
                .starts_with("#[prompt] functions cannot be generic")
        );
        assert!(messages(Macro::Resource, generic.clone())[0].starts_with("#[resource] functions"));
        assert!(messages(Macro::Tool, generic)[0].contains("to build the schema"));
        let by_ref: syn::ItemFn = syn::parse_quote!(
            fn f(s: &str) {}
        );
        assert_eq!(
            messages(Macro::Prompt, by_ref.clone()),
            [
                "prompt arguments are parsed from text into owned values: use `String` instead of `&str`"
            ]
        );
        assert_eq!(
            messages(Macro::Tool, by_ref),
            ["tool arguments are deserialized into owned values: use `String` instead of `&str`"]
        );
    }

    #[test]
    fn json_only_attributes_are_errors_outside_tools() {
        let item: syn::ItemFn = syn::parse_quote!(
            fn f(
                #[arg(default)] a: String,
                #[serde(alias = "c")]
                #[schemars(length(max = 1))]
                b: String,
            ) {
            }
        );
        assert!(messages(Macro::Tool, item.clone()).is_empty());
        let prompt = messages(Macro::Prompt, item.clone());
        assert_eq!(prompt.len(), 3, "{prompt:?}");
        assert!(prompt[0].starts_with("`#[arg(default)]` is for #[tool] arguments"));
        assert!(prompt[1].starts_with("`#[serde]` is for #[tool] arguments"));
        assert!(prompt[2].starts_with("`#[schemars]` is for #[tool] arguments"));
        assert_eq!(messages(Macro::Resource, item).len(), 3);
    }

    #[test]
    fn injection_rules() {
        let ok: syn::ItemFn = syn::parse_quote!(
            fn f(
                ctx: Context,
                r: &Context,
                s: State<u8>,
                #[inject] c: Caller,
                #[inject] a: &Alias,
            ) {
            }
        );
        assert!(messages(Macro::Tool, ok).is_empty());
        let bad: syn::ItemFn = syn::parse_quote!(
            fn f(
                #[inject]
                #[arg(rename = "x")]
                a: A,
                #[inject] b: &mut B,
                #[inject]
                #[serde(default)]
                c: C,
            ) {
            }
        );
        let m = messages(Macro::Tool, bad);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(m[0].contains("not both"));
        assert!(m[1].contains("not by `&mut`"));
        assert!(m[2].contains("an injected parameter is not deserialized"));
        // By name only for the built-ins; `#[arg]` makes even a `Context` an argument.
        let item: syn::ItemFn = syn::parse_quote!(
            fn f(a: Ctx, #[arg(rename = "c")] b: Context) {}
        );
        let mut errors = Errors::default();
        let model = FnModel::new(&item, &mut errors);
        assert_eq!(model.arguments().count(), 2);
    }
}
