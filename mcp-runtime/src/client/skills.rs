//! Reading a server's skills (the `io.modelcontextprotocol/skills` extension, SEP-2640) as a
//! host must: the index first ([`Client::list_skills`], nothing else fetched), a skill's
//! `SKILL.md` when it is loaded ([`Client::load_skill`]), and a supporting file when it is
//! read ([`Client::read_skill_file`]), each checked against the index entry before it is
//! used: its `sha256:` digest, its size when the entry gives one and, for `SKILL.md`, its
//! frontmatter field by field; a file the entry does not list is refused too. A file that
//! fails is [`ClientError::Integrity`], and its content is never returned.
//! [`Client::read_skill`] does all of it for a whole skill at once, for a host that
//! materializes a skill (SEP-2640 asks hosts not to fetch files ahead of need: prefer
//! `load_skill` and `read_skill_file` when files are read as the model asks for them).

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
    /// Its files with their digests, `SKILL.md` among them; `None` for a skill generated
    /// dynamically (its `resources` left out, or `"dynamic"`): then only its `SKILL.md` can be
    /// loaded, checked by its frontmatter alone, and no other file read.
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
    /// Its length in bytes, when the index gives it (checked then).
    pub size: Option<u64>,
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

/// A loaded skill: its entry and the files read so far, `SKILL.md` first, every one checked.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The index entry the files were checked against.
    pub entry: SkillEntry,
    /// `SKILL.md`, then (from [`Client::read_skill`]) the other files in the index's order.
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
            None | Some(Value::String(_)) => None,
            Some(Value::Array(list)) => Some(
                list.iter()
                    .map(|f| {
                        let file_uri = f.get("uri").and_then(Value::as_str);
                        let digest = f.get("digest").and_then(Value::as_str);
                        let size = f.get("size").and_then(Value::as_u64);
                        match (file_uri, digest) {
                            (Some(file_uri), Some(digest)) => Ok(SkillFileRef {
                                uri: file_uri.to_owned(),
                                digest: digest.to_owned(),
                                size,
                            }),
                            _ => Err(bad(&format!(
                                "({uri}) lists a file without uri and digest: {f}"
                            ))),
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(other) => {
                return Err(bad(&format!(
                    "({uri}) has resources that are not a list: {other}"
                )));
            }
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

    /// The whole skill named `name` (its frontmatter `name`): [`list_skills`](Self::list_skills),
    /// [`load_skill`](Self::load_skill), then every other file the entry lists, each checked,
    /// stopping at the first that fails. Names should be unique but need not be: two skills
    /// of the name are an error naming both URIs (load the one meant with `load_skill`).
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
            1 => {
                let entry = found.remove(0);
                let mut skill = self.load_skill(&entry).await?;
                for file in entry.files.as_deref().unwrap_or_default() {
                    if file.uri != entry.uri {
                        skill
                            .files
                            .push(self.read_skill_file(&entry, &file.uri).await?);
                    }
                }
                Ok(skill)
            }
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

    /// Loads a skill: reads its `SKILL.md` and checks it against `entry` (its digest and size,
    /// then its frontmatter compared field by field with the entry's). No other file is read:
    /// [`read_skill_file`](Self::read_skill_file) reads one when it is needed. A file that
    /// fails is [`ClientError::Integrity`]. A dynamic entry has no digests: its `SKILL.md`
    /// is checked by its frontmatter alone.
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
            Some(r) => self.read_checked(r?).await?,
            None => self.read_unverified(&entry.uri).await?,
        };
        check_frontmatter(entry, &manifest)?;
        Ok(Skill {
            entry: entry.clone(),
            files: vec![manifest],
        })
    }

    /// Reads the file at `uri` of the skill `entry` describes, and checks it against the
    /// entry: its SHA-256 against the listed `digest`, its length against the listed `size`
    /// (when given). A file the entry does not list, or any file of a dynamic entry (no
    /// digests to check against), is refused without being read. Content that fails is
    /// never returned: [`ClientError::Integrity`]. To recover from a stale entry, ask for it
    /// again ([`get_skill`](Self::get_skill)).
    pub async fn read_skill_file(
        &self,
        entry: &SkillEntry,
        uri: &str,
    ) -> Result<SkillFile, ClientError> {
        let Some(files) = &entry.files else {
            return Err(ClientError::integrity(
                uri,
                "the skill is dynamic: its entry lists no digests to check the file against",
            ));
        };
        let Some(file) = files.iter().find(|f| f.uri == uri) else {
            return Err(ClientError::integrity(
                uri,
                format!("not a file {} lists", entry.uri),
            ));
        };
        self.read_checked(file).await
    }

    /// Reads one listed file and checks its size (when listed) and digest.
    async fn read_checked(&self, file: &SkillFileRef) -> Result<SkillFile, ClientError> {
        let read = self.read_unverified(&file.uri).await?;
        if let Some(size) = file.size
            && read.bytes.len() as u64 != size
        {
            return Err(ClientError::integrity(
                &file.uri,
                format!("{} bytes where the index lists {size}", read.bytes.len()),
            ));
        }
        let got = digest_text(&read.bytes);
        if got != file.digest {
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
        assert_eq!(listed.files.unwrap()[0].size, Some(3));
        assert_eq!(entry(json!("dynamic")).unwrap().files, None);
        let unsized_ = entry(json!([{"uri": "skill://pdf/SKILL.md", "digest": "sha256:00"}]));
        assert_eq!(unsized_.unwrap().files.unwrap()[0].size, None);
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
