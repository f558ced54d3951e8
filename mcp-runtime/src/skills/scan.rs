//! Walking the skills directory: which files exist, which folders are skills, and what
//! cannot be served. Nothing is read here but directory listings.

use std::collections::BTreeSet;
use std::path::Path;

use crate::resource::resolve_within;

/// Folders deeper than this are not walked (a bound on a pathological tree).
const MAX_DEPTH: usize = 32;
/// Directory entries walked at most, over the whole tree.
const MAX_ENTRIES: usize = 100_000;

/// A path below the skills directory, one name per segment.
pub(super) type Segments = Vec<String>;

/// What the walk found.
#[derive(Default)]
pub(super) struct Tree {
    /// Regular files, and symbolic links to files inside the directory. Sorted, so the files
    /// of one folder are contiguous.
    pub(super) files: BTreeSet<Segments>,
    /// Folders that hold a `SKILL.md`.
    pub(super) skills: Vec<Segments>,
    /// Entries that cannot be served, and why; an error only inside a skill.
    pub(super) refused: Vec<(Segments, String)>,
}

/// Walks `root`. Names starting with `.` (`.git`, `.DS_Store`) are not part of any skill and
/// are skipped. Symbolic links are resolved with [`resolve_within`]: a link to a file inside
/// `root` is a file; one leading outside, a broken one and one to a folder are refused (links
/// to folders are not followed, so the walk cannot loop).
pub(super) fn walk(root: &Path) -> Result<Tree, String> {
    let mut tree = Tree::default();
    let mut pending: Vec<Segments> = vec![Vec::new()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let path = dir.iter().fold(root.to_path_buf(), |p, s| p.join(s));
        let listing = std::fs::read_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "more than {MAX_ENTRIES} entries in the skills directory"
                ));
            }
            let file_type = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            names.push((entry.file_name(), file_type));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let mut is_skill = false;
        for (name, file_type) in names {
            let mut segments = dir.clone();
            let Some(name) = name.to_str() else {
                segments.push(name.to_string_lossy().into_owned());
                tree.refused
                    .push((segments, "the file name is not UTF-8".into()));
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            segments.push(name.to_owned());
            if file_type.is_dir() {
                if segments.len() > MAX_DEPTH {
                    tree.refused
                        .push((segments, format!("nested deeper than {MAX_DEPTH} folders")));
                } else {
                    pending.push(segments);
                }
                continue;
            }
            let is_file = if file_type.is_file() {
                true
            } else if file_type.is_symlink() {
                match resolve_within(root, &segments.join("/")) {
                    Ok(real) if real.is_file() => true,
                    Ok(_) => {
                        tree.refused.push((
                            segments,
                            "a symbolic link to a folder (links to folders are not followed)"
                                .into(),
                        ));
                        continue;
                    }
                    Err(e) => {
                        tree.refused.push((segments, e.to_string()));
                        continue;
                    }
                }
            } else {
                false
            };
            if !is_file {
                tree.refused
                    .push((segments, "not a regular file or folder".into()));
                continue;
            }
            is_skill |= name == "SKILL.md";
            tree.files.insert(segments);
        }
        if is_skill {
            if dir.is_empty() {
                return Err(
                    "the skills directory itself holds a SKILL.md: put each skill in a folder named after it"
                        .into(),
                );
            }
            tree.skills.push(dir);
        }
    }
    tree.skills.sort();
    Ok(tree)
}
