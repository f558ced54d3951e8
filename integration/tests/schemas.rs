//! Snapshot tests of input schemas for a table of parameter types, and the client-compatible
//! profile's invariants over every registered tool.

use std::collections::HashMap;

use mcp_runtime::Server;
use mcp_runtime::prelude::*;
use serde_json::{Value, json};

/// A place.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Place {
    /// The city.
    city: String,
    /// Postal code, if known.
    zip: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

/// A tree of labels (recursive: the one place a `$ref` remains).
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Node {
    label: String,
    children: Vec<Node>,
}

#[allow(clippy::too_many_arguments, unused_variables)]
#[tool]
async fn primitives(
    small: u8,
    medium: u16,
    unsigned: u32,
    big: u64,
    index: usize,
    tiny: i8,
    short: i16,
    int: i32,
    long: i64,
    single: f32,
    double: f64,
    flag: bool,
    letter: char,
    text: String,
) {
}

#[allow(clippy::too_many_arguments, unused_variables)]
#[tool]
async fn composites(
    /// Tags to apply.
    tags: Vec<String>,
    counts: HashMap<String, i32>,
    limit: Option<u32>,
    place: Place,
    maybe_place: Option<Place>,
    unit: Unit,
    maybe_unit: Option<Unit>,
    shape: Shape,
    tree: Node,
    addr: std::net::IpAddr,
    pair: (i32, String),
) {
}

#[allow(unused_variables)]
#[tool]
async fn adjusted(
    #[arg(rename = "userName", description = "Who is asking.")] user_name: String,
    #[arg(default = 10)] page_size: u32,
    #[serde(default)] verbose: bool,
    #[arg(default = "en")] language: String,
) {
}

fn input_schema(tool: &str) -> Value {
    let server = Server::builder().build().unwrap();
    let tool = server.tools().find(|t| t.name == tool).unwrap();
    tool.input_schema.clone()
}

#[test]
fn primitive_widths_become_bounds_without_formats() {
    assert_eq!(
        input_schema("primitives")["properties"],
        json!({
            "small": {"type": "integer", "minimum": 0, "maximum": 255},
            "medium": {"type": "integer", "minimum": 0, "maximum": 65535},
            "unsigned": {"type": "integer", "minimum": 0, "maximum": 4294967295u64},
            "big": {"type": "integer", "minimum": 0},
            "index": {"type": "integer", "minimum": 0},
            "tiny": {"type": "integer", "minimum": -128, "maximum": 127},
            "short": {"type": "integer", "minimum": -32768, "maximum": 32767},
            "int": {"type": "integer", "minimum": -2147483648i64, "maximum": 2147483647},
            "long": {"type": "integer"},
            "single": {"type": "number"},
            "double": {"type": "number"},
            "flag": {"type": "boolean"},
            "letter": {"type": "string", "minLength": 1, "maxLength": 1},
            "text": {"type": "string"}
        })
    );
}

#[test]
fn composites_are_inlined_and_options_are_optional_without_null() {
    let schema = input_schema("composites");
    let props = &schema["properties"];
    assert_eq!(
        props["tags"],
        json!({"type": "array", "items": {"type": "string"}, "description": "Tags to apply."})
    );
    assert_eq!(
        props["counts"],
        json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": -2147483648i64, "maximum": 2147483647}})
    );
    assert_eq!(
        props["limit"],
        json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
    );
    let place = json!({
        "type": "object",
        "description": "A place.",
        "properties": {
            "city": {"type": "string", "description": "The city."},
            "zip": {"type": "string", "description": "Postal code, if known."}
        },
        "required": ["city"]
    });
    assert_eq!(props["place"], place);
    assert_eq!(props["maybe_place"], place);
    assert_eq!(
        props["unit"],
        json!({"type": "string", "enum": ["celsius", "fahrenheit"]})
    );
    assert_eq!(
        props["maybe_unit"],
        json!({"type": "string", "enum": ["celsius", "fahrenheit"]})
    );
    assert_eq!(props["addr"], json!({"type": "string"}));
    assert_eq!(props["shape"]["oneOf"].as_array().unwrap().len(), 2);
    assert_eq!(
        props["tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert_eq!(
        schema["$defs"]["Node"]["properties"]["label"],
        json!({"type": "string"})
    );
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort();
    assert_eq!(
        required,
        [
            "addr", "counts", "pair", "place", "shape", "tags", "tree", "unit"
        ]
    );
}

#[test]
fn parameter_attributes_rename_default_and_describe() {
    assert_eq!(
        input_schema("adjusted"),
        json!({
            "type": "object",
            "properties": {
                "userName": {"type": "string", "description": "Who is asking."},
                "page_size": {"type": "integer", "minimum": 0, "maximum": 4294967295u64, "default": 10},
                "verbose": {"type": "boolean", "default": false},
                "language": {"type": "string", "default": "en"}
            },
            "required": ["userName"],
            "additionalProperties": false
        })
    );
}

/// Walks a schema and reports anything outside the profile.
fn violations(path: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(obj) => {
            for (k, child) in obj {
                let here = format!("{path}/{k}");
                match k.as_str() {
                    "$schema" => out.push(format!("{here}: $schema")),
                    "$ref" if child != "#/$defs/Node" => {
                        out.push(format!("{here}: non-recursive $ref {child}"))
                    }
                    "format" => out.push(format!("{here}: format {child}")),
                    "type" if child.as_array().is_some_and(|a| a.contains(&json!("null"))) => {
                        out.push(format!("{here}: null union"))
                    }
                    "type" if child == "null" => out.push(format!("{here}: null type")),
                    _ => {}
                }
                if !matches!(k.as_str(), "default" | "enum" | "const" | "examples") {
                    violations(&here, child, out);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, c)| violations(&format!("{path}/{i}"), c, out)),
        _ => {}
    }
}

#[test]
fn every_input_schema_fits_the_client_profile() {
    let server = Server::builder().build().unwrap();
    let mut out = Vec::new();
    for tool in server.tools() {
        let schema = &tool.input_schema;
        assert_eq!(schema["type"], "object", "{}", tool.name);
        assert!(schema["properties"].is_object(), "{}", tool.name);
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
        assert!(schema.get("title").is_none(), "{}", tool.name);
        violations(&tool.name, schema, &mut out);
    }
    assert_eq!(out, Vec::<String>::new());
}

#[tokio::test]
async fn schema_and_deserialization_agree() {
    let client = mcp_runtime::testing::TestClient::connect().await;
    let ok = client
        .call_tool("adjusted", json!({"userName": "ann", "page_size": 3}))
        .await
        .unwrap();
    assert!(!ok.is_error(), "{}", ok.text());
    let wrong_name = client
        .call_tool("adjusted", json!({"user_name": "ann"}))
        .await
        .unwrap();
    assert!(wrong_name.is_error());
    let range = client.call_tool("primitives", json!({
        "small": 256, "medium": 0, "unsigned": 0, "big": 0, "index": 0, "tiny": 0, "short": 0,
        "int": 0, "long": 0, "single": 0, "double": 0, "flag": true, "letter": "x", "text": ""
    })).await.unwrap();
    assert!(
        range.is_error() && range.text().contains("`small`"),
        "{}",
        range.text()
    );
}
