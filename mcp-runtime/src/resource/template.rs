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

    /// The regex class of the (unencoded) characters a value may contain; a value of a
    /// multi-variable expression also excludes the `,` that separates it from the next.
    fn class(self, explode: bool, multi: bool) -> &'static str {
        match (self, multi) {
            (Op::Fragment, false) => r"(?s:.)",
            (Op::Fragment, true) => r"[^,]",
            (Op::Reserved, false) => r"[^?#]",
            (Op::Reserved, true) => r"[^?#,]",
            (Op::Path, false) if explode => r"[^?#]",
            (Op::Path, true) if explode => r"[^?#,]",
            (_, false) => r"[^/?#&]",
            (_, true) => r"[^/?#&,]",
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
///
/// Matching is linear in the URI's length: the part before any trailing query expressions is
/// compiled, once, into a [`regex_lite::Regex`] (a finite automaton, no backtracking), and each
/// variable is percent-decoded once, after the match.
#[derive(Clone, Debug)]
pub struct UriTemplate {
    raw: String,
    parts: Vec<Part>,
    /// The parts before the trailing query expressions, anchored at both ends.
    path: regex_lite::Regex,
    /// The variable each capture group of `path` binds, in group order (group `i + 1`).
    captures: Vec<String>,
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl Eq for UriTemplate {}

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
        let split = query_split(&parts);
        let (path, captures) = compile(&parts[..split], raw)?;
        Ok(UriTemplate {
            raw: raw.to_owned(),
            parts,
            path,
            captures,
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
        let query_parts = &self.parts[query_split(&self.parts)..];
        let (path, query) = if query_parts.is_empty() {
            (uri, None)
        } else {
            match uri.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (uri, None),
            }
        };
        let groups = self.path.captures(path)?;
        for (i, name) in self.captures.iter().enumerate() {
            let text = groups.get(i + 1)?.as_str();
            out.insert(name.clone(), percent_decode(text)?);
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

/// Where the trailing run of query expressions (`{?q}`, `{&r}`) starts.
fn query_split(parts: &[Part]) -> usize {
    parts
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
        .map_or(0, |i| i + 1)
}

/// The anchored regex for `parts` (no query expressions) and the variable of each group.
///
/// Each value is a non-empty run of the characters its operator allows ([`Op::allows`]); in a
/// multi-variable expression the values are comma-separated, so they exclude `,`. Greedy
/// repetition with leftmost-first semantics picks the same split as a backtracking matcher
/// trying the longest value first would, in linear time.
fn compile(parts: &[Part], raw: &str) -> Result<(regex_lite::Regex, Vec<String>), TemplateError> {
    let mut pattern = String::from(r"\A");
    let mut captures = Vec::new();
    for part in parts {
        match part {
            Part::Literal(lit) => pattern.push_str(&regex_lite::escape(lit)),
            Part::Expr { op, vars } => {
                pattern.push_str(&regex_lite::escape(op.prefix()));
                let explode = vars.iter().any(|v| v.explode);
                let multi = vars.len() > 1;
                for (i, var) in vars.iter().enumerate() {
                    if i > 0 {
                        pattern.push(',');
                    }
                    if *op == Op::PathParam {
                        pattern.push_str(&regex_lite::escape(&var.name));
                        pattern.push('=');
                    }
                    pattern.push('(');
                    pattern.push_str(op.class(explode, multi));
                    pattern.push_str("+)");
                    captures.push(var.name.clone());
                }
            }
        }
    }
    pattern.push_str(r"\z");
    let regex = regex_lite::Regex::new(&pattern)
        .map_err(|e| TemplateError(format!("cannot compile {raw:?}: {e}")))?;
    Ok((regex, captures))
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

/// Decodes `%XX` escapes; `None` if the result is not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    #[cfg(test)]
    tests::DECODED.with(|n| n.set(n.get() + bytes.len()));
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
    use std::cell::Cell;

    thread_local! {
        /// Bytes `percent_decode` has read on this thread: the matcher's work outside the regex.
        pub(super) static DECODED: Cell<usize> = const { Cell::new(0) };
    }

    /// Matches and returns the bytes decoded while doing so.
    fn decoded_by(t: &UriTemplate, uri: &str) -> (bool, usize) {
        DECODED.with(|n| n.set(0));
        let hit = t.matches(uri).is_some();
        (hit, DECODED.with(Cell::get))
    }

    /// The backtracking matcher this replaced percent-decoded a copy of the value at every end
    /// offset it tried: ~n²/2 bytes for a long URI that fails at its end (a 1 MB `resources/read`
    /// cost ~10^11 byte operations). Now each value is decoded once, after the regex (linear by
    /// construction) has matched, and not at all when it does not match.
    #[test]
    fn long_uris_cost_linear_work() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        for n in [50_000, 100_000, 200_000] {
            let id = "a".repeat(n);
            let (hit, work) = decoded_by(&t, &format!("test://template/{id}/data"));
            assert!(hit);
            assert_eq!(work, n, "one decode of the value");
            let (hit, work) = decoded_by(&t, &format!("test://template/{id}/dat"));
            assert!(!hit);
            assert_eq!(work, 0, "nothing decoded for a URI that does not fit");
            let (hit, work) = decoded_by(&t, &format!("test://template/{id}"));
            assert!(!hit);
            assert_eq!(work, 0);
        }
        // The shapes that made backtracking regexes blow up (TS SDK CVE-2026-0621).
        let n = 1 << 20;
        let commas = format!("/{}", ",".repeat(n));
        for (template, uri, hit) in [
            ("x://a{/id*}", format!("x://a{commas}"), true),
            ("x://a{/id*}x", format!("x://a{commas}"), false),
            ("x://{a,b}", format!("x://{}", ",".repeat(n)), false),
            ("x://{a,b}/", format!("x://1,{}", "2".repeat(n)), false),
            (
                "x://{+path}/raw",
                format!("x://{}", "a/".repeat(n / 2)),
                false,
            ),
            ("x://{+path}", format!("x://{}", "%".repeat(n)), true),
        ] {
            let t = UriTemplate::parse(template).unwrap();
            let (matched, work) = decoded_by(&t, &uri);
            assert_eq!(matched, hit, "{template}");
            assert!(work <= uri.len(), "{template}: {work} bytes decoded");
        }
    }

    #[test]
    fn greedy_values_pick_the_longest_split() {
        assert_eq!(
            vars("files://{+path}/raw", "files://a/raw/raw"),
            kv(&[("path", "a/raw")])
        );
        assert_eq!(
            vars("x://{a}{b}", "x://abc"),
            kv(&[("a", "ab"), ("b", "c")])
        );
        assert_eq!(
            vars("x://m{;a,b}", "x://m;a=1,b=2"),
            kv(&[("a", "1"), ("b", "2")])
        );
        assert_eq!(vars("x://m{;a}", "x://m;b=1"), None);
        assert_eq!(vars("x://{id}.json", "x://a.b.json"), kv(&[("id", "a.b")]));
        // Literal text is matched literally, regex metacharacters included.
        assert_eq!(vars("x://(a)+/{id}", "x://(a)+/1"), kv(&[("id", "1")]));
        assert_eq!(vars("x://(a)+/{id}", "x://aa/1"), None);
    }

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
