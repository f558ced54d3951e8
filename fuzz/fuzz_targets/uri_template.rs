//! URI templates (`resource/template.rs`): parsing any template, and matching any URI against
//! it, as `resources/read` does with a client's URI. The first byte picks the template: odd,
//! the first line of the input; even, one of the realistic templates below (the URI is all of
//! the rest). With bit 6 of the first byte set, the URI is repeated up to 64 KiB (the size
//! `resources/read` still matches). Templates may have any number of expressions, adjacent
//! ones included: the backtracking matcher that took O(n^k) there (finding F1, FUZZING.md,
//! regressions/uri_template/) is now a regex, linear in the URI.
//! Asserts: no panic; a parsed template prints as written and parses again the same; matched
//! names are the template's variables; a template without variables matches only itself;
//! percent-decoding leaves text without `%` alone. Slow matching shows as a libFuzzer timeout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::resource::{UriTemplate, percent_decode};

const TEMPLATES: [&str; 10] = [
    "file:///{+path}",
    "file:///notes/{name}",
    "tickets://{id}",
    "search://items{?q,limit}",
    "users://{org}/{user}/repos{/repo*}",
    "db://{table}{/ids*}{?fields*}",
    "x://{a}{b}{c}",
    "x://{#frag}",
    "x://{.ext*}",
    "x://a{;p,q}{&r}",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let (raw, uri) = if pick & 1 == 1 {
        text.split_once('\n').unwrap_or((text, ""))
    } else {
        (TEMPLATES[usize::from(pick >> 1) % TEMPLATES.len()], text)
    };
    let long;
    let uri = if pick & 0x40 != 0 && !uri.is_empty() {
        long = uri.repeat((64 * 1024) / uri.len() + 1);
        long.as_str()
    } else {
        uri
    };
    if !uri.contains('%') {
        assert_eq!(
            percent_decode(uri).as_deref(),
            Some(uri),
            "decoding changed text without escapes"
        );
    }
    let Ok(template) = UriTemplate::parse(raw) else {
        return;
    };
    assert_eq!(template.as_str(), raw);
    assert_eq!(template.to_string(), raw);
    let again = UriTemplate::parse(&template.to_string()).expect("a printed template parses");
    assert!(
        template.variables().eq(again.variables()),
        "variables changed on a reparse of {raw:?}"
    );
    let matched = template.matches(uri);
    if let Some(vars) = &matched {
        for name in vars.keys() {
            assert!(
                template.variables().any(|v| v == name),
                "{raw:?} matched {uri:?} with a variable it does not have: {name:?}"
            );
        }
    }
    if !template.has_variables() {
        assert_eq!(
            matched.is_some(),
            uri == raw,
            "the literal template {raw:?} and {uri:?}"
        );
    }
});
