//! JSON Schema generation, in the profile real MCP clients accept.
//!
//! schemars produces correct JSON Schema 2020-12, but several clients (Gemini CLI, Copilot,
//! Claude Code, LangGraph, OpenAI strict mode) reject some of its shapes. Every schema a tool
//! publishes goes through [`client_compatible`], which:
//!
//! - drops `$schema` and the root `title` (the generated argument struct's name);
//! - inlines every `$ref` into `#/$defs` and drops `$defs`, except for recursive types, which
//!   keep a `$ref` (there is no other way to write them);
//! - in input schemas, removes the `null` that `Option<T>` adds (`["integer","null"]`,
//!   `anyOf: [T, {type: null}]`, `default: null`): optional arguments are simply not `required`;
//! - removes `format` values that are not defined by JSON Schema (`int32`, `uint8`, `double`, …),
//!   turning integer widths into `minimum`/`maximum`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// Which way the values a schema describes travel: into a tool (its `inputSchema`, read with
/// serde's `Deserialize`) or out of it (its `outputSchema`, written with `Serialize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaDirection {
    /// Tool arguments (deserialized): `Option` means "may be left out".
    Input,
    /// Tool output (serialized): `null` values are real and stay in the schema.
    Output,
}

/// The 0.1 name of [`SchemaDirection`].
#[doc(hidden)]
#[deprecated(note = "renamed to `SchemaDirection`")]
pub type Profile = SchemaDirection;

/// A schema generator with the settings used for `direction`.
pub fn generator(direction: SchemaDirection) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12();
    let settings = match direction {
        SchemaDirection::Input => settings.for_deserialize(),
        SchemaDirection::Output => settings.for_serialize(),
    };
    settings.into_generator()
}

/// A schema's `type` without a `null` alternative (what an `Option` adds): `Ok(None)` when it
/// has no `type`, `Err` when it is not one type (several, or not a string).
pub(crate) fn type_without_null(schema: &Map<String, Value>) -> Result<Option<&str>, ()> {
    match schema.get("type") {
        None => Ok(None),
        Some(Value::String(t)) => Ok(Some(t)),
        Some(Value::Array(types)) => {
            let mut real = types.iter().filter(|t| t.as_str() != Some("null"));
            match (real.next().and_then(Value::as_str), real.next()) {
                (Some(one), None) => Ok(Some(one)),
                _ => Err(()),
            }
        }
        Some(_) => Err(()),
    }
}

/// The client-compatible schema of `T`.
pub fn schema_for<T: JsonSchema + ?Sized>(direction: SchemaDirection) -> Value {
    let mut value = generator(direction).into_root_schema_for::<T>().to_value();
    client_compatible(&mut value, direction);
    // Several clients index `properties` without checking for it, even on a tool with no
    // parameters, where the spec's recommended `{type: object, additionalProperties: false}` omits it.
    if direction == SchemaDirection::Input
        && let Some(obj) = value.as_object_mut()
        && obj.get("type").and_then(Value::as_str) == Some("object")
    {
        obj.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    value
}

/// The schema of `T` with its definitions inlined and nothing else rewritten (elicitation
/// forms keep the `oneOf` of titled choices that [`client_compatible`] turns into `enum`).
pub(crate) fn inlined_schema_for<T: JsonSchema + ?Sized>(direction: SchemaDirection) -> Value {
    let mut value = generator(direction).into_root_schema_for::<T>().to_value();
    inline_definitions(&mut value);
    value
}

/// Rewrites a root schema in place into the client-compatible profile (see the module docs).
pub fn client_compatible(root: &mut Value, direction: SchemaDirection) {
    inline_definitions(root);
    fix_keywords(root, direction);
}

/// Drops `$schema` and `title`, and inlines `$defs` (recursive ones are kept).
fn inline_definitions(root: &mut Value) {
    let Some(obj) = root.as_object_mut() else {
        return;
    };
    obj.remove("$schema");
    obj.remove("title");
    let defs = match obj.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut inliner = Inliner {
        defs: &defs,
        stack: Vec::new(),
        recursive: Vec::new(),
    };
    inliner.walk(root);
    // Recursive types keep their definitions (themselves inlined as far as they can be).
    let mut kept = Map::new();
    let mut i = 0;
    while i < inliner.recursive.len() {
        let name = inliner.recursive[i].clone();
        if let Some(def) = defs.get(&name) {
            let mut def = def.clone();
            inliner.stack.push(name.clone());
            inliner.walk(&mut def);
            inliner.stack.pop();
            kept.insert(name, def);
        }
        i += 1;
    }
    if !kept.is_empty()
        && let Some(obj) = root.as_object_mut()
    {
        obj.insert("$defs".into(), Value::Object(kept));
    }
}

struct Inliner<'a> {
    defs: &'a Map<String, Value>,
    stack: Vec<String>,
    recursive: Vec<String>,
}

impl Inliner<'_> {
    fn walk(&mut self, value: &mut Value) {
        match value {
            Value::Object(obj) => {
                let inlined = match local_ref(obj) {
                    Some(name) if self.defs.contains_key(&name) && !self.stack.contains(&name) => {
                        let mut def = self.defs[&name].clone();
                        self.stack.push(name);
                        self.walk(&mut def);
                        self.stack.pop();
                        obj.remove("$ref");
                        Some(def)
                    }
                    Some(name) => {
                        if self.defs.contains_key(&name) && !self.recursive.contains(&name) {
                            self.recursive.push(name);
                        }
                        None
                    }
                    None => None,
                };
                for (_, child) in obj.iter_mut() {
                    self.walk(child);
                }
                // Keywords beside the `$ref` (a field's description, its default) win.
                if let Some(Value::Object(def)) = inlined {
                    for (k, v) in def {
                        obj.entry(k).or_insert(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.walk(v)),
            _ => {}
        }
    }
}

fn local_ref(obj: &Map<String, Value>) -> Option<String> {
    let r = obj.get("$ref")?.as_str()?;
    r.strip_prefix("#/$defs/")
        .map(|name| name.replace("~1", "/").replace("~0", "~"))
}

/// Formats defined by JSON Schema 2020-12; any other `format` is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn fix_keywords(value: &mut Value, direction: SchemaDirection) {
    match value {
        Value::Object(obj) => {
            for (key, child) in obj.iter_mut() {
                // `properties` and `$defs` map names to schemas; their keys are not keywords.
                if key == "properties" || key == "$defs" || key == "patternProperties" {
                    if let Value::Object(map) = child {
                        map.values_mut().for_each(|s| fix_keywords(s, direction));
                    }
                } else if key != "default" && key != "const" && key != "enum" && key != "examples" {
                    fix_keywords(child, direction);
                }
            }
            fix_format(obj);
            flatten_const_alternatives(obj);
            if direction == SchemaDirection::Input {
                strip_null(obj);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| fix_keywords(v, direction)),
        _ => {}
    }
}

fn fix_format(obj: &mut Map<String, Value>) {
    let Some(format) = obj.get("format").and_then(Value::as_str).map(str::to_owned) else {
        return;
    };
    let format = format.as_str();
    if STANDARD_FORMATS.contains(&format) {
        return;
    }
    let bounds: Option<(i64, i64)> = match format {
        "int8" => Some((i8::MIN.into(), i8::MAX.into())),
        "int16" => Some((i16::MIN.into(), i16::MAX.into())),
        "int32" => Some((i32::MIN.into(), i32::MAX.into())),
        "uint8" => Some((0, u8::MAX.into())),
        "uint16" => Some((0, u16::MAX.into())),
        "uint32" => Some((0, u32::MAX.into())),
        _ => None,
    };
    if let Some((min, max)) = bounds {
        obj.entry("minimum").or_insert(min.into());
        obj.entry("maximum").or_insert(max.into());
    }
    if matches!(format, "uint64" | "uint128" | "uint") {
        obj.entry("minimum").or_insert(0.into());
    }
    obj.remove("format");
}

/// `oneOf: [{const: "a", description}, …]` (a unit enum with documented variants) becomes
/// `enum: ["a", …]`, the form every client and OpenAI's strict mode accept; the variants' docs
/// move into the description as a list.
fn flatten_const_alternatives(obj: &mut Map<String, Value>) {
    let Some(Value::Array(alts)) = obj.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut ty: Option<&Value> = None;
    let mut notes = Vec::new();
    for alt in alts {
        let Some(alt) = alt.as_object() else { return };
        let Some(value) = alt.get("const") else {
            return;
        };
        if alt
            .keys()
            .any(|k| !matches!(k.as_str(), "const" | "type" | "description" | "title"))
        {
            return;
        }
        match (ty, alt.get("type")) {
            (_, None) => return,
            (None, Some(t)) => ty = Some(t),
            (Some(a), Some(b)) if a != b => return,
            _ => {}
        }
        if let Some(doc) = alt.get("description").and_then(Value::as_str) {
            notes.push(format!(
                "- {}: {doc}",
                value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned)
            ));
        }
        values.push(value.clone());
    }
    let ty = ty.cloned();
    obj.remove("oneOf");
    if let Some(ty) = ty {
        obj.insert("type".into(), ty);
    }
    obj.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        let notes = notes.join("\n");
        let description = match obj.get("description").and_then(Value::as_str) {
            Some(d) => format!("{d}\n{notes}"),
            None => notes,
        };
        obj.insert("description".into(), description.into());
    }
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
        && v.as_object().is_some_and(|o| o.len() == 1)
}

/// Removes the `null` alternative `Option<T>` adds: an argument may be left out, and that is
/// what clients understand; a `null` union trips several of them.
///
/// Only where something else remains: a schema that allows nothing but `null` (`type:
/// ["null"]`, `oneOf: [{type: null}]`, what a `()` or `Option<()>` argument gives) keeps it,
/// rather than becoming an empty `type` or `oneOf` that no value matches (found by fuzzing).
pub(crate) fn strip_null(obj: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = obj.get_mut("type")
        && types.iter().any(|t| t != "null")
    {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.pop().expect("one element");
            obj.insert("type".into(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = obj.get_mut(key) else {
            continue;
        };
        if alts.iter().all(is_null_schema) {
            continue;
        }
        let before = alts.len();
        alts.retain(|a| !is_null_schema(a));
        // One alternative left, and a schema object: it becomes the schema itself. (Anything
        // else, such as a stray string, stays where it is: popping it would leave an empty
        // list, which no value matches.)
        if alts.len() == 1 && before > 1 && alts[0].is_object() {
            let Some(Value::Object(only)) = alts.pop() else {
                unreachable!("checked to be an object");
            };
            obj.remove(key);
            for (k, v) in only {
                obj.entry(k).or_insert(v);
            }
        }
    }
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inlines_refs_and_keeps_sibling_keywords() {
        let mut s = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/Point", "description": "where"}},
            "$defs": {"Point": {"type": "object", "description": "a point",
                "properties": {"x": {"type": "integer", "format": "int32"}}}}
        });
        client_compatible(&mut s, SchemaDirection::Input);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {"p": {"type": "object", "description": "where",
                    "properties": {"x": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}}}}
            })
        );
    }

    #[test]
    fn keeps_refs_for_recursive_types_only() {
        let mut s = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        });
        client_compatible(&mut s, SchemaDirection::Input);
        assert_eq!(
            s["properties"]["tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert!(s["$defs"]["Node"].is_object());
    }

    #[test]
    fn a_schema_of_only_null_keeps_it() {
        for schema in [
            json!({"oneOf": [{"type": "null"}]}),
            json!({"anyOf": [{"type": "null"}, {"type": "null"}]}),
            json!({"type": ["null"]}),
        ] {
            let mut obj = schema.as_object().unwrap().clone();
            strip_null(&mut obj);
            assert_eq!(Value::Object(obj), schema);
        }
        // Found by fuzzing: the other alternative is not a schema object; it stays listed.
        let mut obj = json!({"oneOf": [{"type": "null"}, "i"]})
            .as_object()
            .unwrap()
            .clone();
        strip_null(&mut obj);
        assert_eq!(Value::Object(obj), json!({"oneOf": ["i"]}));
    }

    #[test]
    fn strips_null_only_from_inputs() {
        let base = json!({"type": "object", "properties": {
            "a": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
            "b": {"anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}], "default": null}
        }});
        let mut input = base.clone();
        client_compatible(&mut input, SchemaDirection::Input);
        assert_eq!(
            input["properties"]["a"],
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            input["properties"]["b"],
            json!({"type": "string", "enum": ["x"]})
        );
        let mut output = base;
        client_compatible(&mut output, SchemaDirection::Output);
        assert_eq!(
            output["properties"]["a"]["type"],
            json!(["integer", "null"])
        );
        assert!(output["properties"]["a"].get("format").is_none());
    }

    #[test]
    fn documented_unit_enums_become_plain_enums() {
        let mut s = json!({"type": "object", "properties": {"tone": {"description": "Tone.", "oneOf": [
            {"const": "formal", "type": "string", "description": "Polite."},
            {"const": "friendly", "type": "string"}
        ]}}});
        client_compatible(&mut s, SchemaDirection::Input);
        assert_eq!(
            s["properties"]["tone"],
            json!({
                "type": "string", "enum": ["formal", "friendly"], "description": "Tone.\n- formal: Polite."
            })
        );
        let mut tagged =
            json!({"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}]});
        let before = tagged.clone();
        client_compatible(&mut tagged, SchemaDirection::Input);
        assert_eq!(tagged, before);
    }

    #[test]
    fn leaves_standard_formats_and_property_names_alone() {
        let mut s = json!({"type": "object", "properties": {
            "format": {"type": "string", "format": "date-time"},
            "type": {"type": "number", "format": "double"}
        }});
        client_compatible(&mut s, SchemaDirection::Input);
        assert_eq!(
            s["properties"]["format"],
            json!({"type": "string", "format": "date-time"})
        );
        assert_eq!(s["properties"]["type"], json!({"type": "number"}));
    }
}
