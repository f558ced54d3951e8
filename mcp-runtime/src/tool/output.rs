//! How a tool's return value becomes a `tools/call` result.
//!
//! A return type is handled by the first of these that applies (generated code picks through
//! autoref specialization, so this works through type aliases such as `anyhow::Result<T>`):
//!
//! 1. `Result<T, McpError>` with `T:` [`ToolOutput`], then with `T: Serialize + JsonSchema`;
//! 2. `Result<T, E>` with `T:` [`ToolOutput`] and `E: Display`;
//! 3. `Result<T, E>` with `T: Serialize + JsonSchema` and `E: Display`;
//! 4. `T:` [`ToolOutput`]: content blocks, lists of them, [`CallToolResult`], [`Json<T>`];
//! 5. `T: Serialize + JsonSchema`, shaped by its schema: a string becomes text, `()` no content,
//!    an object becomes `structuredContent` (with an `outputSchema`) plus its JSON as text, and
//!    anything else (numbers, booleans, arrays, …) becomes `structuredContent: {"result": …}`.
//!
//! An `Err(e)` becomes a result with `isError: true` whose text is `e` (with its causes, `{:#}`):
//! the model sees it and may try again. An `Err(McpError)` is a protocol error instead (a
//! JSON-RPC error response), for failures the client must handle: a missing client
//! capability (see [`Context::elicit`](crate::Context::elicit)), invalid parameters.

use std::fmt::Display;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::{CallToolResult, Content, McpError};
use crate::schema::{Profile, schema_for};

/// How a return value is turned into a result; decided once, from the output schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// The value is a string: one text block.
    Text,
    /// The value is `()`: no content.
    Empty,
    /// The value is an object: `structuredContent` plus its JSON as text.
    Object,
    /// Any other value: `structuredContent: {"result": value}` plus text.
    Wrapped,
    /// The value converts itself ([`ToolOutput`]).
    Custom,
}

/// The output schema of a return type and the way its values are converted.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// The `outputSchema` to publish, if any.
    pub schema: Option<Value>,
    /// How values become results.
    pub mode: OutputMode,
}

/// A return type that builds its own result: content blocks, [`CallToolResult`], [`Json<T>`].
///
/// Plain `Serialize + JsonSchema` types need no impl: they are handled by their schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    note = "return a `Serialize + JsonSchema` type, content (`Content`, `Vec<Content>`), `CallToolResult`, `Json<T>`, or a `Result` of one of these"
)]
pub trait ToolOutput {
    /// The output schema and mode.
    fn output_spec() -> OutputSpec {
        OutputSpec {
            schema: None,
            mode: OutputMode::Custom,
        }
    }
    /// Converts the value.
    fn into_call_result(self, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl ToolOutput for CallToolResult {
    fn into_call_result(self, _: OutputMode) -> Result<CallToolResult, McpError> {
        Ok(self)
    }
}

impl ToolOutput for Content {
    fn into_call_result(self, _: OutputMode) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl ToolOutput for Vec<Content> {
    fn into_call_result(self, _: OutputMode) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(self))
    }
}

/// Returns `T` as structured content, with an output schema, whatever its shape.
///
/// Plain `T: Serialize + JsonSchema` return types already become structured content when they are
/// objects, numbers or lists; `Json<T>` also does it for strings and `()`, and documents intent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> ToolOutput for Json<T> {
    fn output_spec() -> OutputSpec {
        let spec = serde_output_spec::<T>();
        match spec.mode {
            OutputMode::Object => spec,
            _ => wrapped_spec(schema_for::<T>(Profile::Output)),
        }
    }
    fn into_call_result(self, mode: OutputMode) -> Result<CallToolResult, McpError> {
        serde_result(&self.0, mode)
    }
}

/// The spec of a `Serialize + JsonSchema` type, from the root of its schema.
pub fn serde_output_spec<T: JsonSchema + ?Sized>() -> OutputSpec {
    let schema = schema_for::<T>(Profile::Output);
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => OutputSpec {
            schema: None,
            mode: OutputMode::Text,
        },
        Some("null") => OutputSpec {
            schema: None,
            mode: OutputMode::Empty,
        },
        Some("object") => OutputSpec {
            schema: Some(schema),
            mode: OutputMode::Object,
        },
        _ => wrapped_spec(schema),
    }
}

fn wrapped_spec(mut inner: Value) -> OutputSpec {
    let defs = inner.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut root = serde_json::json!({
        "type": "object",
        "properties": { "result": inner },
        "required": ["result"],
    });
    if let Some(defs) = defs {
        root["$defs"] = defs;
    }
    OutputSpec {
        schema: Some(root),
        mode: OutputMode::Wrapped,
    }
}

/// Converts a `Serialize` value according to `mode`.
pub fn serde_result<T: Serialize + ?Sized>(
    value: &T,
    mode: OutputMode,
) -> Result<CallToolResult, McpError> {
    let value = serde_json::to_value(value)
        .map_err(|e| McpError::internal(format!("could not serialize the tool's result: {e}")))?;
    let text_of = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(match mode {
        OutputMode::Empty => CallToolResult::success(Vec::new()),
        OutputMode::Text | OutputMode::Custom => {
            CallToolResult::success(vec![Content::text(text_of(&value))])
        }
        OutputMode::Object => CallToolResult {
            content: vec![Content::text(value.to_string())],
            structured_content: Some(value),
            ..Default::default()
        },
        OutputMode::Wrapped => {
            let text = text_of(&value);
            let mut structured = Map::new();
            structured.insert("result".into(), value);
            CallToolResult {
                content: vec![Content::text(text)],
                structured_content: Some(Value::Object(structured)),
                ..Default::default()
            }
        }
    })
}

fn error_result<E: Display>(e: E) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::error(format!("{e:#}")))
}

/// The autoref-specialization probe generated code calls `(&&&&Tag::<R>::new())` on.
pub struct Tag<T>(PhantomData<fn() -> T>);

impl<T> Tag<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Tag(PhantomData)
    }
}

/// Priority 0: `Result<T: ToolOutput, McpError>` (the error is a protocol error).
pub trait ViaMcpResultOutput<R> {
    /// Output spec.
    fn output_spec(&self) -> OutputSpec;
    /// Conversion.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl<T: ToolOutput> ViaMcpResultOutput<Result<T, McpError>> for &&&&&Tag<Result<T, McpError>> {
    fn output_spec(&self) -> OutputSpec {
        T::output_spec()
    }
    fn convert(
        &self,
        value: Result<T, McpError>,
        mode: OutputMode,
    ) -> Result<CallToolResult, McpError> {
        value?.into_call_result(mode)
    }
}

/// Priority 0': `Result<T: Serialize + JsonSchema, McpError>` (the error is a protocol error).
pub trait ViaMcpResultSerde<R> {
    /// Output spec.
    fn output_spec(&self) -> OutputSpec;
    /// Conversion.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl<T: Serialize + JsonSchema> ViaMcpResultSerde<Result<T, McpError>>
    for &&&&Tag<Result<T, McpError>>
{
    fn output_spec(&self) -> OutputSpec {
        serde_output_spec::<T>()
    }
    fn convert(
        &self,
        value: Result<T, McpError>,
        mode: OutputMode,
    ) -> Result<CallToolResult, McpError> {
        serde_result(&value?, mode)
    }
}

/// Priority 1: `Result<T: ToolOutput, E: Display>`.
pub trait ViaResultOutput<R> {
    /// Output spec.
    fn output_spec(&self) -> OutputSpec;
    /// Conversion.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl<T: ToolOutput, E: Display> ViaResultOutput<Result<T, E>> for &&&Tag<Result<T, E>> {
    fn output_spec(&self) -> OutputSpec {
        T::output_spec()
    }
    fn convert(&self, value: Result<T, E>, mode: OutputMode) -> Result<CallToolResult, McpError> {
        value.map_or_else(error_result, |v| v.into_call_result(mode))
    }
}

/// Priority 2: `Result<T: Serialize + JsonSchema, E: Display>`.
pub trait ViaResultSerde<R> {
    /// Output spec.
    fn output_spec(&self) -> OutputSpec;
    /// Conversion.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl<T: Serialize + JsonSchema, E: Display> ViaResultSerde<Result<T, E>> for &&Tag<Result<T, E>> {
    fn output_spec(&self) -> OutputSpec {
        serde_output_spec::<T>()
    }
    fn convert(&self, value: Result<T, E>, mode: OutputMode) -> Result<CallToolResult, McpError> {
        value.map_or_else(error_result, |v| serde_result(&v, mode))
    }
}

/// Priority 3: `T: ToolOutput`.
pub trait ViaOutput<R> {
    /// Output spec.
    fn output_spec(&self) -> OutputSpec;
    /// Conversion.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl<T: ToolOutput> ViaOutput<T> for &Tag<T> {
    fn output_spec(&self) -> OutputSpec {
        T::output_spec()
    }
    fn convert(&self, value: T, mode: OutputMode) -> Result<CallToolResult, McpError> {
        value.into_call_result(mode)
    }
}

/// Priority 4: `T: Serialize + JsonSchema`.
pub trait ViaSerde<R> {
    /// Output spec.
    fn output_spec(&self) -> OutputSpec;
    /// Conversion.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
}

impl<T: Serialize + JsonSchema> ViaSerde<T> for Tag<T> {
    fn output_spec(&self) -> OutputSpec {
        serde_output_spec::<T>()
    }
    fn convert(&self, value: T, mode: OutputMode) -> Result<CallToolResult, McpError> {
        serde_result(&value, mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize, JsonSchema)]
    struct Point {
        x: i32,
        y: i32,
    }

    macro_rules! spec {
        ($t:ty) => {{
            #[allow(unused_imports)]
            use super::{ViaOutput as _, ViaResultOutput as _, ViaResultSerde as _, ViaSerde as _};
            (&&&&Tag::<$t>::new()).output_spec()
        }};
    }
    macro_rules! convert {
        ($t:ty, $v:expr) => {{
            #[allow(unused_imports)]
            use super::{ViaOutput as _, ViaResultOutput as _, ViaResultSerde as _, ViaSerde as _};
            let probe = &&&&Tag::<$t>::new();
            let mode = probe.output_spec().mode;
            probe.convert($v, mode).unwrap()
        }};
    }

    #[test]
    fn shapes_follow_the_type() {
        assert_eq!(spec!(String).mode, OutputMode::Text);
        assert_eq!(spec!(()).mode, OutputMode::Empty);
        assert_eq!(spec!(i64).mode, OutputMode::Wrapped);
        assert_eq!(spec!(Point).mode, OutputMode::Object);
        assert_eq!(spec!(Vec<Content>).mode, OutputMode::Custom);
        assert_eq!(spec!(Result<Point, String>).mode, OutputMode::Object);
        assert_eq!(
            spec!(Result<Vec<Content>, std::io::Error>).mode,
            OutputMode::Custom
        );
        assert_eq!(spec!(Json<String>).mode, OutputMode::Wrapped);
    }

    #[test]
    fn numbers_get_a_wrapped_schema_and_result() {
        assert_eq!(
            spec!(i64).schema.unwrap(),
            json!({"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]})
        );
        let r = convert!(i64, 5);
        assert_eq!(r.content, vec![Content::text("5")]);
        assert_eq!(r.structured_content, Some(json!({"result": 5})));
    }

    #[test]
    fn objects_are_structured_and_errors_are_is_error() {
        let r = convert!(Point, Point { x: 1, y: 2 });
        assert_eq!(r.structured_content, Some(json!({"x":1,"y":2})));
        assert_eq!(r.content, vec![Content::text(r#"{"x":1,"y":2}"#)]);
        let r = convert!(Result<Point, String>, Err("boom".to_owned()));
        assert!(r.is_error());
        assert_eq!(r.content, vec![Content::text("boom")]);
        let r = convert!(String, "hi".to_owned());
        assert_eq!(
            (r.content, r.structured_content),
            (vec![Content::text("hi")], None)
        );
    }
}
