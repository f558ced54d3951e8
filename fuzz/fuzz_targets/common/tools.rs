//! Tools, a resource template and a prompt defined with the real macros, so their generated
//! argument structs are the ones a server built with this runtime has. Each tool echoes the
//! arguments it got, so a target can compare them with a plain serde mirror (`Mirror*`).
#![allow(dead_code)]

use mcp_runtime::prelude::*;

/// A unit enum argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Fast,
    Slow,
}

/// A nested struct argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// A tagged enum argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    Circle { r: f64 },
    Rect { w: u32, h: u32 },
}

/// What `primitives` got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MirrorPrimitives {
    pub a: i64,
    pub b: Option<String>,
    pub flag: bool,
    pub ratio: f64,
    pub small: u8,
}

/// Echoes integers, strings, booleans and floats.
#[tool]
async fn primitives(
    a: i64,
    b: Option<String>,
    flag: bool,
    ratio: f64,
    small: u8,
) -> MirrorPrimitives {
    MirrorPrimitives {
        a,
        b,
        flag,
        ratio,
        small,
    }
}

fn default_times() -> u32 {
    3
}

/// What `collections` got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MirrorCollections {
    pub tags: Vec<String>,
    pub scores: std::collections::BTreeMap<String, i32>,
    #[serde(default = "default_times")]
    pub times: u32,
    #[serde(default)]
    pub pair: Option<(u8, String)>,
}

/// Echoes lists, maps, a default and a tuple.
#[tool]
async fn collections(
    tags: Vec<String>,
    scores: std::collections::BTreeMap<String, i32>,
    #[arg(default = 3)] times: u32,
    #[arg(default)] pair: Option<(u8, String)>,
) -> MirrorCollections {
    MirrorCollections {
        tags,
        scores,
        times,
        pair,
    }
}

/// What `nested` got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MirrorNested {
    pub mode: Mode,
    pub at: Point,
    pub shape: Shape,
    #[serde(rename = "Renamed")]
    pub renamed: Option<Vec<Point>>,
}

/// Echoes enums, nested structs and a renamed argument.
#[tool]
async fn nested(
    mode: Mode,
    at: Point,
    shape: Shape,
    #[arg(rename = "Renamed")] renamed: Option<Vec<Point>>,
) -> MirrorNested {
    MirrorNested {
        mode,
        at,
        shape,
        renamed,
    }
}

/// What `blocking` got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MirrorBlocking {
    pub text: String,
    pub value: serde_json::Value,
}

/// A sync tool (runs on the blocking pool), taking any JSON.
#[tool]
fn blocking(text: String, value: serde_json::Value) -> MirrorBlocking {
    MirrorBlocking { text, value }
}

/// A tool that panics on one input: the dispatcher must still answer.
#[tool]
async fn fragile(n: i64) -> i64 {
    if n == 7 {
        panic!("fragile tool panicked on purpose");
    }
    n
}

/// A tool that reports progress and logs: notifications the oracle checks.
#[tool]
async fn chatty(ctx: Context, steps: u8) -> String {
    for i in 0..steps.min(4) {
        ctx.progress(f64::from(i), Some(4.0), None);
        ctx.info(format!("step {i}"));
    }
    "done".into()
}

/// A resource template.
#[resource("file:///notes/{name}", mime_type = "text/plain")]
async fn note(name: String) -> String {
    format!("note {name}")
}

/// A prompt with arguments.
#[prompt]
async fn greet(name: String, style: Option<String>) -> String {
    format!("Hello {name} {}", style.unwrap_or_default())
}

/// The server the targets drive: everything registered above.
pub fn server() -> mcp_runtime::Server {
    mcp_runtime::Server::builder()
        .name("fuzz")
        .version("0.0.0")
        .build()
        .expect("valid registrations")
}
