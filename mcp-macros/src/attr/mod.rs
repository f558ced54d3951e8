//! The arguments of `#[tool(...)]`, `#[resource(...)]` and `#[prompt(...)]`, and the
//! attributes on their parameters (`#[arg(...)]`, `#[inject]`, docs, `#[serde]`, `#[schemars]`).
//! Parsing only: whether an attribute makes sense where it is written is `valid.rs`'s call.
//! MCP Apps' arguments are parsed in `ui.rs`.

pub(crate) mod ui;

use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, Ident, Lit, LitBool, LitFloat, LitInt, LitStr, Path, Token};

use crate::errors::Errors;

/// `#[arg(default)]` or `#[arg(default = expr)]`, with its path for error spans.
pub(crate) struct ArgDefault {
    pub(crate) path: Path,
    pub(crate) value: Option<Expr>,
}

/// The attributes on one parameter.
#[derive(Default)]
pub(crate) struct ParamAttrs<'a> {
    /// The first `#[arg(...)]`, if any.
    pub(crate) arg: Option<&'a Attribute>,
    /// `#[inject]`, if any.
    pub(crate) inject: Option<&'a Attribute>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) default: Option<ArgDefault>,
    pub(crate) description: Option<LitStr>,
    /// `#[doc]`, `#[serde]`, `#[schemars]`, in order: forwarded to a tool's argument field.
    pub(crate) forwarded: Vec<&'a Attribute>,
}

impl<'a> ParamAttrs<'a> {
    /// Parses the attributes the macros own; malformed ones are pushed to `errors`.
    pub(crate) fn parse(attrs: &'a [Attribute], errors: &mut Errors) -> ParamAttrs<'a> {
        let mut out = ParamAttrs::default();
        for attr in attrs {
            if attr.path().is_ident("arg") {
                out.arg.get_or_insert(attr);
                if let Err(e) = attr.parse_nested_meta(|meta| out.parse_arg(&meta)) {
                    errors.push(e);
                }
            } else if attr.path().is_ident("inject") {
                if !matches!(attr.meta, syn::Meta::Path(_)) {
                    errors.spanned(attr, "`#[inject]` takes no arguments");
                } else if out.inject.is_some() {
                    errors.spanned(attr, "duplicate `#[inject]`");
                }
                out.inject.get_or_insert(attr);
            } else if is_param_attr(attr) {
                out.forwarded.push(attr);
            }
        }
        out
    }

    fn parse_arg(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let p = &meta.path;
        if p.is_ident("rename") {
            set_once(&mut self.rename, meta.value()?.parse()?, p)
        } else if p.is_ident("description") {
            set_once(&mut self.description, meta.value()?.parse()?, p)
        } else if p.is_ident("default") {
            let value = if meta.input.peek(Token![=]) {
                Some(meta.value()?.parse()?)
            } else {
                None
            };
            let default = ArgDefault {
                path: p.clone(),
                value,
            };
            set_once(&mut self.default, default, p)
        } else if p.is_ident("inject") {
            Err(meta
                .error("injection is its own attribute: write `#[inject]`, not `#[arg(inject)]`"))
        } else {
            Err(meta
                .error("unknown #[arg] argument; expected `rename`, `default` or `description`"))
        }
    }

    /// The `#[serde]` and `#[schemars]` attributes (the forwarded ones that are not docs).
    pub(crate) fn field_attrs(&self) -> impl Iterator<Item = &'a Attribute> + '_ {
        self.forwarded
            .iter()
            .copied()
            .filter(|a| !a.path().is_ident("doc"))
    }
}

/// Attributes on parameters that the macros consume (rustc rejects some of them on fn params).
pub(crate) fn is_param_attr(attr: &Attribute) -> bool {
    ["doc", "arg", "inject", "serde", "schemars"]
        .iter()
        .any(|n| attr.path().is_ident(n))
}

/// The text of `///` comments, trimmed the way rustdoc shows them.
pub(crate) fn doc_text<'a>(attrs: impl IntoIterator<Item = &'a Attribute>) -> Option<String> {
    let lines: Vec<String> = attrs
        .into_iter()
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

/// Sets an argument written at most once.
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

#[derive(Default)]
pub(crate) struct Annotations {
    pub(crate) title: Option<LitStr>,
    pub(crate) read_only: Option<LitBool>,
    pub(crate) destructive: Option<LitBool>,
    pub(crate) idempotent: Option<LitBool>,
    pub(crate) open_world: Option<LitBool>,
}

pub(crate) struct Icon {
    pub(crate) src: LitStr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
    pub(crate) theme: Option<LitStr>,
}

/// Arguments every macro accepts.
#[derive(Default)]
pub(crate) struct Common {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Vec<(LitStr, Lit)>,
    /// `scopes = ["a", "b"]`: OAuth scopes a caller needs (HTTP with authorization).
    pub(crate) scopes: Vec<LitStr>,
    pub(crate) krate: Option<Path>,
}

impl Common {
    /// Handles `meta` if it is a common argument; `Ok(false)` otherwise.
    fn parse_key(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
        let p = &meta.path;
        if p.is_ident("name") {
            set_once(&mut self.name, meta.value()?.parse()?, p)?;
        } else if p.is_ident("title") {
            set_once(&mut self.title, meta.value()?.parse()?, p)?;
        } else if p.is_ident("description") {
            set_once(&mut self.description, meta.value()?.parse()?, p)?;
        } else if p.is_ident("crate") {
            set_once(&mut self.krate, meta.value()?.parse()?, p)?;
        } else if p.is_ident("icon") {
            self.parse_icon(meta)?;
        } else if p.is_ident("meta") {
            self.parse_meta(meta)?;
        } else if p.is_ident("scopes") {
            self.parse_scopes(meta)?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// `scopes = "a"` or `scopes = ["a", "b"]`; each an RFC 6749 scope token.
    fn parse_scopes(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        if !self.scopes.is_empty() {
            return Err(syn::Error::new_spanned(&meta.path, "duplicate `scopes`"));
        }
        let list = str_list(meta.value()?)?;
        if list.is_empty() {
            return Err(syn::Error::new_spanned(
                &meta.path,
                "`scopes` needs at least one scope",
            ));
        }
        for scope in &list {
            let v = scope.value();
            let token = |c: char| c == '!' || ('#'..='[').contains(&c) || (']'..='~').contains(&c);
            if v.is_empty() || !v.chars().all(token) {
                return Err(syn::Error::new_spanned(
                    scope,
                    "a scope is a non-empty token of visible ASCII, without spaces, `\"` or `\\`",
                ));
            }
        }
        self.scopes = list;
        Ok(())
    }

    fn parse_icon(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        if meta.input.peek(Token![=]) {
            let src = meta.value()?.parse()?;
            self.icons.push(Icon {
                src,
                mime_type: None,
                sizes: Vec::new(),
                theme: None,
            });
            return Ok(());
        }
        let (mut src, mut mime_type, mut sizes, mut theme) =
            (None, None, None::<Vec<LitStr>>, None);
        meta.parse_nested_meta(|m| {
            let p = &m.path;
            if p.is_ident("src") {
                set_once(&mut src, m.value()?.parse::<LitStr>()?, p)
            } else if p.is_ident("mime_type") {
                set_once(&mut mime_type, m.value()?.parse::<LitStr>()?, p)
            } else if p.is_ident("theme") {
                let t: LitStr = m.value()?.parse()?;
                if t.value() != "light" && t.value() != "dark" {
                    return Err(syn::Error::new_spanned(
                        &t,
                        "icon theme must be \"light\" or \"dark\"",
                    ));
                }
                set_once(&mut theme, t, p)
            } else if p.is_ident("sizes") {
                let list = str_list(m.value()?)?;
                set_once(&mut sizes, list, p)
            } else {
                Err(m.error("unknown icon field; expected `src`, `mime_type`, `sizes` or `theme`"))
            }
        })?;
        let src = src.ok_or_else(|| meta.error("an icon needs `src = \"https://…\"`"))?;
        self.icons.push(Icon {
            src,
            mime_type,
            sizes: sizes.unwrap_or_default(),
            theme,
        });
        Ok(())
    }

    fn parse_meta(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let content;
        syn::parenthesized!(content in meta.input);
        while !content.is_empty() {
            let key: LitStr = if content.peek(LitStr) {
                content.parse()?
            } else {
                let ident: syn::Ident = content.call(syn::ext::IdentExt::parse_any)?;
                LitStr::new(&ident.to_string(), ident.span())
            };
            content.parse::<Token![=]>()?;
            self.meta.push((key, check_meta_value(content.parse()?)?));
            if !content.is_empty() {
                content.parse::<Token![,]>()?;
            }
        }
        Ok(())
    }
}

/// `"a"` or `["a", "b"]`: one string or a bracketed list of them.
fn str_list(value: ParseStream<'_>) -> syn::Result<Vec<LitStr>> {
    if value.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in value);
        Ok(content
            .parse_terminated(|s| s.parse::<LitStr>(), Token![,])?
            .into_iter()
            .collect())
    } else {
        Ok(vec![value.parse::<LitStr>()?])
    }
}

/// `complete(name = path, ...)`: completion fns by argument or variable name.
fn parse_complete(meta: &ParseNestedMeta<'_>, out: &mut Vec<(Ident, Path)>) -> syn::Result<()> {
    meta.parse_nested_meta(|m| {
        let name = m.path.require_ident()?.clone();
        if out.iter().any(|(n, _)| *n == name) {
            return Err(syn::Error::new_spanned(
                &name,
                format!("duplicate completion for `{name}`"),
            ));
        }
        out.push((name, m.value()?.parse()?));
        Ok(())
    })
}

#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) common: Common,
    pub(crate) annotations: Annotations,
    /// `input_schema = path`: a `fn() -> serde_json::Value` publishing a hand-written schema.
    pub(crate) input_schema: Option<Path>,
    /// `task = "optional" | "required" | "forbidden"`: whether calls may run as tasks.
    pub(crate) task: Option<LitStr>,
    /// `ui = "ui://…"`: the MCP App that shows its results.
    pub(crate) ui: Option<LitStr>,
    /// `visibility = ["model", "app"]`: who may call it (empty: not given).
    pub(crate) visibility: Vec<LitStr>,
}

impl ToolAttr {
    pub(crate) fn parse(input: ParseStream<'_>) -> syn::Result<ToolAttr> {
        let mut attr = ToolAttr::default();
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("name") {
                let name: LitStr = meta.value()?.parse()?;
                check_tool_name(&name)?;
                return set_once(&mut attr.common.name, name, &meta.path);
            }
            if attr.common.parse_key(&meta)? {
                return Ok(());
            }
            if meta.path.is_ident("input_schema") {
                let path: Path = meta.value()?.parse()?;
                return set_once(&mut attr.input_schema, path, &meta.path);
            }
            if meta.path.is_ident("ui") {
                return set_once(&mut attr.ui, ui::parse_tool_ui(&meta)?, &meta.path);
            }
            if meta.path.is_ident("visibility") {
                if !attr.visibility.is_empty() {
                    return Err(syn::Error::new_spanned(
                        &meta.path,
                        "duplicate `visibility`",
                    ));
                }
                attr.visibility = ui::parse_visibility(&meta)?;
                return Ok(());
            }
            if meta.path.is_ident("task") {
                let task: LitStr = meta.value()?.parse()?;
                if !matches!(task.value().as_str(), "optional" | "required" | "forbidden") {
                    return Err(syn::Error::new_spanned(
                        &task,
                        "unknown task support; expected \"optional\", \"required\" or \"forbidden\"",
                    ));
                }
                return set_once(&mut attr.task, task, &meta.path);
            }
            if meta.path.is_ident("annotations") {
                let a = &mut attr.annotations;
                meta.parse_nested_meta(|m| {
                    let p = &m.path;
                    if p.is_ident("title") {
                        return set_once(&mut a.title, m.value()?.parse()?, p);
                    }
                    let slot = if p.is_ident("read_only") {
                        &mut a.read_only
                    } else if p.is_ident("destructive") {
                        &mut a.destructive
                    } else if p.is_ident("idempotent") {
                        &mut a.idempotent
                    } else if p.is_ident("open_world") {
                        &mut a.open_world
                    } else {
                        return Err(m.error(
                            "unknown annotation; expected `title`, `read_only`, `destructive`, `idempotent` or `open_world`",
                        ));
                    };
                    let value = if m.input.peek(Token![=]) {
                        m.value()?.parse()?
                    } else {
                        LitBool::new(true, p.require_ident()?.span())
                    };
                    set_once(slot, value, p)
                })
            } else {
                Err(meta.error(
                    "unknown #[tool] argument; expected `name`, `title`, `description`, `annotations`, `input_schema`, `task`, `ui`, `visibility`, `icon`, `meta`, `scopes` or `crate`",
                ))
            }
        });
        syn::parse::Parser::parse2(parser, input.parse::<proc_macro2::TokenStream>()?)?;
        Ok(attr)
    }
}

#[derive(Default)]
pub(crate) struct ResourceAnnotations {
    pub(crate) audience: Vec<LitStr>,
    pub(crate) priority: Option<LitFloat>,
    pub(crate) last_modified: Option<LitStr>,
}

pub(crate) struct ResourceAttr {
    pub(crate) uri: LitStr,
    pub(crate) common: Common,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) size: Option<LitInt>,
    pub(crate) annotations: ResourceAnnotations,
    pub(crate) list: Option<Path>,
    pub(crate) complete: Vec<(Ident, Path)>,
    /// `ui(...)`: an MCP App's settings.
    pub(crate) ui: Option<ui::UiResource>,
}

impl ResourceAttr {
    /// Whether it is an MCP App: a `ui://` URI.
    pub(crate) fn is_app(&self) -> bool {
        self.uri.value().starts_with("ui://")
    }

    pub(crate) fn parse(input: ParseStream<'_>) -> syn::Result<ResourceAttr> {
        let uri: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "#[resource] needs the URI first: #[resource(\"scheme://path/{var}\")]",
            )
        })?;
        let mut attr = ResourceAttr {
            uri,
            common: Common::default(),
            mime_type: None,
            size: None,
            annotations: ResourceAnnotations::default(),
            list: None,
            complete: Vec::new(),
            ui: None,
        };
        if input.is_empty() {
            return Ok(attr);
        }
        input.parse::<Token![,]>()?;
        let parser = syn::meta::parser(|meta| {
            if attr.common.parse_key(&meta)? {
                return Ok(());
            }
            let p = &meta.path;
            if p.is_ident("mime_type") {
                set_once(&mut attr.mime_type, meta.value()?.parse()?, p)
            } else if p.is_ident("size") {
                set_once(&mut attr.size, meta.value()?.parse()?, p)
            } else if p.is_ident("list") {
                set_once(&mut attr.list, meta.value()?.parse()?, p)
            } else if p.is_ident("complete") {
                parse_complete(&meta, &mut attr.complete)
            } else if p.is_ident("ui") {
                set_once(&mut attr.ui, ui::UiResource::parse(&meta)?, p)
            } else if p.is_ident("annotations") {
                let a = &mut attr.annotations;
                meta.parse_nested_meta(|m| {
                    let p = &m.path;
                    if p.is_ident("audience") {
                        let value = m.value()?;
                        let content;
                        syn::bracketed!(content in value);
                        for role in content.parse_terminated(|s| s.parse::<LitStr>(), Token![,])? {
                            if role.value() != "user" && role.value() != "assistant" {
                                return Err(syn::Error::new_spanned(&role, "audience is \"user\" or \"assistant\""));
                            }
                            a.audience.push(role);
                        }
                        Ok(())
                    } else if p.is_ident("priority") {
                        let v: LitFloat = m.value()?.parse()?;
                        let n: f64 = v.base10_parse()?;
                        if !(0.0..=1.0).contains(&n) {
                            return Err(syn::Error::new_spanned(&v, "priority is between 0.0 and 1.0"));
                        }
                        set_once(&mut a.priority, v, p)
                    } else if p.is_ident("last_modified") {
                        set_once(&mut a.last_modified, m.value()?.parse()?, p)
                    } else {
                        Err(m.error("unknown annotation; expected `audience`, `priority` or `last_modified`"))
                    }
                })
            } else {
                Err(meta.error(
                    "unknown #[resource] argument; expected `name`, `title`, `description`, `mime_type`, `size`, `annotations`, `icon`, `meta`, `scopes`, `list`, `complete`, `ui` or `crate`",
                ))
            }
        });
        syn::parse::Parser::parse2(parser, input.parse::<proc_macro2::TokenStream>()?)?;
        Ok(attr)
    }
}

#[derive(Default)]
pub(crate) struct PromptAttr {
    pub(crate) common: Common,
    pub(crate) complete: Vec<(Ident, Path)>,
}

impl PromptAttr {
    pub(crate) fn parse(input: ParseStream<'_>) -> syn::Result<PromptAttr> {
        let mut attr = PromptAttr::default();
        let parser = syn::meta::parser(|meta| {
            if attr.common.parse_key(&meta)? {
                Ok(())
            } else if meta.path.is_ident("complete") {
                parse_complete(&meta, &mut attr.complete)
            } else {
                Err(meta.error(
                    "unknown #[prompt] argument; expected `name`, `title`, `description`, `icon`, `meta`, `scopes`, `complete` or `crate`",
                ))
            }
        });
        syn::parse::Parser::parse2(parser, input.parse::<proc_macro2::TokenStream>()?)?;
        Ok(attr)
    }
}

fn check_meta_value(value: Lit) -> syn::Result<Lit> {
    match &value {
        Lit::Str(_) | Lit::Int(_) | Lit::Float(_) | Lit::Bool(_) => Ok(value),
        other => Err(syn::Error::new_spanned(
            other,
            "meta values are string, integer, float or bool literals",
        )),
    }
}

/// The spec's tool-name rule, checked where the name is written.
fn check_tool_name(name: &LitStr) -> syn::Result<()> {
    check_name(&name.value(), name.span())
}

/// The spec's tool-name rule (1 to 128 of `A-Z a-z 0-9 _ - .`), reported at `span`.
pub(crate) fn check_name(v: &str, span: proc_macro2::Span) -> syn::Result<()> {
    let ok = (1..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new(
            span,
            "tool names are 1 to 128 characters of A-Z a-z 0-9 _ - . (set one with `name = \"…\"`)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(tokens: proc_macro2::TokenStream) -> syn::Result<ToolAttr> {
        syn::parse::Parser::parse2(ToolAttr::parse, tokens)
    }
    fn resource(tokens: proc_macro2::TokenStream) -> syn::Result<ResourceAttr> {
        syn::parse::Parser::parse2(ResourceAttr::parse, tokens)
    }
    fn prompt(tokens: proc_macro2::TokenStream) -> syn::Result<PromptAttr> {
        syn::parse::Parser::parse2(PromptAttr::parse, tokens)
    }
    fn message<T>(result: syn::Result<T>) -> String {
        result.err().expect("an error").to_string()
    }

    #[test]
    fn tool_arguments() {
        let a = tool(quote::quote!(
            name = "add",
            title = "Add",
            annotations(read_only, destructive = false),
            icon = "https://x/a.png",
            icon(src = "https://x/b.svg", sizes = ["any"], theme = "dark"),
            meta(owner = "a", "x/y" = 3),
            crate = mcp
        ))
        .unwrap();
        assert_eq!(a.common.name.unwrap().value(), "add");
        assert!(a.annotations.read_only.unwrap().value);
        assert!(!a.annotations.destructive.unwrap().value);
        assert_eq!(a.common.icons.len(), 2);
        assert_eq!(a.common.icons[1].sizes.len(), 1);
        assert_eq!(a.common.meta.len(), 2);
        assert!(a.common.krate.is_some());
    }

    #[test]
    fn tool_argument_mistakes() {
        assert!(message(tool(quote::quote!(bogus))).starts_with("unknown #[tool] argument"));
        assert_eq!(
            message(tool(quote::quote!(title = "a", title = "b"))),
            "duplicate `title`"
        );
        assert!(message(tool(quote::quote!(name = "has space"))).starts_with("tool names are"));
        assert!(message(tool(quote::quote!(annotations(fast)))).starts_with("unknown annotation"));
        assert_eq!(
            message(tool(quote::quote!(icon(mime_type = "a")))),
            "an icon needs `src = \"https://…\"`"
        );
        assert_eq!(
            message(tool(quote::quote!(icon(src = "a", theme = "blue")))),
            "icon theme must be \"light\" or \"dark\""
        );
        assert_eq!(
            message(tool(quote::quote!(meta(k = b"x")))),
            "meta values are string, integer, float or bool literals"
        );
    }

    #[test]
    fn resource_and_prompt_arguments() {
        let r = resource(quote::quote!(
            "users://{id}",
            mime_type = "text/plain",
            size = 3,
            annotations(audience = ["user"], priority = 0.5),
            complete(id = ids),
            list = all
        ))
        .unwrap();
        assert_eq!(r.uri.value(), "users://{id}");
        assert_eq!(r.annotations.audience.len(), 1);
        assert_eq!(r.complete.len(), 1);
        assert!(r.list.is_some() && r.size.is_some() && r.mime_type.is_some());
        assert!(
            message(resource(quote::quote!(name = "x")))
                .starts_with("#[resource] needs the URI first")
        );
        assert_eq!(
            message(resource(quote::quote!("x://", annotations(priority = 2.0)))),
            "priority is between 0.0 and 1.0"
        );
        assert_eq!(
            message(resource(quote::quote!(
                "x://",
                annotations(audience = ["robot"])
            ))),
            "audience is \"user\" or \"assistant\""
        );
        let p = prompt(quote::quote!(title = "T", complete(a = f, b = g))).unwrap();
        assert_eq!(p.complete.len(), 2);
        assert_eq!(
            message(prompt(quote::quote!(complete(a = f, a = g)))),
            "duplicate completion for `a`"
        );
        assert!(
            message(prompt(quote::quote!(mime_type = "x")))
                .starts_with("unknown #[prompt] argument")
        );
    }

    fn param_attrs(attrs: Vec<Attribute>) -> (usize, Option<String>, bool, bool, usize) {
        let mut errors = Errors::default();
        let parsed = ParamAttrs::parse(&attrs, &mut errors);
        let n_errors = errors.finish().err().map_or(0, |e| e.into_iter().count());
        (
            n_errors,
            parsed.rename.as_ref().map(LitStr::value),
            parsed.default.is_some(),
            parsed.inject.is_some(),
            parsed.field_attrs().count(),
        )
    }

    #[test]
    fn parameter_attributes() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " Docs."]),
            syn::parse_quote!(#[arg(rename = "x", default = 3, description = "d")]),
            syn::parse_quote!(#[serde(alias = "y")]),
            syn::parse_quote!(#[schemars(length(max = 3))]),
            syn::parse_quote!(#[cfg_attr(test, allow(unused))]),
        ];
        assert_eq!(param_attrs(attrs), (0, Some("x".into()), true, false, 2));
        assert_eq!(
            param_attrs(vec![syn::parse_quote!(#[inject])]),
            (0, None, false, true, 0)
        );
        // Mistakes: each one error.
        assert_eq!(param_attrs(vec![syn::parse_quote!(#[inject(x)])]).0, 1);
        assert_eq!(
            param_attrs(vec![
                syn::parse_quote!(#[inject]),
                syn::parse_quote!(#[inject])
            ])
            .0,
            1
        );
        assert_eq!(param_attrs(vec![syn::parse_quote!(#[arg(inject)])]).0, 1);
        assert_eq!(param_attrs(vec![syn::parse_quote!(#[arg(defualt)])]).0, 1);
        assert_eq!(
            param_attrs(vec![syn::parse_quote!(#[arg(rename = "a", rename = "b")])]).0,
            1
        );
    }

    #[test]
    fn doc_text_is_trimmed_like_rustdoc() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " First line."]),
            syn::parse_quote!(#[doc = "  indented  "]),
        ];
        assert_eq!(doc_text(&attrs).as_deref(), Some("First line.\n indented"));
        assert_eq!(doc_text(&[]), None);
    }
}
