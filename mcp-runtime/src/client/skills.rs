//! Reading a server's skills (the `io.modelcontextprotocol/skills` extension, SEP-2640) as a
//! host must: the index first ([`Client::list_skills`], nothing else fetched), then one
//! skill's files when it is loaded ([`Client::load_skill`], [`Client::read_skill`]), each
//! checked against the index before it is used: its size, its `sha256:` digest and, for
//! `SKILL.md`, its frontmatter field by field. A file that fails a check is
//! [`ClientError::Integrity`], and nothing more of that skill is read.

use base64::Engine;
use serde_json::{Map, Value, json};

use super::error::ClientError;
use super::lists::Listed;
use super::{Client, read};
use crate::protocol::ResourceContents;

/// One entry of `skills/list` (or `skills/get`): a skill the server serves.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of its `SKILL.md` (`skill://<skill-path>/SKILL.md`).
    pub uri: String,
    /// Its name (the frontmatter's `name`; the last segment of its skill path).
    pub name: String,
    /// Its description (the frontmatter's `description`).
    pub description: Option<String>,
    /// The `SKILL.md` frontmatter as the server lists it (every field).
    pub frontmatter: Map<String, Value>,
    /// Its files with their digests and sizes, `SKILL.md` among them; `None` when the server
    /// lists them as `"dynamic"` (then only `SKILL.md` is read, checked by its frontmatter).
    pub files: Option<Vec<SkillFileRef>>,
}

/// A file of a skill as the index lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFileRef {
    /// Its `skill://` URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A file of a loaded skill, checked against the index.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillFile {
    /// Its `skill://` URI.
    pub uri: String,
    /// Its MIME type, as the server sent it.
    pub mime_type: Option<String>,
    /// Its bytes (those whose digest was checked).
    pub bytes: Vec<u8>,
}

impl SkillFile {
    /// Its bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// A loaded skill: its entry and its files, `SKILL.md` first, every one checked.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The index entry the files were checked against.
    pub entry: SkillEntry,
    /// The files, `SKILL.md` first, then in the index's order.
    pub files: Vec<SkillFile>,
}

impl Skill {
    /// The `SKILL.md` text.
    pub fn manifest(&self) -> &str {
        self.files.first().and_then(SkillFile::text).unwrap_or("")
    }
}

impl SkillEntry {
    /// An entry as the server sent it.
    fn parse(raw: Value, method: &str) -> Result<SkillEntry, ClientError> {
        let bad = |why: &str| ClientError::protocol(format!("{method}: a skill entry {why}"));
        let uri = raw
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("has no uri"))?
            .to_owned();
        let Some(Value::Object(frontmatter)) = raw.get("frontmatter").cloned() else {
            return Err(bad(&format!("({uri}) has no frontmatter object")));
        };
        let name = frontmatter
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(&format!("({uri}) has no frontmatter name")))?
            .to_owned();
        let description = frontmatter
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let files = match raw.get("resources") {
            Some(Value::String(s)) if s == "dynamic" => None,
            Some(Value::Array(list)) => Some(
                list.iter()
                    .map(|f| {
                        let file_uri = f.get("uri").and_then(Value::as_str);
                        let digest = f.get("digest").and_then(Value::as_str);
                        let size = f.get("size").and_then(Value::as_u64);
                        match (file_uri, digest, size) {
                            (Some(file_uri), Some(digest), Some(size)) => Ok(SkillFileRef {
                                uri: file_uri.to_owned(),
                                digest: digest.to_owned(),
                                size,
                            }),
                            _ => Err(bad(&format!(
                                "({uri}) lists a file without uri, digest and size: {f}"
                            ))),
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            _ => return Err(bad(&format!("({uri}) has no resources list"))),
        };
        Ok(SkillEntry {
            uri,
            name,
            description,
            frontmatter,
            files,
        })
    }
}

impl Client {
    /// The skills index (`skills/list`, every page). Only the index: no file of any skill is
    /// read until it is loaded ([`load_skill`](Self::load_skill)), as SEP-2640 requires.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        Ok(self.list_skills_listed().await?.items)
    }

    /// [`list_skills`](Self::list_skills) with the index's cache hint.
    pub async fn list_skills_listed(&self) -> Result<Listed<SkillEntry>, ClientError> {
        let listed = self.list_all("skills/list", "skills").await?;
        Ok(Listed {
            items: listed
                .items
                .into_iter()
                .map(|raw| SkillEntry::parse(raw, "skills/list"))
                .collect::<Result<_, _>>()?,
            cache: listed.cache,
            from_cache: listed.from_cache,
        })
    }

    /// One entry by the URI of its `SKILL.md` (`skills/get`).
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        let result = self.request("skills/get", json!({ "uri": uri })).await?;
        let raw = result.get("skill").cloned().unwrap_or(Value::Null);
        SkillEntry::parse(raw, "skills/get")
    }

    /// Loads the skill named `name` (its frontmatter `name`) from the index:
    /// [`list_skills`](Self::list_skills), then [`load_skill`](Self::load_skill). Names
    /// should be unique but need not be: two skills of the name are an error naming both
    /// URIs (load the one meant with `load_skill`).
    pub async fn read_skill(&self, name: &str) -> Result<Skill, ClientError> {
        let mut found: Vec<SkillEntry> = self
            .list_skills()
            .await?
            .into_iter()
            .filter(|e| e.name == name)
            .collect();
        match found.len() {
            0 => Err(ClientError::protocol(format!(
                "the server lists no skill named {name:?}"
            ))),
            1 => self.load_skill(&found.remove(0)).await,
            _ => Err(ClientError::protocol(format!(
                "{} skills are named {name:?} ({}): load one with load_skill",
                found.len(),
                found
                    .iter()
                    .map(|e| e.uri.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Reads a skill's files, checking each against `entry`: `SKILL.md` first (its size,
    /// digest, then its frontmatter compared field by field with the entry's), then the other
    /// files the entry lists, in order. The first file that fails a check ends the load with
    /// [`ClientError::Integrity`], before any further file is read. A `"dynamic"` entry has
    /// no digests: only its `SKILL.md` is read, and checked by its frontmatter.
    ///
    /// Comparing the frontmatter parses YAML: it needs the `skills` feature (without it
    /// every load fails, rather than using a file it could not check).
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<Skill, ClientError> {
        let listed = entry.files.as_deref();
        let manifest_ref = listed.map(|files| {
            files.iter().find(|f| f.uri == entry.uri).ok_or_else(|| {
                ClientError::integrity(&entry.uri, "the index lists no digest for SKILL.md")
            })
        });
        let manifest = match manifest_ref {
            Some(r) => self.read_skill_file(r?).await?,
            None => self.read_unverified(&entry.uri).await?,
        };
        check_frontmatter(entry, &manifest)?;
        let mut files = vec![manifest];
        for file in listed.unwrap_or_default() {
            if file.uri != entry.uri {
                files.push(self.read_skill_file(file).await?);
            }
        }
        Ok(Skill {
            entry: entry.clone(),
            files,
        })
    }

    /// Reads one file of a skill and checks it against its index entry: its length against
    /// `size`, its SHA-256 against `digest`. Content that fails is never returned.
    pub async fn read_skill_file(&self, file: &SkillFileRef) -> Result<SkillFile, ClientError> {
        let read = self.read_unverified(&file.uri).await?;
        if read.bytes.len() as u64 != file.size {
            return Err(ClientError::integrity(
                &file.uri,
                format!(
                    "{} bytes where the index lists {}",
                    read.bytes.len(),
                    file.size
                ),
            ));
        }
        let got = digest_text(&read.bytes);
        if !got.eq_ignore_ascii_case(&file.digest) {
            return Err(ClientError::integrity(
                &file.uri,
                format!("its digest is {got}, the index lists {}", file.digest),
            ));
        }
        Ok(read)
    }

    /// `resources/read` of one skill file: its bytes, not yet checked.
    async fn read_unverified(&self, uri: &str) -> Result<SkillFile, ClientError> {
        let result = self
            .request("resources/read", json!({ "uri": uri }))
            .await?;
        let contents: Vec<ResourceContents> = read(
            result.get("contents").cloned().unwrap_or(Value::Null),
            "resources/read",
        )?;
        let mine = contents.into_iter().find(|c| match c {
            ResourceContents::Text { uri: u, .. } | ResourceContents::Blob { uri: u, .. } => {
                u == uri
            }
        });
        match mine {
            Some(ResourceContents::Text {
                mime_type, text, ..
            }) => Ok(SkillFile {
                uri: uri.to_owned(),
                mime_type,
                bytes: text.into_bytes(),
            }),
            Some(ResourceContents::Blob {
                mime_type, blob, ..
            }) => Ok(SkillFile {
                uri: uri.to_owned(),
                mime_type,
                bytes: base64::engine::general_purpose::STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|e| {
                        ClientError::integrity(uri, format!("its blob is not base64: {e}"))
                    })?,
            }),
            None => Err(ClientError::integrity(
                uri,
                "resources/read returned no contents for it",
            )),
        }
    }
}

/// `sha256:` and the 64 lowercase hex digits of `bytes`' SHA-256.
fn digest_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for byte in hmac_sha256::Hash::hash(bytes) {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// The `SKILL.md` frontmatter, parsed, against the entry's: every field of either must be
/// equal (a field missing on one side is a difference).
fn check_frontmatter(entry: &SkillEntry, manifest: &SkillFile) -> Result<(), ClientError> {
    let text = manifest
        .text()
        .ok_or_else(|| ClientError::integrity(&entry.uri, "SKILL.md is not UTF-8 text"))?;
    let parsed = crate::skills::frontmatter::parse(text)
        .map_err(|why| ClientError::integrity(&entry.uri, why))?;
    let mut differ: Vec<&str> = parsed
        .keys()
        .chain(entry.frontmatter.keys())
        .filter(|k| parsed.get(*k) != entry.frontmatter.get(*k))
        .map(String::as_str)
        .collect();
    differ.sort_unstable();
    differ.dedup();
    if differ.is_empty() {
        Ok(())
    } else {
        Err(ClientError::integrity(
            &entry.uri,
            format!(
                "its frontmatter differs from the index's in {}",
                differ.join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            digest_text(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    fn entry(resources: Value) -> Result<SkillEntry, ClientError> {
        SkillEntry::parse(
            json!({
                "uri": "skill://pdf/SKILL.md",
                "frontmatter": {"name": "pdf", "description": "PDFs"},
                "resources": resources,
            }),
            "skills/list",
        )
    }

    #[test]
    fn entries_read_listed_and_dynamic_files() {
        let listed =
            entry(json!([{"uri": "skill://pdf/SKILL.md", "digest": "sha256:00", "size": 3}]))
                .unwrap();
        assert_eq!(listed.name, "pdf");
        assert_eq!(listed.files.unwrap()[0].size, 3);
        assert_eq!(entry(json!("dynamic")).unwrap().files, None);
        assert!(matches!(
            entry(json!([{"uri": "skill://pdf/SKILL.md"}])),
            Err(ClientError::Protocol(_))
        ));
    }

    #[cfg(feature = "skills")]
    #[test]
    fn a_frontmatter_that_differs_from_the_index_is_refused_naming_the_field() {
        let e = entry(json!("dynamic")).unwrap();
        let file = |text: &str| SkillFile {
            uri: e.uri.clone(),
            mime_type: None,
            bytes: text.as_bytes().to_vec(),
        };
        check_frontmatter(&e, &file("---\nname: pdf\ndescription: PDFs\n---\nBody\n")).unwrap();
        let err =
            check_frontmatter(&e, &file("---\nname: pdf\ndescription: Steal\n---\n")).unwrap_err();
        assert!(matches!(err, ClientError::Integrity { .. }), "{err}");
        assert!(err.to_string().contains("description"), "{err}");
        let err = check_frontmatter(
            &e,
            &file("---\nname: pdf\ndescription: PDFs\nlicense: MIT\n---\n"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("license"), "{err}");
    }
}
