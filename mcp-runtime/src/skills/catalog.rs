//! The scanned skills: `skills/list` entries, the served files with their digests, and the
//! directory listings, all computed once.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Value, json};

use super::scan::{Segments, walk};
use super::uri::{DIRECTORY_MIME, mime_for, skill_uri};
use super::{MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, frontmatter};
use crate::registry::BuildError;
use crate::resource::resolve_within;

/// One file a skill serves.
#[derive(Clone, Debug)]
pub(crate) struct ServedFile {
    /// Its path below the skills directory, `/`-separated.
    rel: String,
    size: u64,
    digest: [u8; 32],
    pub(crate) mime: &'static str,
    /// Whether its bytes are UTF-8 (served as `text`, else as a base64 `blob`).
    pub(crate) is_text: bool,
}

/// The skills of one directory.
pub(crate) struct SkillCatalog {
    root: PathBuf,
    /// `skills/list` entries, by `SKILL.md` URI.
    entries: Vec<Box<RawValue>>,
    by_uri: HashMap<String, usize>,
    files: HashMap<String, ServedFile>,
    dirs: HashMap<String, Vec<Box<RawValue>>>,
    /// The `SKILL.md` of each skill as a `Resource` (for `resources/list`).
    manifests: Vec<Box<RawValue>>,
}

fn invalid(path: impl Into<String>, reason: impl Into<String>) -> BuildError {
    BuildError::InvalidSkill {
        path: path.into(),
        reason: reason.into(),
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    to_raw_value(value).expect("JSON values serialize")
}

/// `sha256:` and 64 lowercase hex digits.
fn digest_text(digest: &[u8; 32]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Reads at most `limit` bytes of `path`; more is an error.
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {limit} bytes"));
    }
    Ok(bytes)
}

impl SkillCatalog {
    /// Scans `root`: every folder holding a `SKILL.md` is a skill. Errors name the skill and
    /// what is wrong (see the module docs for the rules).
    pub(crate) fn scan(root: &Path) -> Result<SkillCatalog, BuildError> {
        let shown = root.display().to_string();
        if !cfg!(feature = "skills") {
            return Err(invalid(shown, super::NEEDS_FEATURE));
        }
        if !root.is_dir() {
            return Err(invalid(
                shown,
                "the skills directory does not exist or is not a directory",
            ));
        }
        let tree = walk(root).map_err(|e| invalid(&shown, e))?;
        let mut loaded: BTreeMap<Segments, ServedFile> = BTreeMap::new();
        let mut catalog = SkillCatalog {
            root: root.to_path_buf(),
            entries: Vec::new(),
            by_uri: HashMap::new(),
            files: HashMap::new(),
            dirs: HashMap::new(),
            manifests: Vec::new(),
        };
        // SKILL.md resource of each skill root, for its directory listing.
        let mut manifest_of: HashMap<Segments, Value> = HashMap::new();
        for skill in &tree.skills {
            let path = skill.join("/");
            if let Some((bad, why)) = tree.refused.iter().find(|(r, _)| r.starts_with(skill)) {
                return Err(invalid(&path, format!("`{}`: {why}", bad.join("/"))));
            }
            let files: Vec<&Segments> = tree
                .files
                .range(skill.clone()..)
                .take_while(|f| f.starts_with(skill))
                .collect();
            if files.len() > MAX_FILES_PER_SKILL {
                return Err(invalid(
                    &path,
                    format!(
                        "{} files; a skill may have at most {MAX_FILES_PER_SKILL}",
                        files.len()
                    ),
                ));
            }
            let mut total = 0u64;
            for file in &files {
                let served = match loaded.get(*file) {
                    Some(served) => served.clone(),
                    None => {
                        let served = load(root, file, MAX_BYTES_PER_SKILL - total)
                            .map_err(|e| invalid(&path, format!("`{}`: {e}", file.join("/"))))?;
                        loaded.insert((*file).clone(), served.clone());
                        served
                    }
                };
                total = total.saturating_add(served.size);
                if total > MAX_BYTES_PER_SKILL {
                    return Err(invalid(
                        &path,
                        format!(
                            "its files add up to more than {MAX_BYTES_PER_SKILL} bytes (16 MiB)"
                        ),
                    ));
                }
            }
            let mut manifest_path = skill.clone();
            manifest_path.push("SKILL.md".into());
            let text = resolve_within(root, &manifest_path.join("/"))
                .map_err(|e| e.to_string())
                .and_then(|file| read_bounded(&file, MAX_BYTES_PER_SKILL))
                .map_err(|e| invalid(&path, format!("SKILL.md: {e}")))?;
            let text = String::from_utf8(text)
                .map_err(|_| invalid(&path, "SKILL.md is not UTF-8 text"))?;
            let fm = frontmatter::parse(&text).map_err(|e| invalid(&path, e))?;
            let dir_name = skill.last().expect("skills are below the root");
            frontmatter::check(&fm, dir_name).map_err(|e| invalid(&path, e))?;
            let uri = skill_uri(&manifest_path);
            // SKILL.md first, then the other files in path order.
            let mut resources = Vec::with_capacity(files.len());
            let manifest = &loaded[&manifest_path];
            resources.push(
                json!({"uri": uri, "digest": digest_text(&manifest.digest), "size": manifest.size}),
            );
            for file in files.iter().filter(|f| ***f != manifest_path) {
                let served = &loaded[*file];
                resources.push(json!({
                    "uri": skill_uri(file),
                    "digest": digest_text(&served.digest),
                    "size": served.size,
                }));
            }
            let resource = json!({
                "uri": uri,
                "name": fm["name"],
                "description": fm["description"],
                "mimeType": "text/markdown",
                "size": manifest.size,
            });
            catalog.manifests.push(raw(&resource));
            manifest_of.insert(skill.clone(), resource);
            let entry =
                json!({"uri": uri, "frontmatter": Value::Object(fm), "resources": resources});
            catalog.by_uri.insert(uri, catalog.entries.len());
            catalog.entries.push(raw(&entry));
        }
        // Directory listings: every folder on the way to a served file.
        let mut children: BTreeMap<Segments, BTreeMap<String, bool>> = BTreeMap::new();
        for file in loaded.keys() {
            for depth in 1..file.len() {
                let is_dir = depth + 1 < file.len();
                children
                    .entry(file[..depth].to_vec())
                    .or_default()
                    .insert(file[depth].clone(), is_dir);
            }
        }
        for (dir, names) in children {
            let listing = names
                .into_iter()
                .map(|(name, is_dir)| {
                    let mut path = dir.clone();
                    path.push(name.clone());
                    let uri = skill_uri(&path);
                    if is_dir {
                        return raw(&json!({"uri": uri, "name": name, "mimeType": DIRECTORY_MIME}));
                    }
                    if name == "SKILL.md"
                        && let Some(resource) = manifest_of.get(&dir)
                    {
                        return raw(resource);
                    }
                    let served = &loaded[&path];
                    raw(&json!({"uri": uri, "name": name, "mimeType": served.mime, "size": served.size}))
                })
                .collect();
            catalog.dirs.insert(skill_uri(&dir), listing);
        }
        catalog.files = loaded
            .into_iter()
            .map(|(segments, served)| (skill_uri(&segments), served))
            .collect();
        Ok(catalog)
    }

    /// The `skills/list` entries, in URI order.
    pub(crate) fn entries(&self) -> &[Box<RawValue>] {
        &self.entries
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`.
    pub(crate) fn entry(&self, uri: &str) -> Option<&RawValue> {
        self.by_uri.get(uri).map(|&i| &*self.entries[i])
    }

    /// The served file at `uri` (an exact match: no decoding, no normalization).
    pub(crate) fn file(&self, uri: &str) -> Option<&ServedFile> {
        self.files.get(uri)
    }

    /// The direct children of the directory at `uri`, as `Resource`s.
    pub(crate) fn directory(&self, uri: &str) -> Option<&[Box<RawValue>]> {
        self.dirs.get(uri).map(Vec::as_slice)
    }

    /// Each skill's `SKILL.md` as a `Resource` (name and description from its frontmatter).
    pub(crate) fn manifests(&self) -> &[Box<RawValue>] {
        &self.manifests
    }

    /// The bytes of `file`, read again from the disk through [`resolve_within`] (a link
    /// swapped in since the scan cannot lead outside the directory) and checked against the
    /// listed size and digest.
    pub(crate) fn read(&self, file: &ServedFile) -> Result<Vec<u8>, String> {
        let path = resolve_within(&self.root, &file.rel).map_err(|e| e.to_string())?;
        let changed = || {
            format!(
                "{} changed since the server started; restart it to serve the new content",
                file.rel
            )
        };
        let bytes = read_bounded(&path, file.size).map_err(|e| {
            if e.starts_with("larger") {
                changed()
            } else {
                format!("{}: {e}", file.rel)
            }
        })?;
        let digest = hmac_sha256::Hash::hash(&bytes);
        if bytes.len() as u64 != file.size || digest != file.digest {
            return Err(changed());
        }
        Ok(bytes)
    }
}

/// Reads one file for the scan (at most `budget` bytes): its size, digest and type.
fn load(root: &Path, segments: &Segments, budget: u64) -> Result<ServedFile, String> {
    let rel = segments.join("/");
    let path = resolve_within(root, &rel).map_err(|e| e.to_string())?;
    let bytes = read_bounded(&path, budget).map_err(|e| {
        if e.starts_with("larger") {
            format!("the skill's files add up to more than {MAX_BYTES_PER_SKILL} bytes (16 MiB)")
        } else {
            e
        }
    })?;
    let is_text = std::str::from_utf8(&bytes).is_ok();
    let name = segments.last().map_or("", String::as_str);
    Ok(ServedFile {
        mime: mime_for(name, is_text),
        is_text,
        size: bytes.len() as u64,
        digest: hmac_sha256::Hash::hash(&bytes),
        rel,
    })
}

impl std::fmt::Debug for SkillCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillCatalog")
            .field("root", &self.root)
            .field("skills", &self.entries.len())
            .finish_non_exhaustive()
    }
}
