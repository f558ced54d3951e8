//! Arguments that arrive as strings (prompt arguments, URI template variables), parsed into the
//! parameter's type with `FromStr`. `Option<T>` parameters are optional.

use std::fmt::Display;
use std::marker::PhantomData;
use std::str::FromStr;

/// The autoref probe generated code calls `(&&ATag::<T>::new())` on.
pub struct ATag<T>(PhantomData<fn() -> T>);

impl<T> ATag<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ATag(PhantomData)
    }
}

/// `Option<T>`: absent is `None`.
pub trait ViaOptionalText<R> {
    /// Parses the value; the error says why.
    fn parse_text(&self, value: Option<&str>) -> Result<R, String>;
    /// Whether the argument must be given.
    fn required(&self) -> bool;
}

impl<T: FromStr> ViaOptionalText<Option<T>> for &ATag<Option<T>>
where
    T::Err: Display,
{
    fn parse_text(&self, value: Option<&str>) -> Result<Option<T>, String> {
        value
            .map(|v| v.parse::<T>().map_err(|e| e.to_string()))
            .transpose()
    }
    fn required(&self) -> bool {
        false
    }
}

/// Any `T: FromStr`: required.
pub trait ViaText<R> {
    /// Parses the value; the error says why.
    fn parse_text(&self, value: Option<&str>) -> Result<R, String>;
    /// Whether the argument must be given.
    fn required(&self) -> bool;
}

impl<T: FromStr> ViaText<T> for ATag<T>
where
    T::Err: Display,
{
    fn parse_text(&self, value: Option<&str>) -> Result<T, String> {
        match value {
            Some(v) => v.parse::<T>().map_err(|e| e.to_string()),
            None => Err("missing".to_owned()),
        }
    }
    fn required(&self) -> bool {
        true
    }
}
