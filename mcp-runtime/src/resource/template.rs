//! RFC 6570 URI templates: parsing, and matching a URI against a template to recover its
//! variables (percent-decoded). Levels 1–3 plus the `*` and `:n` modifiers are understood; a
//! value matched by a simple `{var}` never spans a `/`, `{+var}` may.

use std::collections::HashMap;
use std::fmt;

/// An expression's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryCont,
            _ => return None,
        })
    }

    /// The text an expansion starts with.
    fn prefix(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query => "?",
            Op::QueryCont => "&",
        }
    }

    /// Whether a value may contain this (unencoded) character.
    fn allows(self, c: char, explode: bool) -> bool {
        match self {
            Op::Reserved => c != '?' && c != '#',
            Op::Fragment => true,
            Op::Path if explode => c != '?' && c != '#',
            _ => !matches!(c, '/' | '?' | '#' | '&'),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct VarSpec {
    name: String,
    explode: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<VarSpec> },
}

/// A parsed RFC 6570 URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    raw: String,
    parts: Vec<Part>,
}

/// Why a template is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

impl UriTemplate {
    /// Parses a template such as `tickets://{id}` or `search://items{?q,limit}`.
    pub fn parse(raw: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = raw;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(i) if rest.as_bytes()[i] == b'}' => {
                    return Err(TemplateError(format!("unmatched `}}` in {raw:?}")));
                }
                Some(i) => {
                    if i > 0 {
                        parts.push(Part::Literal(rest[..i].to_owned()));
                    }
                    let end = rest[i..]
                        .find('}')
                        .ok_or_else(|| TemplateError(format!("unclosed `{{` in {raw:?}")))?;
                    parts.push(parse_expr(&rest[i + 1..i + end], raw)?);
                    rest = &rest[i + end + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            raw: raw.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// Whether the template has any expression (otherwise it names one URI).
    pub fn has_variables(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Expr { .. }))
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().flat_map(|p| match p {
            Part::Expr { vars, .. } => vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            Part::Literal(_) => Vec::new(),
        })
    }

    /// Matches `uri`, returning the percent-decoded value of each variable present (query
    /// variables may be absent). `None` if the URI does not fit the template.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut out = HashMap::new();
        // Trailing query expressions match the URI's query string, in any order.
        let split = self
            .parts
            .iter()
            .rposition(|p| {
                !matches!(
                    p,
                    Part::Expr {
                        op: Op::Query | Op::QueryCont,
                        ..
                    }
                )
            })
            .map_or(0, |i| i + 1);
        let (path_parts, query_parts) = self.parts.split_at(split);
        let (path, query) = if query_parts.is_empty() {
            (uri, None)
        } else {
            match uri.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (uri, None),
            }
        };
        if !match_parts(path_parts, path, &mut out) {
            return None;
        }
        if let Some(query) = query {
            let pairs: HashMap<&str, &str> = query
                .split('&')
                .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
                .collect();
            for part in query_parts {
                if let Part::Expr { vars, .. } = part {
                    for v in vars {
                        if let Some(value) = pairs.get(v.name.as_str()) {
                            out.insert(v.name.clone(), percent_decode(value)?);
                        }
                    }
                }
            }
        }
        Some(out)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

fn parse_expr(body: &str, raw: &str) -> Result<Part, TemplateError> {
    let mut chars = body.chars();
    let (op, list) = match chars.next().and_then(Op::from_char) {
        Some(op) => (op, chars.as_str()),
        None => (Op::Simple, body),
    };
    if list.is_empty() {
        return Err(TemplateError(format!(
            "empty expression `{{{body}}}` in {raw:?}"
        )));
    }
    let mut vars = Vec::new();
    for spec in list.split(',') {
        let (name, explode) = match spec.strip_suffix('*') {
            Some(n) => (n, true),
            None => (spec, false),
        };
        let name = match name.split_once(':') {
            Some((n, len))
                if !len.is_empty() && len.len() <= 4 && len.bytes().all(|b| b.is_ascii_digit()) =>
            {
                n
            }
            Some(_) => {
                return Err(TemplateError(format!(
                    "bad prefix modifier in `{spec}` in {raw:?}"
                )));
            }
            None => name,
        };
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            && !name.starts_with('.')
            && !name.ends_with('.');
        if !valid {
            return Err(TemplateError(format!(
                "bad variable name `{name}` in {raw:?}"
            )));
        }
        vars.push(VarSpec {
            name: name.to_owned(),
            explode,
        });
    }
    Ok(Part::Expr { op, vars })
}

fn match_parts(parts: &[Part], s: &str, out: &mut HashMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return s.is_empty();
    };
    match first {
        Part::Literal(lit) => s
            .strip_prefix(lit.as_str())
            .is_some_and(|s| match_parts(rest, s, out)),
        Part::Expr { op, vars } => {
            let Some(s) = s.strip_prefix(op.prefix()) else {
                return false;
            };
            let explode = vars.iter().any(|v| v.explode);
            // The longest run of allowed characters first, then shorter ones (backtracking).
            let max = s
                .char_indices()
                .find(|&(_, c)| !op.allows(c, explode))
                .map_or(s.len(), |(i, _)| i);
            let mut ends: Vec<usize> = (1..=max).filter(|&i| s.is_char_boundary(i)).collect();
            ends.reverse();
            for end in ends {
                let mut trial = HashMap::new();
                if bind(*op, vars, &s[..end], &mut trial) && match_parts(rest, &s[end..], out) {
                    out.extend(trial);
                    return true;
                }
            }
            false
        }
    }
}

fn bind(op: Op, vars: &[VarSpec], text: &str, out: &mut HashMap<String, String>) -> bool {
    let values: Vec<&str> = if vars.len() == 1 {
        vec![text]
    } else {
        text.split(',').collect()
    };
    if values.len() != vars.len() {
        return false;
    }
    for (var, value) in vars.iter().zip(values) {
        let value = if op == Op::PathParam {
            match value
                .strip_prefix(var.name.as_str())
                .and_then(|v| v.strip_prefix('='))
            {
                Some(v) => v,
                None => return false,
            }
        } else {
            value
        };
        match percent_decode(value) {
            Some(v) if !v.is_empty() => out.insert(var.name.clone(), v),
            _ => return false,
        };
    }
    true
}

/// Decodes `%XX` escapes; `None` if the result is not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let mut v: Vec<_> = UriTemplate::parse(t)
            .unwrap()
            .matches(uri)?
            .into_iter()
            .collect();
        v.sort();
        Some(v)
    }

    fn kv(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn simple_variables_stop_at_slashes() {
        assert_eq!(vars("tickets://{id}", "tickets://42"), kv(&[("id", "42")]));
        assert_eq!(vars("tickets://{id}", "tickets://4/2"), None);
        assert_eq!(vars("tickets://{id}", "tickets://"), None);
        assert_eq!(
            vars("users://{org}/{name}", "users://acme/ann%20lee"),
            kv(&[("name", "ann lee"), ("org", "acme")])
        );
        assert_eq!(vars("config://app", "config://app"), kv(&[]));
        assert_eq!(vars("config://app", "config://apps"), None);
    }

    #[test]
    fn reserved_variables_span_paths() {
        assert_eq!(
            vars("files://{+path}", "files://a/b/c.txt"),
            kv(&[("path", "a/b/c.txt")])
        );
        assert_eq!(
            vars("files://{+path}/raw", "files://a/b/raw"),
            kv(&[("path", "a/b")])
        );
        assert_eq!(
            vars("files://{+path}", "files://a%2Fb"),
            kv(&[("path", "a/b")])
        );
    }

    #[test]
    fn query_variables_are_optional_and_unordered() {
        let t = "search://items{?q,limit}";
        assert_eq!(
            vars(t, "search://items?limit=5&q=red%20shoes"),
            kv(&[("limit", "5"), ("q", "red shoes")])
        );
        assert_eq!(vars(t, "search://items?q=x"), kv(&[("q", "x")]));
        assert_eq!(vars(t, "search://items"), kv(&[]));
        assert_eq!(vars(t, "search://other"), None);
    }

    #[test]
    fn other_operators() {
        assert_eq!(
            vars("x://doc{#section}", "x://doc#intro"),
            kv(&[("section", "intro")])
        );
        assert_eq!(vars("x://a{/b}", "x://a/c"), kv(&[("b", "c")]));
        assert_eq!(vars("x://f{.ext}", "x://f.json"), kv(&[("ext", "json")]));
        assert_eq!(vars("x://m{;v}", "x://m;v=2"), kv(&[("v", "2")]));
        assert_eq!(vars("x://{a,b}", "x://1,2"), kv(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn invalid_templates_are_errors() {
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{+}",
            "x://{a b}",
            "x://{a:x}",
            "x://{a.}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        let t = UriTemplate::parse("search://{kind}/items{?q,limit}").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["kind", "q", "limit"]);
    }

    #[test]
    fn decoding_keeps_bad_escapes_and_rejects_bad_utf8() {
        assert_eq!(percent_decode("a%20b%zz%"), Some("a b%zz%".into()));
        assert_eq!(percent_decode("%ff"), None);
    }
}
