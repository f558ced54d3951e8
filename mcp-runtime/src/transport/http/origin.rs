//! What an allowed origin may be: read when `MCP_ALLOWED_ORIGINS` is parsed (the configuration)
//! and when an endpoint starts with its `allowed_origins` (a warning). A file of its own, so the
//! configuration and the CORS answers, which read the configuration, do not import each other.

/// Why `origin` can never equal the `Origin` a browser sends (`scheme://host[:port]`, nothing
/// after it), if it cannot.
pub(crate) fn origin_problem(origin: &str) -> Option<String> {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return Some(format!(
            "{origin:?} is not an origin: it must start with http:// or https://"
        ));
    };
    let host_and_port = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    (!host_and_port).then(|| {
        format!("{origin:?} is not an origin: scheme://host[:port], with no path and no wildcard")
    })
}
