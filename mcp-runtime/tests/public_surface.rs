//! The crate root stays small enough to read in one sitting, and the crate docs list it.
//!
//! Stable rustdoc has no JSON output, so the surface is read from the source: the root-level
//! `pub` items and re-exports of `src/lib.rs`, plus every `#[macro_export]` macro in `src/`
//! (exported macros land at the root wherever they are written). Items marked `#[doc(hidden)]`
//! are not counted: they are the macros' plumbing and the 0.1 names kept for old code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The most names the documented root may hold.
const MAX_ROOT_NAMES: usize = 20;

/// The root names of 0.1 that moved into their modules and stay reachable, hidden, at the old
/// path. New names must not be added here: a name is either documented at the root or lives in
/// its module.
const MOVED_FROM_ROOT: &[&str] = &[
    "Changes",
    "CompletionRequest",
    "ElicitAction",
    "Elicitation",
    "ElicitationHandle",
    "Era",
    "GetPromptResult",
    "LogLevel",
    "NotFound",
    "PromptMessage",
    "Resource",
    "ResourceContents",
    "Role",
    "Root",
    "SampledMessage",
    "Sampling",
    "ToolInfo",
    "changes",
    "http",
];

/// The root's names, split by whether they are `#[doc(hidden)]`, and its public modules.
#[derive(Debug, Default)]
struct Surface {
    visible: BTreeSet<String>,
    hidden: BTreeSet<String>,
    modules: BTreeSet<String>,
}

/// The names a `pub use` brings in: the alias, or the path's last segment; globs are reported
/// as `*` so that a glob at the root cannot go unnoticed.
fn use_names(tree: &str) -> Vec<String> {
    tree.replace(['{', '}'], ",")
        .split(',')
        .map(str::trim)
        .filter(|leaf| !leaf.is_empty() && !leaf.ends_with("::"))
        .map(|leaf| match leaf.rsplit_once(" as ") {
            Some((_, alias)) => alias.trim().to_owned(),
            None => leaf.rsplit("::").next().unwrap_or(leaf).trim().to_owned(),
        })
        .filter(|name| name != "self")
        .collect()
}

/// Reads the root-level items of a `lib.rs`: lines at column 0, with the attributes above them.
fn root_items(source: &str) -> Surface {
    let mut surface = Surface::default();
    let mut attrs: Vec<&str> = Vec::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("#[") || line.starts_with("///") || line.starts_with("//") {
            if line.starts_with("#[") {
                attrs.push(line);
            }
            continue;
        }
        let hidden = attrs.iter().any(|a| a.contains("doc(hidden)"));
        let doctest_only = attrs.iter().any(|a| a.contains("cfg(doctest)"));
        attrs.clear();
        if doctest_only {
            continue;
        }
        let mut names = Vec::new();
        if let Some(rest) = line.strip_prefix("pub use ") {
            let mut tree = rest.to_owned();
            while !tree.contains(';') {
                tree.push_str(lines.next().expect("an unterminated `pub use`"));
            }
            names = use_names(tree.trim_end_matches(';'));
        } else if let Some(rest) = line.strip_prefix("pub mod ") {
            let name = rest.trim_end_matches([';', '{', ' ']).to_owned();
            if !hidden {
                surface.modules.insert(name);
            }
            continue;
        } else if let Some(rest) = line.strip_prefix("pub ") {
            let rest = rest
                .trim_start_matches("async ")
                .trim_start_matches("const fn ");
            let mut words = rest.split_whitespace();
            if let (Some(_kind), Some(name)) = (words.next(), words.next()) {
                let end = name
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                names.push(name[..end].to_owned());
            }
        }
        let into = if hidden {
            &mut surface.hidden
        } else {
            &mut surface.visible
        };
        into.extend(names);
    }
    surface
}

/// The `#[macro_export]` macros of one file, as (name, hidden).
fn exported_macros(source: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut attrs: Vec<&str> = Vec::new();
    for line in source.lines().map(str::trim_start) {
        if line.starts_with("#[") {
            attrs.push(line);
        } else if line.starts_with("///") || line.starts_with("//") {
        } else {
            if attrs.iter().any(|a| a.starts_with("#[macro_export")) {
                let name = line
                    .strip_prefix("macro_rules! ")
                    .expect("#[macro_export] on something other than `macro_rules!`");
                let name = name.trim_end_matches([' ', '{']).to_owned();
                out.push((name, attrs.iter().any(|a| a.contains("doc(hidden)"))));
            }
            attrs.clear();
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crate's surface as the compiler sees it, read from `src/`.
fn crate_surface() -> Surface {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let mut surface = root_items(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        for (name, hidden) in exported_macros(&text) {
            if hidden {
                surface.hidden.insert(name);
            } else {
                surface.visible.insert(name);
            }
        }
    }
    surface
}

/// The names a list item of the crate docs' subsection `heading` is about: the `` `name` ``s
/// before its first `": "`.
fn documented(heading: &str) -> BTreeSet<String> {
    let lib = include_str!("../src/lib.rs");
    let docs: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = docs
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("the crate docs have no `{heading}` section"));
    let section = docs[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with('#'))
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    section
        .split(" - ")
        // What comes before the first item is the subsection's introduction.
        .skip(1)
        .flat_map(|item| {
            let head = item.split_once(": ").map_or(item, |(head, _)| head);
            head.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_reader_counts_names_as_the_compiler_does() {
    let source = "\
pub mod shown;
#[doc(hidden)]
pub mod fuzzing;
pub use a::{B, c::{D, E as F}};
pub use g::{
    H, I,
};
#[doc(hidden)]
pub use old::Gone;
/// Docs.
#[cfg(feature = \"x\")]
pub fn helper() {}
#[cfg(doctest)]
pub struct ReadmeDoctests;
pub(crate) use private::Nope;
";
    let surface = root_items(source);
    assert_eq!(
        surface
            .visible
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["B", "D", "F", "H", "I", "helper"]
    );
    assert_eq!(surface.hidden.into_iter().collect::<Vec<_>>(), ["Gone"]);
    assert_eq!(surface.modules.into_iter().collect::<Vec<_>>(), ["shown"]);
    let macros = exported_macros(
        "#[doc(hidden)]\n#[macro_export]\nmacro_rules! __x {\n}\n/// Runs.\n#[macro_export]\nmacro_rules! run {\n}\n",
    );
    assert_eq!(
        macros,
        [("__x".to_owned(), true), ("run".to_owned(), false)]
    );
}

#[test]
fn the_crate_root_holds_at_most_twenty_names() {
    let surface = crate_surface();
    assert!(
        surface.visible.len() <= MAX_ROOT_NAMES,
        "the crate root shows {} names (at most {MAX_ROOT_NAMES}): {:?}; move the new one into \
         its module (and the prelude, if most servers need it)",
        surface.visible.len(),
        surface.visible
    );
    assert!(
        !surface.visible.contains("*"),
        "a glob re-export at the root"
    );
}

#[test]
fn hidden_root_names_are_only_the_macros_plumbing_and_the_moved_names() {
    let surface = crate_surface();
    let unexpected: Vec<_> = surface
        .hidden
        .iter()
        .filter(|name| !name.starts_with("__") && !MOVED_FROM_ROOT.contains(&name.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "hidden names at the crate root that are neither `__`-prefixed plumbing nor a moved 0.1 \
         name: {unexpected:?}"
    );
}

#[test]
fn the_crate_docs_list_every_root_name_and_public_module() {
    let surface = crate_surface();
    let root = documented("## At the root");
    let modules = documented("## Modules");
    for name in &surface.visible {
        assert!(
            root.contains(name),
            "`{name}` is at the crate root but not in the crate docs' \"At the root\" list"
        );
    }
    for name in &surface.modules {
        assert!(
            modules.contains(name),
            "`{name}` is a public module but not in the crate docs' \"Modules\" list"
        );
    }
    for name in &root {
        assert!(
            surface.visible.contains(name),
            "the crate docs list `{name}` at the root, which is not there"
        );
    }
}

/// The names that left the root still compile at their old path, as the same items (some of
/// those paths are deprecated aliases now).
#[test]
#[allow(deprecated)]
fn the_moved_names_still_resolve_at_their_old_path() {
    let role: mcp_runtime::protocol::Role = mcp_runtime::Role::User;
    let era: mcp_runtime::protocol::Era = mcp_runtime::Era::Stateless;
    let level: mcp_runtime::outbound::LogLevel = mcp_runtime::LogLevel::Info;
    let _: mcp_runtime::protocol::LogLevel = level;
    let request: mcp_runtime::completion::CompletionRequest =
        mcp_runtime::CompletionRequest::default();
    let changes: mcp_runtime::changes::Changes = mcp_runtime::changes();
    let _: mcp_runtime::catalog::Catalog = mcp_runtime::Changes::clone(&changes);
    let _: mcp_runtime::changes::Kind = mcp_runtime::catalog::ItemKind::Tool;
    let _: Option<mcp_runtime::protocol::Resource> = None::<mcp_runtime::Resource>;
    let _: Option<mcp_runtime::protocol::ResourceContents> = None::<mcp_runtime::ResourceContents>;
    let _: Option<mcp_runtime::protocol::GetPromptResult> = None::<mcp_runtime::GetPromptResult>;
    let _: Option<mcp_runtime::protocol::PromptMessage> = None::<mcp_runtime::PromptMessage>;
    let _: Option<mcp_runtime::ask::ElicitAction> = None::<mcp_runtime::ElicitAction>;
    let _: Option<mcp_runtime::ask::ElicitationHandle> = None::<mcp_runtime::ElicitationHandle>;
    let _: Option<mcp_runtime::ask::Root> = None::<mcp_runtime::Root>;
    let _: Option<mcp_runtime::ask::SampledMessage> = None::<mcp_runtime::SampledMessage>;
    let _: Option<mcp_runtime::registry::ToolInfo> = None::<mcp_runtime::ToolInfo>;
    let _: Option<mcp_runtime::resource::NotFound> = None::<mcp_runtime::NotFound>;
    let _: Option<mcp_runtime::ask::Elicitation<()>> = None::<mcp_runtime::Elicitation<()>>;
    let _: Option<mcp_runtime::ask::Sampling> = None::<mcp_runtime::Sampling>;
    let _: Option<mcp_runtime::http::HeaderMap> = None;
    let _: Option<mcp_runtime::context::Context> = None::<mcp_runtime::Context>;
    fn injected<T: mcp_runtime::context::FromContext>() {}
    injected::<mcp_runtime::Principal>();
    assert_eq!(role, mcp_runtime::protocol::Role::User);
    assert_eq!(era, mcp_runtime::protocol::ProtocolEra::Stateless);
    assert_eq!(level, mcp_runtime::protocol::LogLevel::Info);
    assert!(request.argument.is_empty());
    drop(changes);
}
