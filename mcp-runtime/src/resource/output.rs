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

/// The autoref-specialization probe generated code calls `(&&&&&&&&RTag::<R>::new())` on.
pub struct RTag<T>(PhantomData<fn() -> T>);

impl<T> RTag<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        RTag(PhantomData)
    }
}

macro_rules! via {
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

via!(ViaResultOptionOutput, &&&&&&&RTag<Result<Option<T>, E>>, [T: ResourceOutput, E: Display + 'static], Result<Option<T>, E>,
    |v, uri, mime| nonempty(v.map_err(|e| error_of(e, uri))?.ok_or_else(|| not_found(uri, None))?.into_contents(uri, mime), uri));
via!(ViaResultOptionSerde, &&&&&&RTag<Result<Option<T>, E>>, [T: Serialize, E: Display + 'static], Result<Option<T>, E>,
    |v, uri, _mime| serde_contents(&v.map_err(|e| error_of(e, uri))?.ok_or_else(|| not_found(uri, None))?, uri));
via!(ViaResResultOutput, &&&&&RTag<Result<T, E>>, [T: ResourceOutput, E: Display + 'static], Result<T, E>,
    |v, uri, mime| nonempty(v.map_err(|e| error_of(e, uri))?.into_contents(uri, mime), uri));
via!(ViaResResultSerde, &&&&RTag<Result<T, E>>, [T: Serialize, E: Display + 'static], Result<T, E>,
    |v, uri, _mime| serde_contents(&v.map_err(|e| error_of(e, uri))?, uri));
via!(ViaOptionOutput, &&&RTag<Option<T>>, [T: ResourceOutput], Option<T>,
    |v, uri, mime| nonempty(v.ok_or_else(|| not_found(uri, None))?.into_contents(uri, mime), uri));
via!(ViaOptionSerde, &&RTag<Option<T>>, [T: Serialize], Option<T>,
    |v, uri, _mime| serde_contents(&v.ok_or_else(|| not_found(uri, None))?, uri));
via!(ViaResOutput, &RTag<T>, [T: ResourceOutput], T, |v, uri, mime| nonempty(v.into_contents(uri, mime), uri));
via!(ViaResSerde, RTag<T>, [T: Serialize], T, |v, uri, _mime| serde_contents(&v, uri));

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! convert {
        ($t:ty, $v:expr) => {{
            #[allow(unused_imports)]
            use super::{
                ViaOptionOutput as _, ViaOptionSerde as _, ViaResOutput as _,
                ViaResResultOutput as _, ViaResResultSerde as _, ViaResSerde as _,
            };
            (&&&&&&RTag::<$t>::new()).convert($v, "x://1", None)
        }};
    }

    #[test]
    fn each_shape_converts() {
        let text = convert!(String, "hi".to_owned()).unwrap();
        assert_eq!(
            text,
            vec![ResourceContents::Text {
                uri: "x://1".into(),
                mime_type: Some("text/plain".into()),
                text: "hi".into()
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
}
