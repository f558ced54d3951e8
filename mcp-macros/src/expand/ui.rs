//! MCP Apps in the registrations: a resource's `ui: Option<UiResourceDef>` (`Some` for every
//! `ui://` resource) and a tool's `ui: Option<UiToolDef>`.

use proc_macro2::TokenStream;
use quote::quote;

use super::common::opt;
use crate::attr::ui::PERMISSIONS;
use crate::attr::{ResourceAttr, ToolAttr};

/// The `ui` field of a `ResourceDef`.
pub(super) fn resource(attr: &ResourceAttr, private: &TokenStream) -> TokenStream {
    if !attr.is_app() {
        return quote!(::core::option::Option::None);
    }
    let Some(ui) = &attr.ui else {
        return quote!(::core::option::Option::Some(#private::UiResourceDef {
            connect_domains: &[], resource_domains: &[], frame_domains: &[], base_uri_domains: &[],
            permissions: &[], domain: ::core::option::Option::None,
            prefers_border: ::core::option::Option::None,
        }));
    };
    let (connect, resources, frames, base_uris) = (
        &ui.connect_domains,
        &ui.resource_domains,
        &ui.frame_domains,
        &ui.base_uri_domains,
    );
    // Checked by the parser: every permission is one of the table's.
    let permissions = ui.permissions.iter().filter_map(|p| {
        PERMISSIONS
            .iter()
            .find(|(name, _)| p == name)
            .map(|(_, wire)| *wire)
    });
    let (domain, border) = (opt(&ui.domain), opt(&ui.prefers_border));
    quote!(::core::option::Option::Some(#private::UiResourceDef {
        connect_domains: &[#(#connect),*],
        resource_domains: &[#(#resources),*],
        frame_domains: &[#(#frames),*],
        base_uri_domains: &[#(#base_uris),*],
        permissions: &[#(#permissions),*],
        domain: #domain,
        prefers_border: #border,
    }))
}

/// The `mime_type` of a `ResourceDef`: an app's unless one is written (`valid.rs` allows only
/// the app's on a `ui://` URI).
pub(super) fn mime_type(attr: &ResourceAttr, private: &TokenStream) -> TokenStream {
    match &attr.mime_type {
        None if attr.is_app() => quote!(::core::option::Option::Some(#private::APP_MIME_TYPE)),
        mime => opt(mime),
    }
}

/// The `ui` field of a `ToolDef`.
pub(super) fn tool(attr: &ToolAttr, private: &TokenStream) -> TokenStream {
    if attr.ui.is_none() && attr.visibility.is_empty() {
        return quote!(::core::option::Option::None);
    }
    let (uri, visibility) = (opt(&attr.ui), &attr.visibility);
    quote!(::core::option::Option::Some(#private::UiToolDef {
        resource_uri: #uri,
        visibility: &[#(#visibility),*],
    }))
}
