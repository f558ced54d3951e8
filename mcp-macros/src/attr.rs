//! The arguments of `#[tool(...)]`.

use syn::parse::ParseStream;
use syn::{Lit, LitBool, LitStr, Path, Token};

use crate::model::set_once;

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

#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) annotations: Annotations,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Vec<(LitStr, Lit)>,
    pub(crate) krate: Option<Path>,
}

const TOOL_KEYS: &str = "`name`, `title`, `description`, `annotations`, `icon`, `meta` or `crate`";

impl ToolAttr {
    pub(crate) fn parse(input: ParseStream<'_>) -> syn::Result<ToolAttr> {
        let mut attr = ToolAttr::default();
        let parser = syn::meta::parser(|meta| {
            let p = &meta.path;
            if p.is_ident("name") {
                let name: LitStr = meta.value()?.parse()?;
                check_tool_name(&name)?;
                set_once(&mut attr.name, name, p)
            } else if p.is_ident("title") {
                set_once(&mut attr.title, meta.value()?.parse()?, p)
            } else if p.is_ident("description") {
                set_once(&mut attr.description, meta.value()?.parse()?, p)
            } else if p.is_ident("crate") {
                set_once(&mut attr.krate, meta.value()?.parse()?, p)
            } else if p.is_ident("annotations") {
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
            } else if p.is_ident("icon") {
                if meta.input.peek(Token![=]) {
                    let src = meta.value()?.parse()?;
                    attr.icons.push(Icon {
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
                        let value = m.value()?;
                        let list = if value.peek(syn::token::Bracket) {
                            let content;
                            syn::bracketed!(content in value);
                            content
                                .parse_terminated(|s| s.parse::<LitStr>(), Token![,])?
                                .into_iter()
                                .collect()
                        } else {
                            vec![value.parse::<LitStr>()?]
                        };
                        set_once(&mut sizes, list, p)
                    } else {
                        Err(m.error(
                            "unknown icon field; expected `src`, `mime_type`, `sizes` or `theme`",
                        ))
                    }
                })?;
                let src = src.ok_or_else(|| meta.error("an icon needs `src = \"https://…\"`"))?;
                attr.icons.push(Icon {
                    src,
                    mime_type,
                    sizes: sizes.unwrap_or_default(),
                    theme,
                });
                Ok(())
            } else if p.is_ident("meta") {
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
                    attr.meta.push((key, check_meta_value(content.parse()?)?));
                    if !content.is_empty() {
                        content.parse::<Token![,]>()?;
                    }
                }
                Ok(())
            } else {
                Err(meta.error(format!("unknown #[tool] argument; expected {TOOL_KEYS}")))
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
