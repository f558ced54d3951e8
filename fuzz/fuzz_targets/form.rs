//! Elicitation form checks (`protocol/form.rs`): `form_schema` on any JSON (a hand-written
//! `requestedSchema` goes through it in `Context::elicit_with_schema`), the lowering for
//! 2025-06-18 clients, and the forms of real Rust types (`form_schema_of`).
//! Asserts: no panic; an accepted form is `{type: object, properties}` of primitive fields
//! with `required` naming only its fields; checking a checked form again gives it back; the
//! lowered form has no `default`, `oneOf` or multiple-choice field.
#![no_main]

use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::ask::form_schema;
use mcp_runtime::fuzzing::{form_for_2025_06_18, form_schema_of};
use mcp_runtime::prelude::*;
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Size {
    /// Small.
    S,
    /// Large.
    L,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Signup {
    /// Your name.
    name: String,
    age: Option<u8>,
    size: Size,
    newsletter: bool,
    #[schemars(email)]
    email: String,
    tags: Vec<Size>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    signup: Signup,
}

fn check(form: &Value) {
    let obj = form.as_object().expect("a form is an object");
    assert_eq!(obj["type"], "object");
    let fields = obj["properties"]
        .as_object()
        .expect("a form has properties");
    for (name, field) in fields {
        let t = field["type"]
            .as_str()
            .unwrap_or_else(|| panic!("field {name} has no type: {form}"));
        assert!(
            matches!(t, "string" | "number" | "integer" | "boolean" | "array"),
            "field {name} is a {t}: {form}"
        );
    }
    if let Some(required) = obj.get("required") {
        for r in required.as_array().expect("required is a list") {
            assert!(
                fields.contains_key(r.as_str().expect("a name")),
                "required names a missing field: {form}"
            );
        }
    }
    assert_eq!(
        form_schema(form).as_ref(),
        Ok(form),
        "a checked form changed when checked again"
    );
    let has_multi = fields.values().any(|f| f["type"] == "array");
    match form_for_2025_06_18(form) {
        Ok(lowered) => {
            assert!(!has_multi, "a multiple choice was lowered: {form}");
            for f in lowered["properties"]
                .as_object()
                .expect("properties")
                .values()
            {
                assert!(
                    f.get("default").is_none() && f.get("oneOf").is_none(),
                    "not lowered: {lowered}"
                );
            }
        }
        Err(_) => assert!(
            has_multi,
            "a form without multiple choice was not lowered: {form}"
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    static TYPES: Once = Once::new();
    TYPES.call_once(|| {
        check(&form_schema_of::<Signup>().expect("Signup is a form"));
        assert!(form_schema_of::<Nested>().is_err());
    });
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(form) = form_schema(&input) {
        check(&form);
    }
});
