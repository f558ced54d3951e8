//! The elicitation forms a handler asks for with a turbofish (`ctx.elicit::<T>(…)`), found in
//! its body so that each `T` can be checked when the server starts.

use std::collections::HashSet;

use syn::visit::Visit;
use syn::{Block, ExprMethodCall, GenericArgument, Item, Type};

/// The `T`s of `.elicit::<T>(…)` calls in `body`, except types declared inside the body (the
/// generated check, outside the fn, could not name them) and inferred ones.
pub(crate) fn elicited_types(body: &Block) -> Vec<Type> {
    let mut finder = Finder::default();
    finder.visit_block(body);
    finder
        .found
        .into_iter()
        .filter(|ty| !mentions_any(ty, &finder.local))
        .collect()
}

#[derive(Default)]
struct Finder {
    found: Vec<Type>,
    /// Names of items declared in the body.
    local: HashSet<String>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_method_call(&mut self, call: &'ast ExprMethodCall) {
        if call.method == "elicit"
            && let Some(turbofish) = &call.turbofish
            && let [GenericArgument::Type(ty)] = &turbofish.args.iter().collect::<Vec<_>>()[..]
            && !matches!(ty, Type::Infer(_))
        {
            self.found.push(ty.clone());
        }
        syn::visit::visit_expr_method_call(self, call);
    }

    fn visit_item(&mut self, item: &'ast Item) {
        // Items in the body are recorded, not entered: their insides are another scope.
        let ident = match item {
            Item::Struct(i) => Some(&i.ident),
            Item::Enum(i) => Some(&i.ident),
            Item::Type(i) => Some(&i.ident),
            Item::Union(i) => Some(&i.ident),
            Item::Mod(i) => Some(&i.ident),
            Item::Use(_) => {
                // A `use` in the body may bring any name into scope: be safe, skip them all.
                self.local.insert("*".into());
                None
            }
            _ => None,
        };
        if let Some(ident) = ident {
            self.local.insert(ident.to_string());
        }
    }
}

/// Whether `ty` mentions a name in `names` (or `Self`), or `names` holds `*`.
fn mentions_any(ty: &Type, names: &HashSet<String>) -> bool {
    struct Mentions<'n> {
        names: &'n HashSet<String>,
        hit: bool,
    }
    impl<'ast> Visit<'ast> for Mentions<'_> {
        fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
            if ident == "Self" || self.names.contains(&ident.to_string()) {
                self.hit = true;
            }
        }
    }
    if names.contains("*") {
        return true;
    }
    let mut m = Mentions { names, hit: false };
    m.visit_type(ty);
    m.hit
}
