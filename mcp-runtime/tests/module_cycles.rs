//! The runtime's layers hold: every `crate::…`, `super::…` and `self::…` path in `mcp-runtime/src`
//! (in `use` trees and inline in code, `super::super::…` included; comments, string literals and
//! `#[cfg(test)]` modules left out) is resolved to the file that defines what it names, following
//! `pub use` re-exports in `lib.rs` and `mod.rs` files. Then:
//!
//! - the graph of files is acyclic;
//! - so is the graph of top-level modules (`ask`, `request`, `server`, …: a file of one naming
//!   something defined in a file of another is an import of that module), reported as the
//!   modules in order around one cycle, then every import inside it, naming file and path;
//! - the lower layers import only the modules below them (`LAYERS`): `protocol/` is the bottom,
//!   `request/` the bottom of the server, and the client shares only `protocol/` with the server.
//!
//! It reads the source as it is on disk, so it fails when a back-edge is added; the checker
//! itself is tested on a small tree with planted back-edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path (`["server", "era"]`) and the file that holds it.
struct Module {
    path: Vec<String>,
    file: String,
    /// Names re-exported from a child module: `pub use child::Name` maps `Name` to `child`'s path.
    reexports: BTreeMap<String, Vec<String>>,
    /// The paths the file's code names, absolute (`crate` removed).
    uses: Vec<Vec<String>>,
}

fn main_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `server/era.rs` → `["server", "era"]`; `server/mod.rs` → `["server"]`; `lib.rs` → `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The code without comments and string literals (doc links and messages name paths too).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' if bytes.get(i + 2) == Some(&b'\'') || bytes.get(i + 1) == Some(&b'\\') => {
                // A char literal ('"', '\n'); lifetimes ('a) are left as they are.
                i += 1;
                while i < bytes.len() && bytes[i] != b'\'' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            c => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

/// The code without its `#[cfg(test)] mod … { … }` blocks: a test module's `super` is the file
/// itself, and what only tests use is no dependency of the runtime.
fn without_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_mod = trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod ");
        match (is_mod, trimmed.find('{')) {
            (true, Some(open)) if !trimmed[..open].contains(';') => {
                let mut depth = 0;
                let mut end = trimmed.len();
                for (i, c) in trimmed.char_indices().skip(open) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &trimmed[end..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// Expands `a::{b::C, d}` into `a::b::C` and `a::d` (whitespace already removed).
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<String>) {
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let body = &tree[open + 1..tree.len() - 1];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&body[start..i], &format!("{prefix}{head}"), out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&body[start..], &format!("{prefix}{head}"), out);
    } else if !tree.is_empty() {
        let tree = tree.split(" as ").next().unwrap();
        out.push(format!("{prefix}{tree}"));
    }
}

/// Every path the code names that starts at `crate`, `super` or `self`, made absolute.
fn paths_in(code: &str, here: &[String]) -> Vec<(Vec<String>, bool)> {
    let mut found = Vec::new();
    // `use` trees first (braces), then inline paths in the rest of the code.
    let mut rest = String::new();
    let mut cursor = 0;
    for (start, _) in code.match_indices("use ") {
        let before = code[..start].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') || start < cursor {
            continue;
        }
        let Some(end) = code[start..].find(';') else {
            continue;
        };
        let is_pub =
            code[..start].trim_end().ends_with("pub") || code[..start].trim_end().ends_with(')');
        rest.push_str(&code[cursor..start]);
        let tree: String = code[start + 4..start + end]
            .split_whitespace()
            .map(|tok| if tok == "as" { " as " } else { tok })
            .collect();
        let mut expanded = Vec::new();
        expand_use(&tree, "", &mut expanded);
        for p in expanded {
            // `use child::Item` names a child module (2018 paths); an external crate's path
            // resolves to this file itself and is dropped as such.
            let relative = !["crate::", "self::", "super::", "::"]
                .iter()
                .any(|root| p.starts_with(root));
            found.push((if relative { format!("self::{p}") } else { p }, is_pub));
        }
        cursor = start + end;
    }
    rest.push_str(&code[cursor..]);
    let bytes = rest.as_bytes();
    for root in ["crate::", "super::", "self::"] {
        for (start, _) in rest.match_indices(root) {
            if start > 0
                && (bytes[start - 1].is_ascii_alphanumeric()
                    || bytes[start - 1] == b'_'
                    || bytes[start - 1] == b'$')
            {
                continue;
            }
            let end = rest[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(rest.len(), |e| start + e);
            found.push((rest[start..end].trim_end_matches(':').to_owned(), false));
        }
    }
    found
        .into_iter()
        .filter_map(|(p, is_pub)| {
            let mut segs: Vec<&str> = p.split("::").filter(|s| !s.is_empty()).collect();
            let mut base: Vec<String> = match *segs.first()? {
                "crate" => Vec::new(),
                "self" => here.to_vec(),
                // `super` of module a::b (`a/b.rs`) is `a`; of module a (`a/mod.rs`), the root.
                "super" => here[..here.len().saturating_sub(1)].to_vec(),
                _ => return None,
            };
            segs.remove(0);
            while segs.first() == Some(&"super") {
                base.pop();
                segs.remove(0);
            }
            base.extend(segs.iter().map(|s| (*s).to_owned()));
            Some((base, is_pub))
        })
        .collect()
}

/// The runtime's real source, as it is on disk now.
fn load() -> Vec<Module> {
    let src = main_src();
    let mut files = Vec::new();
    collect(&src, &mut files);
    files.sort();
    load_from(files.into_iter().map(|file| {
        let text = std::fs::read_to_string(&file).unwrap();
        (file.strip_prefix(&src).unwrap().to_path_buf(), text)
    }))
}

/// Modules from (path under `src`, text) pairs.
fn load_from(files: impl IntoIterator<Item = (PathBuf, String)>) -> Vec<Module> {
    let mut modules = Vec::new();
    for (rel, text) in files {
        let path = module_path(&rel);
        let code = without_test_modules(&code_only(&text));
        let mut reexports = BTreeMap::new();
        let mut uses = Vec::new();
        for (target, is_pub) in paths_in(&code, &path) {
            if is_pub && target.len() > path.len() && target.starts_with(&path) {
                let name = target.last().unwrap().clone();
                reexports.insert(name, target[..target.len() - 1].to_vec());
            }
            uses.push(target);
        }
        modules.push(Module {
            path,
            file: rel.to_string_lossy().into_owned(),
            reexports,
            uses,
        });
    }
    modules
}

/// The file that defines what `target` names: the longest module prefix, then through its
/// re-exports while the next segment names one.
fn resolve(modules: &[Module], target: &[String]) -> Option<usize> {
    resolve_in(modules, target, 8)
}

fn resolve_in(modules: &[Module], target: &[String], depth: usize) -> Option<usize> {
    let mut best = None;
    for (i, m) in modules.iter().enumerate() {
        if target.starts_with(&m.path)
            && best.is_none_or(|b: usize| modules[b].path.len() < m.path.len())
        {
            best = Some(i);
        }
    }
    let mut at = best?;
    if depth == 0 {
        return Some(at);
    }
    for _ in 0..8 {
        let m = &modules[at];
        let Some(next) = target.get(m.path.len()) else {
            break;
        };
        let Some(from) = m.reexports.get(next) else {
            break;
        };
        let mut via = from.clone();
        via.push(next.clone());
        match resolve_in(modules, &via, depth - 1) {
            Some(j) if j != at => at = j,
            _ => break,
        }
    }
    Some(at)
}

/// A graph's edges: from a node to each node it imports, with one import that makes the edge
/// (for the report).
type Edges = BTreeMap<usize, BTreeMap<usize, String>>;

/// File → file: every path a file names, resolved to the file that defines it.
fn file_edges(modules: &[Module]) -> Edges {
    let mut edges = Edges::new();
    for (i, m) in modules.iter().enumerate() {
        for target in &m.uses {
            if let Some(j) = resolve(modules, target)
                && j != i
                // A parent declaring or re-exporting its children is not a dependency on them
                // in the sense that matters here (the children are its parts).
                && !modules[j].path.starts_with(&m.path)
            {
                edges
                    .entry(i)
                    .or_default()
                    .entry(j)
                    .or_insert_with(|| format!("crate::{}", target.join("::")));
            }
        }
    }
    edges
}

/// The top-level module a file belongs to (`server/era.rs` → `server`; `lib.rs` → the crate root).
fn top_level(m: &Module) -> String {
    m.path
        .first()
        .cloned()
        .unwrap_or_else(|| "crate root (lib.rs)".to_owned())
}

/// Top-level module → top-level module: what counts as a module importing another is any file of
/// the one naming (through `use`, an inline `crate::…` path, or `super::…` climbing out of it)
/// something defined in a file of the other. Re-exports are followed to the defining file, so
/// naming `crate::Context` is an import of the module that defines `Context`, and a module that
/// re-exports another's type imports that module. The crate root declares and re-exports every
/// module; those are not edges (see `file_edges`), so the root is in no cycle.
fn module_edges(modules: &[Module], files: &Edges) -> (Vec<String>, Edges) {
    let mut names: Vec<String> = modules.iter().map(top_level).collect();
    names.sort();
    names.dedup();
    let node = |m: &Module| names.binary_search(&top_level(m)).unwrap();
    let mut edges = Edges::new();
    for (&i, targets) in files {
        for (&j, via) in targets {
            let (a, b) = (node(&modules[i]), node(&modules[j]));
            if a != b {
                edges.entry(a).or_default().entry(b).or_insert_with(|| {
                    format!("{} -> {} ({via})", modules[i].file, modules[j].file)
                });
            }
        }
    }
    (names, edges)
}

/// The strongly connected components of more than one node (Tarjan's algorithm): each is a set
/// of nodes that all reach each other, so it holds at least one cycle.
fn cycles(n: usize, edges: &Edges) -> Vec<BTreeSet<usize>> {
    struct Tarjan<'a> {
        edges: &'a Edges,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        sccs: Vec<BTreeSet<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            let targets: Vec<usize> = self
                .edges
                .get(&v)
                .map(|e| e.keys().copied().collect())
                .unwrap_or_default();
            for w in targets {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    _ => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut scc = BTreeSet::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack[w] = false;
                    scc.insert(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    self.sccs.push(scc);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        sccs: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.sccs
}

/// One shortest cycle through the first member of a component (breadth-first over the
/// component's edges), as the nodes in order, the first repeated at the end.
fn one_cycle(scc: &BTreeSet<usize>, edges: &Edges) -> Vec<usize> {
    let start = *scc.first().unwrap();
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in edges.get(&v).into_iter().flat_map(|e| e.keys()) {
            if !scc.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while at != start {
                    at = came_from[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if w != start && !came_from.contains_key(&w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected component of several nodes has a cycle through each")
}

/// The report of every cycle: one cycle spelled out, then every import inside the component
/// (breaking the component means removing enough of those).
fn report(names: &[String], edges: &Edges) -> String {
    let mut out = String::new();
    for scc in cycles(names.len(), edges) {
        let cycle: Vec<&str> = one_cycle(&scc, edges)
            .into_iter()
            .map(|v| names[v].as_str())
            .collect();
        out.push_str(&format!("cycle: {}\n", cycle.join(" -> ")));
        for &v in &scc {
            for (w, via) in edges.get(&v).into_iter().flatten() {
                if scc.contains(w) {
                    out.push_str(&format!("  {} -> {}: {via}\n", names[v], names[*w]));
                }
            }
        }
    }
    out
}

#[test]
fn runtime_files_import_no_cycle() {
    let modules = load();
    let edges = file_edges(&modules);
    let names: Vec<String> = modules.iter().map(|m| m.file.clone()).collect();
    let report = report(&names, &edges);
    assert!(
        report.is_empty(),
        "import cycles between runtime files:\n{report}"
    );
}

#[test]
fn runtime_modules_import_no_cycle() {
    let modules = load();
    let (names, edges) = module_edges(&modules, &file_edges(&modules));
    let report = report(&names, &edges);
    assert!(
        report.is_empty(),
        "import cycles between top-level modules of mcp-runtime/src (a lower layer must not \
         import a higher one; define a small trait below and implement it above):\n{report}"
    );
}

/// The lower layers, each with the only modules it may import.
const LAYERS: &[(&str, &[&str])] = &[
    // The wire protocol and what the client and the server share: the types, the log levels,
    // the `x-mcp-header` rules (which read a schema's `type` through `schema`, a leaf).
    ("protocol", &["schema"]),
    // What a handler sees of a request, its asks included: the dispatcher, the transports, the
    // tasks, the catalog and the requestState machinery build on it (through small traits and
    // an opaque handle defined in it). `id` is a leaf (random ids, digests).
    ("request", &["protocol", "id"]),
    // The client is no part of the server: it shares `protocol/` with it, and the leaves both
    // sides use: the crate's one HTTP client factory (`http_client`, `tls_failure`), the
    // SKILL.md frontmatter reader (`skills`, to check a skill against its index entry) and
    // `CacheScope` (still defined in `server/`; it belongs in `protocol/`, and then `server`
    // leaves this list).
    (
        "client",
        &["protocol", "http_client", "tls_failure", "skills", "server"],
    ),
];

#[test]
fn lower_layers_import_only_what_is_below_them() {
    let modules = load();
    let (names, edges) = module_edges(&modules, &file_edges(&modules));
    let mut found = String::new();
    for (layer, below) in LAYERS {
        let Ok(from) = names.binary_search(&(*layer).to_owned()) else {
            panic!("no module `{layer}` in mcp-runtime/src: update LAYERS in this test");
        };
        for (to, via) in edges.get(&from).into_iter().flatten() {
            if !below.contains(&names[*to].as_str()) {
                found.push_str(&format!(
                    "  {layer} (may import only {}) -> {}: {via}\n",
                    below.join(", "),
                    names[*to]
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a lower layer imports a module above it:\n{found}"
    );
}

/// The checks above pass on the real source only if they can fail: a back-edge planted in a
/// small tree of the same shapes (a `use` tree, an inline path, `super::super`, a re-export) is
/// reported, naming the cycle.
#[test]
fn a_planted_back_edge_is_reported() {
    let tree = |back_edge: &str| {
        let files = [
            (
                "lib.rs",
                "mod low;\nmod mid;\nmod top;\npub use mid::Mid;\n",
            ),
            ("low/mod.rs", "mod part;\npub use part::Low;\n"),
            ("low/part.rs", back_edge),
            (
                "mid/mod.rs",
                "use crate::low::{Low, part as _};\npub struct Mid(Low);\n",
            ),
            (
                "top/mod.rs",
                "mod inner;\nfn f() -> crate::Mid { todo!() }\n",
            ),
            ("top/inner.rs", "use super::super::low::Low;\n"),
        ];
        let modules = load_from(files.map(|(p, t)| (PathBuf::from(p), t.to_owned())));
        let (names, edges) = module_edges(&modules, &file_edges(&modules));
        report(&names, &edges)
    };
    assert_eq!(tree("pub struct Low;\n"), "");
    assert_eq!(
        tree("pub struct Low;\nfn up() { let _ = crate::Mid; }\n"),
        "cycle: low -> mid -> low\n  \
         low -> mid: low/part.rs -> mid/mod.rs (crate::Mid)\n  \
         mid -> low: mid/mod.rs -> low/part.rs (crate::low::Low)\n"
    );
    assert_eq!(
        tree("use crate::top::X;\npub struct Low;\n"),
        "cycle: low -> top -> low\n  \
         low -> top: low/part.rs -> top/mod.rs (crate::top::X)\n  \
         mid -> low: mid/mod.rs -> low/part.rs (crate::low::Low)\n  \
         top -> low: top/inner.rs -> low/part.rs (crate::low::Low)\n  \
         top -> mid: top/mod.rs -> mid/mod.rs (crate::Mid)\n"
    );
}
