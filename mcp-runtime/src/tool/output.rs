//! How a tool's return value becomes a `tools/call` result.
//!
//! A return type is handled by the first of these that applies (generated code picks through
//! autoref specialization, so this works through type aliases such as `anyhow::Result<T>`):
//!
//! 0. `Result<T, McpError>` with `T:` [`ToolOutput`];
//! 1. `Result<T, McpError>` with `T: Serialize + JsonSchema`;
//! 2. `Result<T, E>` with `T:` [`ToolOutput`] and `E: Display`;
//! 3. `Result<T, E>` with `T: Serialize + JsonSchema` and `E: Display`;
//! 4. `T:` [`ToolOutput`]: content blocks, lists of them, [`CallToolResult`], [`Json<T>`];
//! 5. `T: Serialize + JsonSchema`, shaped by its schema: a string becomes text, `()` no content,
//!    an object becomes `structuredContent` (with an `outputSchema`) plus its JSON as text, and
//!    anything else (numbers, booleans, arrays, …) becomes `structuredContent: {"result": …}`.
//!
//! Any other type is one compile error at the return type.
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
use crate::schema::{SchemaDirection, schema_for};

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
            _ => wrapped_spec(schema_for::<T>(SchemaDirection::Output)),
        }
    }
    fn into_call_result(self, mode: OutputMode) -> Result<CallToolResult, McpError> {
        serde_result(&self.0, mode)
    }
}

/// The spec of a `Serialize + JsonSchema` type, from the root of its schema.
pub fn serde_output_spec<T: JsonSchema + ?Sized>() -> OutputSpec {
    let schema = schema_for::<T>(SchemaDirection::Output);
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

/// The probe a tool's return type is dispatched on, by autoref specialization: each case below
/// is implemented for the probe behind fewer `&`s the lower its priority, and method lookup on
/// `&&&&&&&ToolReturnProbe<R>` takes the first case whose bounds hold. The one table of cases
/// and depth is [`tool_return!`](crate::__private::tool_return); generated code and the tests
/// below both go through it.
pub struct ToolReturnProbe<T>(PhantomData<fn() -> T>);

impl<T> ToolReturnProbe<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ToolReturnProbe(PhantomData)
    }
}

/// Calls `$method($args…)` on the case of the tool return-type table that applies to `$ty`.
/// Seven `&`s: the first case is implemented for six (one per case below it, down to the
/// fallback [`ToolViaUnsupported`] on the bare probe), and method lookup adds the `&` of `&self`.
#[doc(hidden)]
#[macro_export]
macro_rules! __tool_return {
    ($ty:ty, $method:ident($($arg:expr),* $(,)?)) => {{
        #[allow(unused_imports)]
        use $crate::__private::{
            ToolViaMcpResultOutput as _, ToolViaMcpResultSerde as _, ToolViaOutput as _,
            ToolViaResultOutput as _, ToolViaResultSerde as _, ToolViaSerde as _,
            ToolViaUnsupported as _,
        };
        (&&&&&&&$crate::__private::ToolReturnProbe::<$ty>::new()).$method($($arg),*)
    }};
}

/// One case of the tool return-type table: its trait, the probe depth it is implemented at, its
/// bounds, and how it builds the spec and the result.
macro_rules! case {
    ($(#[$doc:meta])* $trait:ident, $recv:ty, [$($bounds:tt)*], $value:ty,
     spec: $spec:expr, convert: |$v:ident, $mode:ident| $body:expr) => {
        $(#[$doc])*
        pub trait $trait<R> {
            /// Output spec.
            fn output_spec(&self) -> OutputSpec;
            /// Conversion.
            fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>;
        }

        impl<$($bounds)*> $trait<$value> for $recv {
            fn output_spec(&self) -> OutputSpec {
                $spec
            }
            fn convert(&self, $v: $value, $mode: OutputMode) -> Result<CallToolResult, McpError> {
                $body
            }
        }
    };
}

case!(
    /// Priority 0: `Result<T: ToolOutput, McpError>` (the error is a protocol error).
    ToolViaMcpResultOutput, &&&&&&ToolReturnProbe<Result<T, McpError>>, [T: ToolOutput],
    Result<T, McpError>, spec: T::output_spec(), convert: |v, mode| v?.into_call_result(mode)
);
case!(
    /// Priority 1: `Result<T: Serialize + JsonSchema, McpError>` (the error is a protocol error).
    ToolViaMcpResultSerde, &&&&&ToolReturnProbe<Result<T, McpError>>, [T: Serialize + JsonSchema],
    Result<T, McpError>, spec: serde_output_spec::<T>(), convert: |v, mode| serde_result(&v?, mode)
);
case!(
    /// Priority 2: `Result<T: ToolOutput, E: Display>` (the error is an `isError` result).
    ToolViaResultOutput, &&&&ToolReturnProbe<Result<T, E>>, [T: ToolOutput, E: Display],
    Result<T, E>, spec: T::output_spec(),
    convert: |v, mode| v.map_or_else(error_result, |v| v.into_call_result(mode))
);
case!(
    /// Priority 3: `Result<T: Serialize + JsonSchema, E: Display>`.
    ToolViaResultSerde, &&&ToolReturnProbe<Result<T, E>>, [T: Serialize + JsonSchema, E: Display],
    Result<T, E>, spec: serde_output_spec::<T>(),
    convert: |v, mode| v.map_or_else(error_result, |v| serde_result(&v, mode))
);
case!(
    /// Priority 4: `T: ToolOutput`.
    ToolViaOutput, &&ToolReturnProbe<T>, [T: ToolOutput], T,
    spec: T::output_spec(), convert: |v, mode| v.into_call_result(mode)
);
case!(
    /// Priority 5: `T: Serialize + JsonSchema`.
    ToolViaSerde, &ToolReturnProbe<T>, [T: Serialize + JsonSchema], T,
    spec: serde_output_spec::<T>(), convert: |v, mode| serde_result(&v, mode)
);

/// The bound behind the table's fallback: no type has it, so a return type no case takes is
/// one error, at the return type, in these words.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type is not a tool result",
    note = "return a `Serialize + JsonSchema` type, content (`Content`, `Vec<Content>`), `CallToolResult`, `Json<T>`, or a `Result` of one of these; or implement `mcp_runtime::tool::ToolOutput` for it"
)]
pub trait ReturnedFromTool {}

/// The fallback: no case applies. Its `output_spec` is never used (the build fails at
/// `convert`), so only one error is reported.
pub trait ToolViaUnsupported<R> {
    /// Never used.
    fn output_spec(&self) -> OutputSpec {
        OutputSpec {
            schema: None,
            mode: OutputMode::Custom,
        }
    }
    /// Unreachable: `R: ReturnedFromTool` never holds.
    fn convert(&self, value: R, mode: OutputMode) -> Result<CallToolResult, McpError>
    where
        R: ReturnedFromTool;
}

impl<T> ToolViaUnsupported<T> for ToolReturnProbe<T> {
    fn convert(&self, _: T, _: OutputMode) -> Result<CallToolResult, McpError>
    where
        T: ReturnedFromTool,
    {
        unreachable!("no type is `ReturnedFromTool`")
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

    // Through the table generated code uses, at its depth.
    macro_rules! spec {
        ($t:ty) => {
            crate::__tool_return!($t, output_spec())
        };
    }
    macro_rules! try_convert {
        ($t:ty, $v:expr) => {{
            let mode = spec!($t).mode;
            crate::__tool_return!($t, convert($v, mode))
        }};
    }
    macro_rules! convert {
        ($t:ty, $v:expr) => {
            try_convert!($t, $v).unwrap()
        };
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

    #[test]
    fn mcp_errors_are_protocol_errors_and_other_errors_are_is_error() {
        // Priority 0: content in `Result<_, McpError>`.
        assert_eq!(
            spec!(Result<Vec<Content>, McpError>).mode,
            OutputMode::Custom
        );
        let e = try_convert!(
            Result<Vec<Content>, McpError>,
            Err(McpError::invalid_params("no"))
        )
        .unwrap_err();
        assert_eq!(e.message, "no");
        // Priority 1: a serde value in `Result<_, McpError>`.
        assert_eq!(spec!(Result<Point, McpError>).mode, OutputMode::Object);
        let e = try_convert!(Result<Point, McpError>, Err(McpError::internal("down"))).unwrap_err();
        assert_eq!(e.message, "down");
        let r = convert!(Result<i64, McpError>, Ok(3));
        assert_eq!(r.structured_content, Some(json!({"result": 3})));
        // Priorities 2 and 3: any other error is a result the model reads.
        let r = convert!(Result<Vec<Content>, String>, Err("tool failed".into()));
        assert!(r.is_error());
        let r = convert!(Result<i64, std::io::Error>, Err(std::io::Error::other("io")));
        assert!(r.is_error());
        assert_eq!(r.content, vec![Content::text("io")]);
    }

    #[test]
    fn call_tool_results_pass_through() {
        // `CallToolResult` converts itself (priority 4), with or without `McpError` around it.
        let r = convert!(CallToolResult, CallToolResult::error("as is"));
        assert!(r.is_error());
        assert_eq!(spec!(CallToolResult).mode, OutputMode::Custom);
        assert_eq!(
            spec!(Result<CallToolResult, McpError>).mode,
            OutputMode::Custom
        );
    }

    /// Both a `ToolOutput` and `Serialize + JsonSchema`: the `ToolOutput` cases rank higher.
    #[derive(Serialize, JsonSchema)]
    struct Both;

    impl ToolOutput for Both {
        fn into_call_result(self, _: OutputMode) -> Result<CallToolResult, McpError> {
            Ok(CallToolResult::success(vec![Content::text("custom")]))
        }
    }

    #[test]
    fn each_priority_beats_the_next() {
        // 0 over 1 (and over 2, 3: an `McpError` is a protocol error, not an `isError` result).
        assert_eq!(spec!(Result<Both, McpError>).mode, OutputMode::Custom);
        assert_eq!(
            convert!(Result<Both, McpError>, Ok(Both)).content,
            vec![Content::text("custom")]
        );
        let e =
            try_convert!(Result<Both, McpError>, Err(McpError::invalid_params("no"))).unwrap_err();
        assert_eq!(e.message, "no");
        // 1 over 3.
        assert!(try_convert!(Result<Point, McpError>, Err(McpError::internal("x"))).is_err());
        // 2 over 3.
        assert_eq!(spec!(Result<Both, String>).mode, OutputMode::Custom);
        assert_eq!(
            convert!(Result<Both, String>, Ok(Both)).content,
            vec![Content::text("custom")]
        );
        // 4 over 5.
        assert_eq!(spec!(Both).mode, OutputMode::Custom);
        assert_eq!(convert!(Both, Both).content, vec![Content::text("custom")]);
    }
}
