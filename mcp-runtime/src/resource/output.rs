//! How a resource fn's return value becomes `contents`.
//!
//! In order of precedence (generated code picks through autoref specialization):
//! `Result<Option<T>, E>`, `Result<T, E>` and `Option<T>` of what follows (`Err` becomes a JSON-RPC error, `None` and
//! [`NotFound`] "resource not found"), then [`ResourceOutput`] types (`String`/`&str` as text,
//! `Vec<u8>` as a base64 blob, [`ResourceContents`] and lists of them), then any `Serialize`
//! value as JSON text (`application/json`).

use std::any::Any;
use std::fmt::{self, Display};
use std::marker::PhantomData;

use serde::Serialize;

use crate::protocol::{ErrorCode, McpError, ResourceContents};

/// Return `Err(NotFound)` (or `None`) from a resource fn when the URI names nothing: the client
/// gets the protocol's "resource not found" error with the URI.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotFound;

impl Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("resource not found")
    }
}

impl std::error::Error for NotFound {}

/// "Resource not found" for `uri`: -32002 in the session era (the era adapter turns it into
/// -32602 for 2026-07-28), with the URI in `data`.
pub fn not_found(uri: &str, why: Option<&str>) -> McpError {
    let message = match why {
        Some(why) => format!("Resource not found: {uri} ({why})"),
        None => format!("Resource not found: {uri}"),
    };
    McpError::new(ErrorCode::RESOURCE_NOT_FOUND_LEGACY, message)
        .with_data(serde_json::json!({ "uri": uri }))
}

/// A return type that becomes resource contents by itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    note = "return a `String`, `Vec<u8>`, `ResourceContents`, `Vec<ResourceContents>`, any `Serialize` value, or an `Option`/`Result` of one"
)]
pub trait ResourceOutput {
    /// The contents for `uri`; `mime_type` is the resource's declared type.
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

impl ResourceOutput for String {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::Text {
            uri: uri.to_owned(),
            mime_type: Some(mime_type.unwrap_or("text/plain").to_owned()),
            text: self,
            meta: serde_json::Map::new(),
        }]
    }
}

impl ResourceOutput for &'static str {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl ResourceOutput for Vec<u8> {
    fn into_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::blob(
            uri,
            &self,
            mime_type.unwrap_or("application/octet-stream"),
        )]
    }
}

impl ResourceOutput for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        vec![self]
    }
}

impl ResourceOutput for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Vec<ResourceContents> {
        self
    }
}

fn serde_contents<T: Serialize>(value: &T, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
    let text = serde_json::to_string(value)
        .map_err(|e| McpError::internal(format!("could not serialize the resource: {e}")))?;
    Ok(vec![ResourceContents::Text {
        uri: uri.to_owned(),
        mime_type: Some("application/json".into()),
        text,
        meta: serde_json::Map::new(),
    }])
}

/// An `Err` from a resource fn: an [`McpError`] as it is, [`NotFound`] as "resource not found",
/// anything else as an internal error carrying its message.
fn error_of<E: Display + 'static>(e: E, uri: &str) -> McpError {
    let any: &dyn Any = &e;
    if let Some(e) = any.downcast_ref::<McpError>() {
        return e.clone();
    }
    if any.is::<NotFound>() {
        return not_found(uri, None);
    }
    McpError::internal(format!("{e:#}"))
}

fn nonempty(contents: Vec<ResourceContents>, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
    // An empty `contents` must never stand for a missing resource.
    if contents.is_empty() {
        Err(not_found(uri, None))
    } else {
        Ok(contents)
    }
}

/// The probe a resource's return type is dispatched on, by autoref specialization (see
/// [`ToolReturnProbe`](crate::tool::output::ToolReturnProbe)); the table of cases and depth is
/// [`resource_return!`](crate::__private::resource_return).
pub struct ResourceReturnProbe<T>(PhantomData<fn() -> T>);

impl<T> ResourceReturnProbe<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ResourceReturnProbe(PhantomData)
    }
}

/// Calls `$method($args…)` on the case of the resource return-type table that applies to `$ty`.
/// Nine `&`s: the first case is implemented for eight (one per case below it, down to the
/// fallback [`ResourceViaUnsupported`]), and method lookup adds the `&` of `&self`.
#[doc(hidden)]
#[macro_export]
macro_rules! __resource_return {
    ($ty:ty, $method:ident($($arg:expr),* $(,)?)) => {{
        #[allow(unused_imports)]
        use $crate::__private::{
            ResourceViaOptionOutput as _, ResourceViaOptionSerde as _, ResourceViaOutput as _,
            ResourceViaResultOptionOutput as _, ResourceViaResultOptionSerde as _,
            ResourceViaResultOutput as _, ResourceViaResultSerde as _, ResourceViaSerde as _,
            ResourceViaUnsupported as _,
        };
        (&&&&&&&&&$crate::__private::ResourceReturnProbe::<$ty>::new()).$method($($arg),*)
    }};
}

macro_rules! case {
    ($trait:ident, $recv:ty, [$($bounds:tt)*], $value:ty, |$v:ident, $uri:ident, $mime:ident| $body:expr) => {
        #[doc(hidden)]
        pub trait $trait<R> {
            /// Conversion.
            fn convert(&self, value: R, uri: &str, mime: Option<&str>) -> Result<Vec<ResourceContents>, McpError>;
        }
        impl<$($bounds)*> $trait<$value> for $recv {
            fn convert(&self, $v: $value, $uri: &str, $mime: Option<&str>) -> Result<Vec<ResourceContents>, McpError> {
                $body
            }
        }
    };
}

case!(ResourceViaResultOptionOutput, &&&&&&&&ResourceReturnProbe<Result<Option<T>, E>>, [T: ResourceOutput, E: Display + 'static], Result<Option<T>, E>,
    |v, uri, mime| nonempty(v.map_err(|e| error_of(e, uri))?.ok_or_else(|| not_found(uri, None))?.into_contents(uri, mime), uri));
case!(ResourceViaResultOptionSerde, &&&&&&&ResourceReturnProbe<Result<Option<T>, E>>, [T: Serialize, E: Display + 'static], Result<Option<T>, E>,
    |v, uri, _mime| serde_contents(&v.map_err(|e| error_of(e, uri))?.ok_or_else(|| not_found(uri, None))?, uri));
case!(ResourceViaResultOutput, &&&&&&ResourceReturnProbe<Result<T, E>>, [T: ResourceOutput, E: Display + 'static], Result<T, E>,
    |v, uri, mime| nonempty(v.map_err(|e| error_of(e, uri))?.into_contents(uri, mime), uri));
case!(ResourceViaResultSerde, &&&&&ResourceReturnProbe<Result<T, E>>, [T: Serialize, E: Display + 'static], Result<T, E>,
    |v, uri, _mime| serde_contents(&v.map_err(|e| error_of(e, uri))?, uri));
case!(ResourceViaOptionOutput, &&&&ResourceReturnProbe<Option<T>>, [T: ResourceOutput], Option<T>,
    |v, uri, mime| nonempty(v.ok_or_else(|| not_found(uri, None))?.into_contents(uri, mime), uri));
case!(ResourceViaOptionSerde, &&&ResourceReturnProbe<Option<T>>, [T: Serialize], Option<T>,
    |v, uri, _mime| serde_contents(&v.ok_or_else(|| not_found(uri, None))?, uri));
case!(ResourceViaOutput, &&ResourceReturnProbe<T>, [T: ResourceOutput], T, |v, uri, mime| nonempty(v.into_contents(uri, mime), uri));
case!(ResourceViaSerde, &ResourceReturnProbe<T>, [T: Serialize], T, |v, uri, _mime| serde_contents(&v, uri));

/// The bound behind the table's fallback: no type has it, so a return type no case takes is
/// one error, at the return type, in these words.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "this return type is not resource contents",
    note = "return `String`, `Vec<u8>`, `ResourceContents`, a `Serialize` value, an `Option` of one (`None` is \"not found\"), or a `Result` of one; or implement `mcp_runtime::resource::ResourceOutput` for it"
)]
pub trait ReturnedFromResource {}

/// The fallback: no case applies.
#[doc(hidden)]
pub trait ResourceViaUnsupported<R> {
    /// Unreachable: `R: ReturnedFromResource` never holds.
    fn convert(
        &self,
        value: R,
        uri: &str,
        mime: Option<&str>,
    ) -> Result<Vec<ResourceContents>, McpError>
    where
        R: ReturnedFromResource;
}

impl<T> ResourceViaUnsupported<T> for ResourceReturnProbe<T> {
    fn convert(&self, _: T, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, McpError>
    where
        T: ReturnedFromResource,
    {
        unreachable!("no type is `ReturnedFromResource`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Through the table generated code uses, at its depth.
    macro_rules! convert {
        ($t:ty, $v:expr) => {
            crate::__resource_return!($t, convert($v, "x://1", None))
        };
    }

    #[test]
    fn each_shape_converts() {
        let text = convert!(String, "hi".to_owned()).unwrap();
        assert_eq!(
            text,
            vec![ResourceContents::Text {
                uri: "x://1".into(),
                mime_type: Some("text/plain".into()),
                text: "hi".into(),
                meta: serde_json::Map::new(),
            }]
        );
        let blob = convert!(Vec<u8>, vec![1, 2]).unwrap();
        assert!(matches!(&blob[0], ResourceContents::Blob { blob, .. } if blob == "AQI="));
        let json = convert!(Vec<i32>, vec![1, 2]).unwrap();
        assert!(
            matches!(&json[0], ResourceContents::Text { text, mime_type: Some(m), .. } if text == "[1,2]" && m == "application/json")
        );
        assert_eq!(
            convert!(Option<String>, None).unwrap_err().code,
            ErrorCode::RESOURCE_NOT_FOUND_LEGACY
        );
        assert_eq!(
            convert!(Result<String, NotFound>, Err(NotFound))
                .unwrap_err()
                .data,
            Some(serde_json::json!({"uri": "x://1"}))
        );
        let e = convert!(Result<u8, String>, Err("disk on fire".into())).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_ref()),
            (ErrorCode::INTERNAL_ERROR, "disk on fire")
        );
        assert!(
            convert!(Vec<ResourceContents>, vec![]).is_err(),
            "empty contents mean not found"
        );
    }

    #[test]
    fn results_of_options_and_mcp_errors() {
        // `Result<Option<_>, _>`: `Ok(None)` is not found, `Ok(Some)` the contents, `Err` its error.
        let none: Result<Option<String>, McpError> = Ok(None);
        assert_eq!(
            convert!(Result<Option<String>, McpError>, none)
                .unwrap_err()
                .code,
            ErrorCode::RESOURCE_NOT_FOUND_LEGACY
        );
        let some = convert!(Result<Option<Vec<i32>>, String>, Ok(Some(vec![1]))).unwrap();
        assert!(matches!(&some[0], ResourceContents::Text { text, .. } if text == "[1]"));
        let denied = McpError::invalid_params("denied");
        let e = convert!(Result<Option<String>, McpError>, Err(denied.clone())).unwrap_err();
        assert_eq!((e.code, e.message), (denied.code, denied.message));
        let e =
            convert!(Result<String, McpError>, Err(McpError::invalid_params("bad"))).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn own_contents_beat_serde_at_every_level() {
        // `String` is both `ResourceOutput` (text) and `Serialize` (a JSON string).
        let is_text = |r: Result<Vec<ResourceContents>, McpError>| matches!(&r.unwrap()[0], ResourceContents::Text { text, mime_type: Some(m), .. } if text == "one" && m == "text/plain");
        assert!(is_text(convert!(String, "one".into())));
        assert!(is_text(convert!(Option<String>, Some("one".into()))));
        assert!(is_text(convert!(Result<String, String>, Ok("one".into()))));
        assert!(is_text(convert!(
            Result<Option<String>, McpError>,
            Ok(Some("one".into()))
        )));
    }
}
