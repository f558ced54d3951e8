//! Waiting for a source file of the package to change: notify's recommended watcher on the
//! package's directory, with the target directory, hidden directories (`.git`), editors'
//! scratch files and `Cargo.lock` (which cargo itself rewrites) left out.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::Failure;

/// A watch on a directory tree.
pub(crate) struct Watch {
    _watcher: notify::RecommendedWatcher,
    events: mpsc::Receiver<PathBuf>,
}

/// Whether a change to `path` is a change to the sources (under `root`, outside `target`).
fn counts(path: &Path, root: &Path, target: &Path) -> bool {
    if path.starts_with(target) {
        return false;
    }
    let inside = path.strip_prefix(root).unwrap_or(path);
    let hidden = inside
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let scratch = name.ends_with('~') || name.ends_with(".swp") || name.starts_with(".#");
    // Cargo rewrites Cargo.lock itself when it builds: a change there is not a source change.
    !hidden && !scratch && name != "Cargo.lock"
}

impl Watch {
    /// Watches `root` recursively, leaving out `target` (the target directory).
    pub(crate) fn new(root: &Path, target: &Path) -> Result<Watch, Failure> {
        let (tx, events) = mpsc::channel();
        let (root_owned, target_owned) = (root.to_owned(), target.to_owned());
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                for path in event.paths {
                    if counts(&path, &root_owned, &target_owned) {
                        let _ = tx.send(path);
                    }
                }
            })
            .map_err(|e| Failure::new(format!("cannot watch files: {e}")))?;
        watcher
            .watch(root, RecursiveMode::Recursive)
            .map_err(|e| Failure::new(format!("cannot watch {}: {e}", root.display())))?;
        Ok(Watch {
            _watcher: watcher,
            events,
        })
    }

    /// Blocks until a source file changes, then lets a burst of changes (an editor's save, a
    /// `git checkout`) settle, and returns the first path that changed.
    pub(crate) fn next_change(&self) -> Option<PathBuf> {
        let first = self.events.recv().ok()?;
        while self.events.recv_timeout(Duration::from_millis(200)).is_ok() {}
        Some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_hidden_and_scratch_files_do_not_count() {
        let (root, target) = (Path::new("/p"), Path::new("/p/target"));
        assert!(counts(Path::new("/p/src/main.rs"), root, target));
        assert!(counts(Path::new("/p/Cargo.toml"), root, target));
        assert!(!counts(Path::new("/p/target/debug/x"), root, target));
        assert!(!counts(Path::new("/p/.git/index"), root, target));
        assert!(!counts(Path::new("/p/src/main.rs~"), root, target));
        assert!(!counts(Path::new("/p/src/.main.rs.swp"), root, target));
        assert!(!counts(Path::new("/p/Cargo.lock"), root, target));
    }
}
