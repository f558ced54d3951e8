//! [`BuildError`]: why a server could not be built from what is registered.

use std::fmt;

/// Start-up errors found while collecting registrations.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name.
    DuplicateTool {
        /// The name.
        name: String,
        /// Where each is defined (`file:line`).
        locations: Vec<String>,
    },
    /// A tool name breaks the rules (1–128 characters of `A-Z a-z 0-9 _ - .`).
    InvalidToolName {
        /// The name.
        name: String,
        /// Where it is defined.
        location: String,
    },
    /// Two resources (or templates) share a URI, or two prompts a name.
    Duplicate {
        /// `"resource"` or `"prompt"`.
        kind: &'static str,
        /// The URI or name.
        key: String,
        /// Where each is defined.
        locations: Vec<String>,
    },
    /// A tool's `input_schema` is not a JSON object schema (`"type": "object"`).
    InvalidInputSchema {
        /// The tool.
        name: String,
        /// Where it is defined.
        location: String,
    },
    /// A key given to `request_state_key` or `request_state_keys` is shorter than 32 bytes (a
    /// short key makes `requestState` forgeable).
    WeakRequestStateKey {
        /// Its position in the ring, from 0.
        index: usize,
        /// Its length in bytes.
        len: usize,
    },
    /// `request_state_keys` was given no key.
    NoRequestStateKeys,
    /// `request_state_audience` was given an empty audience.
    EmptyRequestStateAudience,
    /// A tool's `x-mcp-header` annotation breaks the spec's constraints.
    InvalidHeaderParam {
        /// The tool.
        name: String,
        /// Where it is defined.
        location: String,
        /// Which constraint.
        reason: String,
    },
    /// A handler elicits (`ctx.elicit::<T>`) a type that is not a flat form. No longer
    /// produced: a form is checked when it is asked for (the ask fails with the reason), and in
    /// tests with [`testing::check_form`](crate::testing::check_form).
    InvalidForm {
        /// The tool, resource or prompt.
        owner: String,
        /// Where it is defined.
        location: String,
        /// What is wrong with the type.
        reason: String,
    },
    /// The skills directory ([`ServerBuilder::skills_dir`](crate::ServerBuilder::skills_dir))
    /// holds a skill that cannot be served as SEP-2640 requires (a bad or mismatched `name`,
    /// no frontmatter, too many files or bytes, a link leading outside the directory), or
    /// cannot be read at all.
    InvalidSkill {
        /// The skill's folder, relative to the skills directory (or the directory itself).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A resource URI template does not parse.
    InvalidTemplate {
        /// The template.
        template: String,
        /// Why.
        reason: String,
        /// Where it is defined.
        location: String,
    },
    /// [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus) on a builder whose
    /// [`Catalog`](crate::catalog::Catalog) handle has a bus attached already.
    ChangeBusAttached,
    /// An extension declared with
    /// [`ServerBuilder::extension`](crate::ServerBuilder::extension) has an identifier that is
    /// not `{vendor-prefix}/{name}`, or settings that are not a JSON object.
    InvalidExtension {
        /// The identifier as given.
        id: String,
        /// What is wrong.
        reason: String,
    },
    /// A tool's `ui = "ui://…"` names no registered resource (see [`apps`](crate::apps)).
    MissingAppResource {
        /// The tool.
        tool: String,
        /// The URI it names.
        uri: String,
        /// Where the tool is defined.
        location: String,
    },
    /// The name given to [`ServerBuilder::card_name`](crate::ServerBuilder::card_name) is not
    /// a reverse-DNS `namespace/name`.
    InvalidCardName {
        /// What is wrong.
        reason: String,
    },
    /// A [`ServerBuilder::mount`](crate::ServerBuilder::mount) prefix is empty, has characters
    /// a tool name cannot have (or a `/`), or is mounted twice.
    InvalidMount {
        /// The prefix as given.
        prefix: String,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::DuplicateTool { name, locations } => {
                write!(
                    f,
                    "duplicate tool name `{name}`, defined at {}",
                    locations.join(" and ")
                )
            }
            BuildError::InvalidToolName { name, location } => write!(
                f,
                "invalid tool name `{name}` at {location}: use 1 to 128 of A-Z a-z 0-9 _ - ."
            ),
            BuildError::Duplicate {
                kind,
                key,
                locations,
            } => {
                write!(
                    f,
                    "duplicate {kind} `{key}`, defined at {}",
                    locations.join(" and ")
                )
            }
            BuildError::InvalidInputSchema { name, location } => write!(
                f,
                "the input_schema of tool `{name}` at {location} must be a JSON object with \"type\": \"object\""
            ),
            BuildError::WeakRequestStateKey { index, len } => write!(
                f,
                "requestState key {} of the ring is {len} bytes; each key needs at least 32 \
                 random bytes (64 hex digits in MCP_REQUEST_STATE_KEYS)",
                index + 1
            ),
            BuildError::NoRequestStateKeys => f.write_str(
                "the requestState key ring is empty; give at least one key of 32 random bytes",
            ),
            BuildError::EmptyRequestStateAudience => {
                f.write_str("the requestState audience is empty; name the fleet (or leave it unset for the server's name)")
            }
            BuildError::InvalidHeaderParam {
                name,
                location,
                reason,
            } => write!(f, "tool `{name}` at {location}: {reason}"),
            BuildError::InvalidForm {
                owner,
                location,
                reason,
            } => write!(
                f,
                "`{owner}` at {location} elicits an invalid form: {reason}"
            ),
            BuildError::InvalidSkill { path, reason } => write!(f, "skill `{path}`: {reason}"),
            BuildError::InvalidTemplate {
                template,
                reason,
                location,
            } => {
                write!(
                    f,
                    "invalid URI template `{template}` at {location}: {reason}"
                )
            }
            BuildError::ChangeBusAttached => f.write_str(
                "change_bus: the server's Catalog handle has a change bus attached already",
            ),
            BuildError::InvalidExtension { id, reason } => {
                write!(f, "extension {id:?}: {reason}")
            }
            BuildError::InvalidCardName { reason } => write!(f, "card_name: {reason}"),
            BuildError::MissingAppResource {
                tool,
                uri,
                location,
            } => write!(
                f,
                "tool `{tool}` at {location} shows its results in the app `{uri}`, but no \
                 resource has that URI: register it with #[resource(\"{uri}\")]"
            ),
            BuildError::InvalidMount { prefix, reason } => {
                write!(f, "mount {prefix:?}: {reason}")
            }
        }
    }
}

impl std::error::Error for BuildError {}
