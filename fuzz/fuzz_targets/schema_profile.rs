//! The client-compatible schema profile (`schema.rs::client_compatible`: `$defs` inlined
//! except recursive ones, keyword fixes, `null` stripped from inputs) on any JSON, seeded with
//! real schemars output (see corpus/schema_profile and README.md). It runs on schemas of the
//! author's types, not on client input, so a blow-up here is a start-up cost, not a remote DoS.
//! Asserts, for both profiles: no panic; no `$schema`/`title` at the root (unless a
//! subschema brought them up); every local `$ref` left points at a kept definition (when the
//! input's all resolved); no `anyOf`/`oneOf` left empty (checked with `MCP_FUZZ_KNOWN=1`: a
//! finding, see FUZZING.md); applying the profile again changes nothing (when no recursive
//! `$defs` are kept and every `type` is a string or a list of strings).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::schema::{SchemaDirection, client_compatible};
use serde_json::Value;

fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get("$ref") {
                out.push(r);
            }
            obj.values().for_each(|c| refs(c, out));
        }
        Value::Array(items) => items.iter().for_each(|c| refs(c, out)),
        _ => {}
    }
}

/// Whether every `type` is a string or a list of strings.
fn types_ok(v: &Value) -> bool {
    match v {
        Value::Object(obj) => {
            obj.get("type").is_none_or(|t| {
                t.is_string() || t.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            }) && obj.values().all(types_ok)
        }
        Value::Array(items) => items.iter().all(types_ok),
        _ => true,
    }
}

/// Whether some `anyOf`/`oneOf` is an empty list.
fn empty_alternatives(v: &Value) -> bool {
    match v {
        Value::Object(obj) => {
            ["anyOf", "oneOf"].iter().any(|k| {
                obj.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
            }) || obj.values().any(empty_alternatives)
        }
        Value::Array(items) => items.iter().any(empty_alternatives),
        _ => false,
    }
}

/// Whether some subschema below the root has `key`.
fn nested_key(root: &Value, key: &str) -> bool {
    fn any(v: &Value, key: &str) -> bool {
        match v {
            Value::Object(obj) => obj.contains_key(key) || obj.values().any(|c| any(c, key)),
            Value::Array(items) => items.iter().any(|c| any(c, key)),
            _ => false,
        }
    }
    match root {
        Value::Object(obj) => obj.values().any(|c| any(c, key)),
        Value::Array(items) => items.iter().any(|c| any(c, key)),
        _ => false,
    }
}

/// Whether every `#/$defs/…` reference names a definition of `root`.
fn resolves(root: &Value) -> bool {
    let mut found = Vec::new();
    refs(root, &mut found);
    found
        .iter()
        .filter_map(|r| r.strip_prefix("#/$defs/"))
        .all(|name| {
            let name = name.replace("~1", "/").replace("~0", "~");
            root.get("$defs").and_then(|d| d.get(&name)).is_some()
        })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for profile in [SchemaDirection::Input, SchemaDirection::Output] {
        let mut once = input.clone();
        client_compatible(&mut once, profile);
        // A subschema hoisted to the root (an `anyOf` left with one alternative) brings its
        // own keys: only an input without nested `$schema`/`title` must lose them.
        // Finding F3 (fixed): an `anyOf`/`oneOf` whose only alternative was `null` was left
        // empty by the input profile (regressions/schema_profile/).
        assert!(
            !(empty_alternatives(&once) && !empty_alternatives(&input)),
            "the profile left an empty anyOf/oneOf: {input} -> {once}"
        );
        // Also only inputs whose `type`s are JSON Schema types (a string or a list of
        // strings): `"type": [[[]]]` loses one level of nesting per pass.
        let hoisted =
            nested_key(&input, "$schema") || nested_key(&input, "title") || !types_ok(&input);
        if let Some(obj) = once.as_object().filter(|_| !hoisted) {
            assert!(!obj.contains_key("$schema"), "{profile:?}: $schema kept");
            assert!(!obj.contains_key("title"), "{profile:?}: root title kept");
        }
        if resolves(&input) && input.get("$defs").is_some_and(Value::is_object) {
            assert!(
                resolves(&once),
                "{profile:?}: a $ref lost its definition: {once}"
            );
        }
        // Kept (recursive) definitions are unrolled one level more by each pass: only a
        // schema without them is a fixed point.
        // (A hoisted subschema's own `$schema`/`title` goes on the second pass.)
        if once.get("$defs").is_none() && !hoisted {
            let mut twice = once.clone();
            client_compatible(&mut twice, profile);
            assert_eq!(
                once, twice,
                "{profile:?}: the profile is not idempotent on {input}"
            );
        }
    }
});
