//! Agent skills served from a directory (the `io.modelcontextprotocol/skills` extension,
//! SEP-2640): each folder holding a `SKILL.md` is a skill, and every file in it is a resource
//! under `skill://<skill-path>/<file-path>`.
//!
//! The directory is scanned once, when the server is built ([`Catalog::scan`]): names,
//! frontmatter, sizes and SHA-256 digests are fixed from then on, so `skills/list` is a
//! listing that changes only with the program (cached like `tools/list`). A read goes back to
//! the disk through [`resolve_within`](crate::resource::resolve_within) and is refused unless
//! the bytes still have the listed digest: a host never gets content that contradicts the
//! listing, and editing a skill takes a restart.
//!
//! Anything in the directory that cannot be served correctly fails the build with
//! [`BuildError::InvalidSkill`](crate::BuildError::InvalidSkill) rather than being skipped:
//! a misnamed skill is a bug to see at start-up, not a silently missing skill.

mod catalog;
mod frontmatter;
mod scan;
mod uri;

pub(crate) use catalog::Catalog;

/// The extension's identifier under `capabilities.extensions`.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// At most this many files per skill, `SKILL.md` included (SEP-2640's limit).
pub(crate) const MAX_FILES_PER_SKILL: usize = 512;

/// At most this many bytes per skill, summed over its files (SEP-2640's limit: 16 MiB).
pub(crate) const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;
