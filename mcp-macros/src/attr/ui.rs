//! MCP Apps in the attributes: `ui(...)` of `#[resource("ui://…")]` (the app's `_meta.ui`:
//! CSP origins, permissions, domain, border) and `ui = "ui://…"` / `visibility = [...]` of
//! `#[tool]`. Each value is checked where it is written.

use syn::meta::ParseNestedMeta;
use syn::{Ident, LitBool, LitStr, Path, Token};

use super::{set_once, str_list};

/// The MIME type of an app (SEP-1865): the only one a `ui://` resource may have.
pub(crate) const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The permissions an app may ask for: (as written, wire name).
pub(crate) const PERMISSIONS: [(&str, &str); 4] = [
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboard_write", "clipboardWrite"),
];

/// `ui(...)` on a resource.
pub(crate) struct UiResource {
    /// The `ui` path, for errors about the resource as a whole.
    pub(crate) path: Path,
    pub(crate) connect_domains: Vec<LitStr>,
    pub(crate) resource_domains: Vec<LitStr>,
    pub(crate) frame_domains: Vec<LitStr>,
    pub(crate) base_uri_domains: Vec<LitStr>,
    /// As written (`clipboard_write`); `PERMISSIONS` maps them to wire names.
    pub(crate) permissions: Vec<Ident>,
    pub(crate) domain: Option<LitStr>,
    pub(crate) prefers_border: Option<LitBool>,
}

impl UiResource {
    pub(crate) fn parse(meta: &ParseNestedMeta<'_>) -> syn::Result<UiResource> {
        let mut ui = UiResource {
            path: meta.path.clone(),
            connect_domains: Vec::new(),
            resource_domains: Vec::new(),
            frame_domains: Vec::new(),
            base_uri_domains: Vec::new(),
            permissions: Vec::new(),
            domain: None,
            prefers_border: None,
        };
        let mut csp_seen = false;
        meta.parse_nested_meta(|m| {
            let p = &m.path;
            if p.is_ident("csp") {
                if csp_seen {
                    return Err(syn::Error::new_spanned(p, "duplicate `csp`"));
                }
                csp_seen = true;
                m.parse_nested_meta(|c| ui.parse_csp(&c))
            } else if p.is_ident("permissions") {
                if !ui.permissions.is_empty() {
                    return Err(syn::Error::new_spanned(p, "duplicate `permissions`"));
                }
                m.parse_nested_meta(|perm| ui.parse_permission(&perm))
            } else if p.is_ident("domain") {
                let domain: LitStr = m.value()?.parse()?;
                if domain.value().trim().is_empty() || domain.value().contains(char::is_whitespace) {
                    return Err(syn::Error::new_spanned(
                        &domain,
                        "`domain` is a host name in the host's format, without spaces",
                    ));
                }
                set_once(&mut ui.domain, domain, p)
            } else if p.is_ident("prefers_border") {
                let value = if m.input.peek(Token![=]) {
                    m.value()?.parse()?
                } else {
                    LitBool::new(true, p.require_ident()?.span())
                };
                set_once(&mut ui.prefers_border, value, p)
            } else {
                Err(m.error(
                    "unknown `ui` setting; expected `csp(...)`, `permissions(...)`, `domain` or `prefers_border`",
                ))
            }
        })?;
        Ok(ui)
    }

    fn parse_csp(&mut self, m: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let p = &m.path;
        let slot = if p.is_ident("connect_domains") {
            &mut self.connect_domains
        } else if p.is_ident("resource_domains") {
            &mut self.resource_domains
        } else if p.is_ident("frame_domains") {
            &mut self.frame_domains
        } else if p.is_ident("base_uri_domains") {
            &mut self.base_uri_domains
        } else {
            return Err(m.error(
                "unknown `csp` list; expected `connect_domains`, `resource_domains`, `frame_domains` or `base_uri_domains`",
            ));
        };
        if !slot.is_empty() {
            return Err(syn::Error::new_spanned(
                p,
                format!("duplicate `{}`", p.require_ident()?),
            ));
        }
        let list = str_list(m.value()?)?;
        for origin in &list {
            check_origin(origin)?;
        }
        *slot = list;
        Ok(())
    }

    fn parse_permission(&mut self, m: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let ident = m.path.require_ident()?;
        if !PERMISSIONS.iter().any(|(name, _)| ident == name) {
            return Err(syn::Error::new_spanned(
                ident,
                "unknown permission; expected `camera`, `microphone`, `geolocation` or `clipboard_write`",
            ));
        }
        if self.permissions.contains(ident) {
            return Err(syn::Error::new_spanned(
                ident,
                format!("duplicate permission `{ident}`"),
            ));
        }
        self.permissions.push(ident.clone());
        Ok(())
    }
}

/// A CSP origin: hosts join the lists into a `Content-Security-Policy`, so a space, `;`, `,`
/// or quote would add sources or directives the server never meant.
fn check_origin(origin: &LitStr) -> syn::Result<()> {
    let v = origin.value();
    let bad = |c: char| c.is_whitespace() || matches!(c, ';' | ',' | '\'' | '"');
    if v.is_empty() || v.contains(bad) {
        return Err(syn::Error::new_spanned(
            origin,
            "a CSP origin is one source such as \"https://api.example.com\" or \"https://*.example.com\" (no spaces, `;`, `,` or quotes)",
        ));
    }
    Ok(())
}

/// `ui = "ui://…"` on a tool: the app that shows its results.
pub(crate) fn parse_tool_ui(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let uri: LitStr = meta.value()?.parse()?;
    let v = uri.value();
    if !v.starts_with("ui://") || v.len() == "ui://".len() || v.contains(char::is_whitespace) {
        return Err(syn::Error::new_spanned(
            &uri,
            "`ui` names an MCP App: a resource URI starting with `ui://`, e.g. \"ui://counter/app.html\"",
        ));
    }
    Ok(uri)
}

/// `visibility = ["model", "app"]` (or one string) on a tool.
pub(crate) fn parse_visibility(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    let list = str_list(meta.value()?)?;
    if list.is_empty() {
        return Err(syn::Error::new_spanned(
            &meta.path,
            "`visibility` needs \"model\", \"app\" or both (omit it for both)",
        ));
    }
    for (i, who) in list.iter().enumerate() {
        if who.value() != "model" && who.value() != "app" {
            return Err(syn::Error::new_spanned(
                who,
                "visibility is \"model\" (the agent calls it) or \"app\" (the app calls it)",
            ));
        }
        if list[..i].iter().any(|w| w.value() == who.value()) {
            return Err(syn::Error::new_spanned(
                who,
                format!("duplicate visibility {:?}", who.value()),
            ));
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ui(tokens: proc_macro2::TokenStream) -> syn::Result<UiResource> {
        let mut out = None;
        let parser = syn::meta::parser(|meta| {
            out = Some(UiResource::parse(&meta)?);
            Ok(())
        });
        syn::parse::Parser::parse2(parser, tokens)?;
        Ok(out.expect("one `ui`"))
    }

    fn message<T>(result: syn::Result<T>) -> String {
        result.err().expect("an error").to_string()
    }

    #[test]
    fn every_setting_parses() {
        let u = ui(quote::quote!(ui(
            csp(
                connect_domains = ["https://a.example", "wss://b.example"],
                resource_domains = "https://*.cdn.example",
                frame_domains = [],
                base_uri_domains = ["https://c.example"]
            ),
            permissions(camera, clipboard_write),
            domain = "x.host.example",
            prefers_border
        )))
        .unwrap();
        assert_eq!(u.connect_domains.len(), 2);
        assert_eq!(u.resource_domains.len(), 1);
        assert_eq!(u.permissions.len(), 2);
        assert!(u.prefers_border.unwrap().value);
        assert!(u.domain.is_some());
    }

    #[test]
    fn mistakes_name_the_setting() {
        assert!(message(ui(quote::quote!(ui(border)))).starts_with("unknown `ui` setting"));
        assert!(
            message(ui(quote::quote!(ui(csp(connect = []))))).starts_with("unknown `csp` list")
        );
        assert!(
            message(ui(quote::quote!(ui(csp(
                connect_domains = ["https://a; script-src *"]
            )))))
            .starts_with("a CSP origin is one source")
        );
        assert!(message(ui(quote::quote!(ui(permissions(usb))))).starts_with("unknown permission"));
        assert_eq!(
            message(ui(quote::quote!(ui(permissions(camera, camera))))),
            "duplicate permission `camera`"
        );
        assert_eq!(
            message(ui(quote::quote!(ui(
                prefers_border,
                prefers_border = false
            )))),
            "duplicate `prefers_border`"
        );
    }
}
