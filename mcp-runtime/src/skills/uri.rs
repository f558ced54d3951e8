//! `skill://` URIs from relative paths, and MIME types from file names.

/// The MIME type of a directory resource (`resources/directory/read`).
pub(crate) const DIRECTORY_MIME: &str = "inode/directory";

/// `skill://a/b/c` for the path segments `["a", "b", "c"]`. Each segment is percent-encoded
/// except for RFC 3986's unreserved characters, so a URI names exactly one path and a request
/// can be matched against the served set by plain string equality (a `%2e%2e` in a request
/// is then just a name no served file has).
pub(crate) fn skill_uri<S: AsRef<str>>(segments: &[S]) -> String {
    let mut out = String::from("skill://");
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        encode_segment(segment.as_ref(), &mut out);
    }
    out
}

fn encode_segment(segment: &str, out: &mut String) {
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// A MIME type for `file_name`: by extension, else by whether the bytes are text.
pub(crate) fn mime_for(file_name: &str, is_text: bool) -> &'static str {
    let ext = file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ if is_text => "text/plain",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(
            skill_uri(&["pdf-processing", "SKILL.md"]),
            "skill://pdf-processing/SKILL.md"
        );
        assert_eq!(
            skill_uri(&["a b", "100%.md", "é"]),
            "skill://a%20b/100%25.md/%C3%A9"
        );
        assert_eq!(skill_uri(&["x", "a/b"]), "skill://x/a%2Fb");
    }

    #[test]
    fn mime_types() {
        assert_eq!(mime_for("SKILL.md", true), "text/markdown");
        assert_eq!(mime_for("extract.PY", true), "text/x-python");
        assert_eq!(mime_for("LICENSE", true), "text/plain");
        assert_eq!(mime_for("data.bin", false), "application/octet-stream");
    }
}
