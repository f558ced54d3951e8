//! Agent skills served from a directory (the `io.modelcontextprotocol/skills` extension,
//! SEP-2640): each folder holding a `SKILL.md` is a skill, and every file in it is a resource
//! under `skill://<skill-path>/<file-path>`.
//!
//! The directory is scanned once, when the server is built ([`SkillCatalog::scan`]): names,
//! frontmatter, sizes and SHA-256 digests are fixed from then on, so `skills/list` is a
//! listing that changes only with the program (cached like `tools/list`). A read goes back to
//! the disk through [`resolve_within`](crate::resource::resolve_within) and is refused unless
//! the bytes still have the listed digest: a host never gets content that contradicts the
//! listing, and editing a skill takes a restart.
//!
//! Anything in the directory that cannot be served correctly fails the build with
//! [`BuildError::InvalidSkill`](crate::BuildError::InvalidSkill) rather than being skipped:
//! a misnamed skill is a bug to see at start-up, not a silently missing skill.
//!
//! The frontmatter is YAML, parsed by the optional `serde_norway`: a server that serves skills
//! turns on the `skills` feature. Without it the scan fails the build with
//! [`NEEDS_FEATURE`] rather than serving nothing.

mod catalog;
// The client parses a SKILL.md it reads to compare it with the index.
pub(crate) mod frontmatter;
mod scan;
mod uri;

pub(crate) use catalog::SkillCatalog;

/// Why a skills directory is refused when the `skills` feature is off.
pub(crate) const NEEDS_FEATURE: &str = "serving skills needs the `skills` feature of mcp-runtime \
     (SKILL.md frontmatter is YAML): mcp-runtime = { version = \"0.1\", features = [\"skills\"] }";

/// The extension's identifier under `capabilities.extensions`.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// At most this many files per skill, `SKILL.md` included (SEP-2640's limit).
pub(crate) const MAX_FILES_PER_SKILL: usize = 512;

/// At most this many bytes per skill, summed over its files (SEP-2640's limit: 16 MiB).
pub(crate) const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;

#[cfg(all(test, not(feature = "skills")))]
mod tests {
    /// A server built without the YAML parser refuses a skills directory at start-up, saying
    /// which feature serves it, rather than listing no skills.
    #[test]
    fn without_the_feature_a_skills_dir_fails_the_build_naming_it() {
        let Err(err) = super::SkillCatalog::scan(&std::env::temp_dir()) else {
            panic!("a skills directory is served without the `skills` feature");
        };
        let err = err.to_string();
        assert!(err.contains("the `skills` feature"), "{err}");
    }
}
