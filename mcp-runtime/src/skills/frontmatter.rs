//! A `SKILL.md`'s YAML frontmatter: found, parsed into JSON, and checked against the Agent
//! Skills rules this extension relies on.

use serde_json::{Map, Value};

/// The reserved prefix of `metadata` keys (SEP-2640 defines none under it).
const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// The longest `description` the Agent Skills specification allows, in characters.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The YAML between the leading `---` line and the next `---` line (a UTF-8 BOM before the
/// first is allowed); `None` when the file does not begin with a frontmatter block.
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    // The closing line is `---` with optional trailing blanks, at a line start.
    let mut line_start = 0;
    for line in body.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim_end_matches([' ', '\t']) == "---" {
            let yaml = &body[..line_start];
            return Some(
                yaml.strip_suffix('\n')
                    .map_or(yaml, |y| y.strip_suffix('\r').unwrap_or(y)),
            );
        }
        line_start += line.len();
    }
    None
}

/// The frontmatter of `text` as a JSON object, verbatim (every field the author wrote).
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = block(text).ok_or("SKILL.md does not begin with a `---` frontmatter block")?;
    match yaml_to_json(yaml)? {
        Value::Object(map) => Ok(map),
        other => Err(format!(
            "the frontmatter must be a YAML mapping, not {}",
            kind(&other)
        )),
    }
}

#[cfg(feature = "skills")]
fn yaml_to_json(yaml: &str) -> Result<Value, String> {
    serde_norway::from_str(yaml).map_err(|e| {
        format!("the frontmatter is not valid YAML (or not representable as JSON): {e}")
    })
}

/// Without the YAML parser [`SkillCatalog::scan`](super::SkillCatalog::scan) refuses the directory
/// before reading any frontmatter; this keeps `parse` total all the same.
#[cfg(not(feature = "skills"))]
fn yaml_to_json(_yaml: &str) -> Result<Value, String> {
    Err(super::NEEDS_FEATURE.into())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The Agent Skills naming rule: 1–64 of `a-z 0-9 -`, no leading, trailing or doubled hyphen.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Checks what SEP-2640 requires of a skill's frontmatter: a valid `name` equal to the
/// directory's name, a non-empty `description`, and no `metadata` key under the reserved
/// prefix.
pub(crate) fn check(frontmatter: &Map<String, Value>, dir_name: &str) -> Result<(), String> {
    let name = match frontmatter.get("name") {
        Some(Value::String(name)) => name,
        Some(_) => return Err("`name` must be a string".into()),
        None => return Err("the frontmatter has no `name`".into()),
    };
    if !valid_name(name) {
        return Err(format!(
            "`name: {name}` breaks the naming rules: 1 to 64 of a-z 0-9 and `-`, with no leading, trailing or consecutive `-`"
        ));
    }
    if name != dir_name {
        return Err(format!(
            "`name: {name}` must equal the skill's directory name `{dir_name}`"
        ));
    }
    match frontmatter.get("description") {
        Some(Value::String(d)) if d.trim().is_empty() => {
            return Err("`description` is empty".into());
        }
        Some(Value::String(d)) if d.chars().count() > MAX_DESCRIPTION_CHARS => {
            return Err(format!(
                "`description` is longer than {MAX_DESCRIPTION_CHARS} characters"
            ));
        }
        Some(Value::String(_)) => {}
        Some(_) => return Err("`description` must be a string".into()),
        None => return Err("the frontmatter has no `description`".into()),
    }
    if let Some(Value::Object(metadata)) = frontmatter.get("metadata")
        && let Some(key) = metadata
            .keys()
            .find(|k| k.starts_with(RESERVED_METADATA_PREFIX))
    {
        return Err(format!(
            "`metadata` key `{key}`: keys under `{RESERVED_METADATA_PREFIX}` are reserved for MCP extensions"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_block() {
        assert_eq!(block("---\nname: a\n---\nbody"), Some("name: a"));
        assert_eq!(
            block("\u{feff}---\r\nname: a\r\n--- \r\nbody"),
            Some("name: a")
        );
        assert_eq!(block("---\nname: a\n---"), Some("name: a"));
        assert_eq!(block("---\nname: a\n----\n"), None);
        assert_eq!(block("# title\n---\nname: a\n---\n"), None);
    }

    #[cfg(feature = "skills")]
    #[test]
    fn parses_yaml_into_json_verbatim() {
        let fm = parse("---\nname: x\ndescription: >\n  folded\n  text\nmetadata:\n  version: \"2.1\"\n  n: 3\n---\n").unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "x", "description": "folded text\n", "metadata": {"version": "2.1", "n": 3}})
        );
        assert!(parse("---\n- a\n---\n").unwrap_err().contains("mapping"));
        assert!(parse("---\nname: [\n---\n").unwrap_err().contains("YAML"));
        assert!(parse("no frontmatter").is_err());
    }

    #[test]
    fn names() {
        for good in ["a", "pdf-processing", "x9", &"a".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn checks() {
        let ok = json!({"name": "a", "description": "d"});
        assert!(check(ok.as_object().unwrap(), "a").is_ok());
        let mismatch = check(ok.as_object().unwrap(), "b").unwrap_err();
        assert!(mismatch.contains("directory name"), "{mismatch}");
        let no_desc = json!({"name": "a"});
        assert!(check(no_desc.as_object().unwrap(), "a").is_err());
        let reserved =
            json!({"name": "a", "description": "d", "metadata": {"io.modelcontextprotocol/x": 1}});
        assert!(
            check(reserved.as_object().unwrap(), "a")
                .unwrap_err()
                .contains("reserved")
        );
    }
}
