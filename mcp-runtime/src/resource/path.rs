//! Turning a URI variable into a file path without letting it escape a base directory.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Why a relative path was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError(String);

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PathError {}

/// Joins `relative` (e.g. the `path` of `files://{+path}`) onto `base`, refusing anything that
/// could leave `base`: absolute paths, `..` components, drive or UNC prefixes, and NUL bytes.
///
/// The check is lexical. When `base` may contain symbolic links that point outside it, also
/// compare the canonical paths (`std::fs::canonicalize`) before opening the file.
///
/// ```
/// use mcp_runtime::resource::safe_join;
/// let base = std::path::Path::new("/srv/docs");
/// assert_eq!(safe_join(base, "guide/intro.md").unwrap(), base.join("guide/intro.md"));
/// assert!(safe_join(base, "../etc/passwd").is_err());
/// assert!(safe_join(base, "/etc/passwd").is_err());
/// ```
pub fn safe_join(base: &Path, relative: &str) -> Result<PathBuf, PathError> {
    if relative.contains('\0') {
        return Err(PathError("the path contains a NUL byte".into()));
    }
    let mut out = base.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(PathError(format!("`..` is not allowed in {relative:?}")));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError(format!("{relative:?} is not a relative path")));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_inside_the_base() {
        let base = Path::new("/base");
        assert_eq!(
            safe_join(base, "./a/b.txt").unwrap(),
            Path::new("/base/a/b.txt")
        );
        for bad in ["..", "a/../../x", "/abs", "a\0b"] {
            assert!(safe_join(base, bad).is_err(), "{bad:?}");
        }
    }
}
