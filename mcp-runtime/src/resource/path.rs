//! Turning a URI variable into a file path without letting it escape a base directory.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Why a relative path was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError(String, bool);

impl PathError {
    fn refused(why: String) -> Self {
        PathError(why, false)
    }

    /// Whether [`resolve_within`] found nothing at the path (not a refusal: the file does
    /// not exist).
    pub fn is_not_found(&self) -> bool {
        self.1
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PathError {}

/// Joins `relative` (e.g. the `path` of `files://{+path}`) onto `base`, refusing anything that
/// could leave `base`: absolute paths, `..` components, drive or UNC prefixes, and NUL bytes.
///
/// The check is lexical: a symbolic link inside `base` may still lead outside it. To open a
/// file, use [`resolve_within`], which also follows the links.
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
        return Err(PathError::refused("the path contains a NUL byte".into()));
    }
    let mut out = base.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(PathError::refused(format!(
                    "`..` is not allowed in {relative:?}"
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::refused(format!(
                    "{relative:?} is not a relative path"
                )));
            }
        }
    }
    Ok(out)
}

/// [`safe_join`], then the real path: symbolic links are followed (`std::fs::canonicalize`)
/// and the file must still be inside `base`'s real path, so a link inside `base` that points
/// outside it is refused (CVE-2025-53109). The file must exist
/// ([`PathError::is_not_found`] otherwise).
///
/// ```
/// use mcp_runtime::resource::resolve_within;
/// let base = std::env::temp_dir();
/// std::fs::write(base.join("resolve-within-doc.txt"), "hi").unwrap();
/// let file = resolve_within(&base, "resolve-within-doc.txt").unwrap();
/// assert!(file.starts_with(base.canonicalize().unwrap()));
/// assert!(resolve_within(&base, "no-such-file.txt").unwrap_err().is_not_found());
/// ```
pub fn resolve_within(base: &Path, relative: &str) -> Result<PathBuf, PathError> {
    let joined = safe_join(base, relative)?;
    let real_base = base
        .canonicalize()
        .map_err(|e| PathError(format!("the base directory: {e}"), false))?;
    let real = joined.canonicalize().map_err(|e| {
        PathError(
            format!("{relative:?}: {e}"),
            e.kind() == std::io::ErrorKind::NotFound,
        )
    })?;
    if !real.starts_with(&real_base) {
        return Err(PathError::refused(format!(
            "{relative:?} leads outside the base directory (through a symbolic link)"
        )));
    }
    Ok(real)
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

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_base_are_refused() {
        let root = std::env::temp_dir().join(format!("resolve-within-{}", std::process::id()));
        let base = root.join("base");
        std::fs::create_dir_all(base.join("inner")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(root.join("outside/secret.txt"), "s").unwrap();
        std::fs::write(base.join("inner/ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(root.join("outside"), base.join("link")).unwrap();
        std::os::unix::fs::symlink(base.join("inner"), base.join("inner_link")).unwrap();
        assert!(resolve_within(&base, "inner/ok.txt").is_ok());
        assert!(
            resolve_within(&base, "inner_link/ok.txt").is_ok(),
            "links inside are fine"
        );
        let e = resolve_within(&base, "link/secret.txt").unwrap_err();
        assert!(
            !e.is_not_found() && e.to_string().contains("outside"),
            "{e}"
        );
        assert!(
            safe_join(&base, "link/secret.txt").is_ok(),
            "lexically fine"
        );
        assert!(
            resolve_within(&base, "inner/none.txt")
                .unwrap_err()
                .is_not_found()
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
