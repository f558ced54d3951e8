//! Elicitation forms: the flat object of primitive fields `elicitation/create` allows, derived
//! from a Rust type or checked when written by hand.
//!
//! A form field is a string (`minLength`, `maxLength`, `format` email | uri | date | date-time),
//! a number or integer (`minimum`, `maximum`), a boolean, a single-select enum of strings
//! (`enum`, or `oneOf` of `{const, title}`, or the legacy `enumNames`), or a multi-select list
//! of such strings (`type: array`), each with an optional `title`, `description` and `default`.
//! Anything else (nested objects, maps, lists of numbers, …) is refused with a message that
//! names the field.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::schema::{SchemaDirection, inlined_schema_for};

const STRING_FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// The `requestedSchema` for `T`, computed once per type (an error names what `T` may not hold).
pub(crate) fn form_schema_of<T: JsonSchema + 'static>() -> Result<Value, String> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Result<Value, String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().expect("form cache").get(&TypeId::of::<T>()) {
        return found.clone();
    }
    let form = form_schema(&inlined_schema_for::<T>(SchemaDirection::Input))
        .map_err(|e| format!("`{}` cannot be an elicitation form: {e}", T::schema_name()));
    cache
        .lock()
        .expect("form cache")
        .insert(TypeId::of::<T>(), form.clone());
    form
}

/// Whether `T` is a valid form; see [`testing::check_form`](crate::testing::check_form).
pub(crate) fn check_form<T: JsonSchema + 'static>() -> Result<(), String> {
    form_schema_of::<T>().map(|_| ())
}

/// Checks (and normalizes) a form schema: `{type: object, properties: {…}, required?}` whose
/// properties are all primitive fields.
pub fn form_schema(schema: &Value) -> Result<Value, String> {
    let Some(obj) = schema.as_object() else {
        return Err("a form schema is a JSON object".into());
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err("a form is an object with named fields (a struct), not a single value".into());
    }
    let empty = Map::new();
    let properties = match obj.get("properties") {
        Some(Value::Object(p)) => p,
        None => &empty,
        Some(_) => return Err("`properties` must be an object".into()),
    };
    let mut fields = Map::new();
    for (name, field) in properties {
        let field = form_field(field).map_err(|e| format!("field `{name}`: {e}"))?;
        fields.insert(name.clone(), field);
    }
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), Value::Object(fields));
    if let Some(required) = obj.get("required") {
        let names = required
            .as_array()
            .filter(|r| {
                r.iter()
                    .all(|n| n.as_str().is_some_and(|n| properties.contains_key(n)))
            })
            .ok_or("`required` must list field names")?;
        if !names.is_empty() {
            out.insert("required".into(), Value::Array(names.clone()));
        }
    }
    Ok(Value::Object(out))
}

/// The `type` of a field, with a `null` alternative (an `Option`) taken away.
fn field_type(field: &Map<String, Value>) -> Result<Option<String>, String> {
    crate::schema::type_without_null(field)
        .map(|t| t.map(str::to_owned))
        .map_err(|()| "a field has one type (a string)".into())
}

fn copy(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key) {
            to.insert((*key).into(), v.clone());
        }
    }
}

const ANNOTATIONS: [&str; 3] = ["title", "description", "default"];

fn form_field(field: &Value) -> Result<Value, String> {
    let mut field = field
        .as_object()
        .ok_or("a field schema is a JSON object")?
        .clone();
    // An optional field (`Option<T>`) is just `T` in a form: it is not `required`.
    crate::schema::strip_null(&mut field);
    let field = &field;
    if field.contains_key("anyOf") {
        return Err("a field cannot be one of several shapes (`anyOf`)".into());
    }
    let mut out = Map::new();
    let kind = field_type(field)?;
    if let Some(choices) = titled_choices(field.get("oneOf"))? {
        if kind.as_deref().is_some_and(|k| k != "string") {
            return Err("choices must be strings".into());
        }
        out.insert("type".into(), "string".into());
        out.insert("oneOf".into(), Value::Array(choices));
        copy(field, &mut out, &ANNOTATIONS);
        return Ok(Value::Object(out));
    }
    match kind.as_deref() {
        Some("string") | None if field.contains_key("enum") => {
            let values = string_enum(field.get("enum"))?;
            out.insert("type".into(), "string".into());
            out.insert("enum".into(), values);
            copy(field, &mut out, &["enumNames"]);
        }
        Some("string") => {
            if let Some(format) = field.get("format").and_then(Value::as_str) {
                if !STRING_FORMATS.contains(&format) {
                    return Err(format!(
                        "string format {format:?} is not allowed (only {})",
                        STRING_FORMATS.join(", ")
                    ));
                }
                out.insert("format".into(), format.into());
            }
            out.insert("type".into(), "string".into());
            copy(field, &mut out, &["minLength", "maxLength"]);
        }
        Some(number @ ("number" | "integer")) => {
            out.insert("type".into(), number.into());
            copy(field, &mut out, &["minimum", "maximum"]);
        }
        Some("boolean") => {
            out.insert("type".into(), "boolean".into());
        }
        Some("array") => {
            let items = field
                .get("items")
                .and_then(Value::as_object)
                .ok_or("a list field needs `items`")?;
            let items = match titled_choices(items.get("anyOf").or_else(|| items.get("oneOf")))? {
                Some(choices) => serde_json::json!({ "anyOf": choices }),
                None => {
                    if field_type(items)?.is_some_and(|t| t != "string")
                        || !items.contains_key("enum")
                    {
                        return Err(
                            "a list field is a multi-select: a list of string choices (an enum)"
                                .into(),
                        );
                    }
                    serde_json::json!({ "type": "string", "enum": string_enum(items.get("enum"))? })
                }
            };
            out.insert("type".into(), "array".into());
            out.insert("items".into(), items);
            copy(field, &mut out, &["minItems", "maxItems"]);
        }
        Some(other) => {
            return Err(format!(
                "a field of type {other} is not allowed (only strings, numbers, integers, booleans and string choices)"
            ));
        }
        None if field.contains_key("$ref") => {
            return Err("recursive types are not allowed".into());
        }
        None => return Err("a field needs a type".into()),
    }
    copy(field, &mut out, &ANNOTATIONS);
    Ok(Value::Object(out))
}

/// A checked form lowered to what 2025-06-18 clients know: no `default`, titled choices as
/// `enum` + `enumNames`; a multiple-choice field cannot be lowered.
pub(crate) fn for_2025_06_18(form: &Value) -> Result<Value, String> {
    let mut form = form.clone();
    if let Some(Value::Object(fields)) = form.get_mut("properties") {
        for (name, field) in fields.iter_mut() {
            let Value::Object(field) = field else {
                continue;
            };
            field.remove("default");
            if field.get("type").and_then(Value::as_str) == Some("array") {
                return Err(format!("field `{name}` is a multiple choice"));
            }
            if let Some(Value::Array(choices)) = field.remove("oneOf") {
                let values: Vec<Value> = choices.iter().map(|c| c["const"].clone()).collect();
                let titles: Vec<Value> = choices.iter().map(|c| c["title"].clone()).collect();
                field.insert("enum".into(), Value::Array(values));
                field.insert("enumNames".into(), Value::Array(titles));
            }
        }
    }
    Ok(form)
}

fn string_enum(values: Option<&Value>) -> Result<Value, String> {
    match values {
        Some(Value::Array(v)) if !v.is_empty() && v.iter().all(Value::is_string) => {
            Ok(Value::Array(v.clone()))
        }
        _ => Err("choices must be a non-empty list of strings".into()),
    }
}

/// `[{const, title}]` from `oneOf`/`anyOf` (a documented enum's variants carry `description`,
/// which becomes the title).
fn titled_choices(options: Option<&Value>) -> Result<Option<Vec<Value>>, String> {
    let Some(options) = options else {
        return Ok(None);
    };
    let options = options.as_array().ok_or("choices must be a list")?;
    let mut choices = Vec::with_capacity(options.len());
    for option in options {
        let value = option
            .get("const")
            .or_else(|| {
                option
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|e| e.len() == 1)
                    .and_then(|e| e.first())
            })
            .and_then(Value::as_str)
            .ok_or("every choice must be a string constant")?;
        let title = option
            .get("title")
            .or_else(|| option.get("description"))
            .and_then(Value::as_str)
            .unwrap_or(value);
        choices.push(serde_json::json!({ "const": value, "title": title }));
    }
    if choices.is_empty() {
        return Err("choices must not be empty".into());
    }
    Ok(Some(choices))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Size {
        /// A small one
        Small,
        /// A large one
        Large,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    enum Plain {
        A,
        B,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Order {
        /// Who orders.
        name: String,
        #[schemars(email)]
        email: Option<String>,
        #[schemars(range(min = 1, max = 10))]
        quantity: u32,
        gift: bool,
        size: Size,
        plain: Option<Plain>,
        toppings: Vec<Plain>,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Nested {
        order: Order,
    }

    #[test]
    fn a_struct_of_primitives_becomes_a_form() {
        let form = form_schema_of::<Order>().unwrap();
        let p = &form["properties"];
        assert_eq!(
            p["name"],
            json!({"type": "string", "description": "Who orders."})
        );
        assert_eq!(p["email"], json!({"type": "string", "format": "email"}));
        assert_eq!(
            p["quantity"],
            json!({"type": "integer", "minimum": 1, "maximum": 10})
        );
        assert_eq!(p["gift"], json!({"type": "boolean"}));
        assert_eq!(
            p["size"]["oneOf"],
            json!([{"const": "small", "title": "A small one"}, {"const": "large", "title": "A large one"}])
        );
        assert_eq!(p["plain"], json!({"type": "string", "enum": ["A", "B"]}));
        assert_eq!(
            p["toppings"]["items"],
            json!({"type": "string", "enum": ["A", "B"]})
        );
        let required: Vec<&str> = form["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(required.contains(&"name") && !required.contains(&"email"));
    }

    #[test]
    fn nested_objects_and_non_objects_are_refused() {
        let e = form_schema_of::<Nested>().unwrap_err();
        assert!(
            e.contains("field `order`") && e.contains("type object"),
            "{e}"
        );
        let e = form_schema_of::<String>().unwrap_err();
        assert!(e.contains("named fields"), "{e}");
        let e = form_schema(&json!({"type": "object", "properties": {"n": {"type": "array", "items": {"type": "number"}}}})).unwrap_err();
        assert!(e.contains("multi-select"), "{e}");
        let e = form_schema(
            &json!({"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}}),
        )
        .unwrap_err();
        assert!(e.contains("uuid"), "{e}");
    }

    #[test]
    fn forms_are_lowered_for_2025_06_18_clients() {
        #[allow(dead_code)]
        #[derive(Deserialize, JsonSchema)]
        struct Pick {
            #[serde(default)]
            size: Option<Size>,
            #[serde(default = "three")]
            count: u32,
        }
        fn three() -> u32 {
            3
        }
        let form = form_schema_of::<Pick>().unwrap();
        assert_eq!(form["properties"]["count"]["default"], 3, "{form}");
        let lowered = for_2025_06_18(&form).unwrap();
        assert_eq!(
            lowered["properties"]["size"],
            json!({"type": "string", "enum": ["small", "large"], "enumNames": ["A small one", "A large one"]})
        );
        assert!(
            lowered["properties"]["count"].get("default").is_none(),
            "{lowered}"
        );
        let e = for_2025_06_18(&form_schema_of::<Order>().unwrap()).unwrap_err();
        assert!(e.contains("field `toppings` is a multiple choice"), "{e}");
    }

    #[test]
    fn hand_written_legacy_enums_pass() {
        let schema = json!({"type": "object", "properties": {
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"}
        }, "required": []});
        let form = form_schema(&schema).unwrap();
        assert_eq!(form["properties"]["legacy"], schema["properties"]["legacy"]);
        assert!(form.get("required").is_none());
    }
}
