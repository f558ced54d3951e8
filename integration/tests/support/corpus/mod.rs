//! The bad-input corpus (`tests/bad_input/cases.json`) and the four ways it runs: stdio and
//! Streamable HTTP, each in the session era (after `initialize` at 2025-11-25) and in 2026-07-28
//! (per-request `_meta`, no handshake). See `tests/bad_input.rs` for the file's format.
//!
//! Every case goes out on a connection (a stdio process, an HTTP session or, for 2026-07-28,
//! the server's stateless endpoint) that the way keeps for the whole run, and is followed by a
//! valid call on the same connection: the case passes when the server answered the case as
//! expected *and* then answered the probe.

pub mod conn;
pub mod expect;
mod wire;

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use super::http::stateless_meta;

use expect::Expect;

/// How long one response may take (huge inputs included).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

/// HTTP header fields, in order (repeats allowed).
pub(crate) type Headers = Vec<(String, String)>;

/// A transport and an era: one of the four ways a case runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Way {
    pub http: bool,
    pub stateless: bool,
}

impl Way {
    pub const ALL: [Way; 4] = [
        Way {
            http: false,
            stateless: false,
        },
        Way {
            http: false,
            stateless: true,
        },
        Way {
            http: true,
            stateless: false,
        },
        Way {
            http: true,
            stateless: true,
        },
    ];

    fn transport(self) -> &'static str {
        if self.http { "http" } else { "stdio" }
    }

    fn era(self) -> &'static str {
        if self.stateless { "2026" } else { "session" }
    }

    /// The selectors that name this way, most specific first: `stdio/session`, `stdio`,
    /// `session`, `*`.
    fn selectors(self) -> [String; 4] {
        [
            format!("{}/{}", self.transport(), self.era()),
            self.transport().to_owned(),
            self.era().to_owned(),
            "*".to_owned(),
        ]
    }

    fn is_selector(key: &str) -> bool {
        Way::ALL
            .iter()
            .any(|w| w.selectors().iter().any(|s| s == key))
    }
}

impl fmt::Display for Way {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.transport(), self.era())
    }
}

/// One entry of the corpus.
pub struct Case {
    pub name: String,
    pub server: String,
    pub(crate) raw: Value,
}

impl Case {
    /// Reads and checks the corpus file.
    pub fn load(path: &std::path::Path) -> Vec<Case> {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let file: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        let cases: Vec<Case> = file["cases"]
            .as_array()
            .expect("a `cases` array")
            .iter()
            .map(|raw| Case {
                name: raw["name"]
                    .as_str()
                    .expect("every case has a name")
                    .to_owned(),
                server: raw["server"].as_str().unwrap_or("quickstart").to_owned(),
                raw: raw.clone(),
            })
            .collect();
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            panic!("two cases are named {:?}", w[0]);
        }
        const KNOWN: &[&str] = &[
            "name",
            "note",
            "server",
            "ways",
            "send",
            "headers",
            "add_headers",
            "chunked",
            "expect",
            "pending",
        ];
        for case in &cases {
            for key in case.raw.as_object().expect("a case is an object").keys() {
                assert!(
                    KNOWN.contains(&key.as_str()),
                    "case {:?}: unknown member {key:?}",
                    case.name
                );
            }
            assert!(
                case.raw["note"].as_str().is_some_and(|n| !n.is_empty()),
                "case {:?} has no note (why its outcome is the expected one)",
                case.name
            );
            for way in Way::ALL.into_iter().filter(|w| case.applies(*w)) {
                let _ = case.expectation(way);
            }
        }
        cases
    }

    /// Whether the case runs this way (`ways` lists selectors; all four when absent).
    pub fn applies(&self, way: Way) -> bool {
        match self.raw.get("ways") {
            None => true,
            Some(ways) => ways
                .as_array()
                .unwrap_or_else(|| panic!("case {:?}: `ways` must be an array", self.name))
                .iter()
                .any(|s| {
                    way.selectors()
                        .iter()
                        .any(|w| Some(w.as_str()) == s.as_str())
                }),
        }
    }

    /// A member for this way: a plain value, or an object whose selector keys (`stdio/session`,
    /// `http`, `2026`, …) override it, the most specific first; the other keys are the default.
    fn by_way(&self, member: &str, way: Way) -> Option<Value> {
        let value = self.raw.get(member)?;
        let Some(map) = value.as_object() else {
            return Some(value.clone());
        };
        if let Some(v) = way.selectors().iter().find_map(|s| map.get(s.as_str())) {
            return Some(v.clone());
        }
        let rest: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !Way::is_selector(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (!rest.is_empty()).then_some(Value::Object(rest))
    }

    /// What the server must do with the case this way.
    pub fn expectation(&self, way: Way) -> Expect {
        let value = self
            .by_way("expect", way)
            .unwrap_or_else(|| panic!("case {:?} expects nothing for {way}", self.name));
        Expect::parse(&value).unwrap_or_else(|e| panic!("case {:?}, {way}: {e}", self.name))
    }

    /// Why the case is known to fail this way (a runtime bug still open), if it is.
    pub fn pending(&self, way: Way) -> Option<String> {
        self.by_way("pending", way)
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    /// The message bytes for this way: `send` is a string or a list of parts (strings,
    /// `{"repeat": s, "times": n}`, `{"hex": "c328"}`, `{"fill": c, "to": total}`), and
    /// `{{meta}}` in a string stands for the era's `_meta` object.
    pub fn bytes(&self, way: Way) -> Vec<u8> {
        let meta = if way.stateless {
            stateless_meta().to_string()
        } else {
            "{}".to_owned()
        };
        let parts = match &self.raw["send"] {
            Value::String(s) => vec![Value::String(s.clone())],
            Value::Array(parts) => parts.clone(),
            other => panic!("case {:?}: bad `send` {other}", self.name),
        };
        let mut out = Vec::new();
        let mut fill = None;
        for part in &parts {
            match part {
                Value::String(s) => out.extend_from_slice(s.replace("{{meta}}", &meta).as_bytes()),
                Value::Object(p) if p.contains_key("repeat") => {
                    let unit = p["repeat"].as_str().expect("`repeat` is a string");
                    let times = p["times"].as_u64().expect("`times` is a count") as usize;
                    out.extend_from_slice(unit.repeat(times).as_bytes());
                }
                Value::Object(p) if p.contains_key("hex") => {
                    out.extend(hex(p["hex"].as_str().expect("`hex` is a string")));
                }
                Value::Object(p) if p.contains_key("fill") => {
                    assert!(fill.is_none(), "case {:?}: one `fill` at most", self.name);
                    let byte = p["fill"]
                        .as_str()
                        .expect("`fill` is one character")
                        .as_bytes()[0];
                    let to = p["to"].as_u64().expect("`to` is a length") as usize;
                    fill = Some((out.len(), byte, to));
                }
                other => panic!("case {:?}: bad part {other}", self.name),
            }
        }
        if let Some((at, byte, to)) = fill {
            let n = to.checked_sub(out.len()).unwrap_or_else(|| {
                panic!(
                    "case {:?}: the message is already longer than {to}",
                    self.name
                )
            });
            out.splice(at..at, std::iter::repeat_n(byte, n));
        }
        out
    }

    /// Header changes for HTTP: `headers` sets (or, with `null`, drops) one header each;
    /// `add_headers` (pairs) adds more, after the rest, repeats included.
    pub(crate) fn header_changes(&self) -> (Vec<(String, Option<String>)>, Headers) {
        let set = self.raw["headers"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned)))
                    .collect()
            })
            .unwrap_or_default();
        let add = self.raw["add_headers"]
            .as_array()
            .map(|pairs| {
                pairs
                    .iter()
                    .map(|p| {
                        (
                            p[0].as_str().expect("header name").to_owned(),
                            p[1].as_str().expect("header value").to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        (set, add)
    }
}

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).expect("hex"))
        .collect()
}
