//! Arguments that arrive as strings (prompt arguments, URI template variables), parsed into the
//! parameter's type with `FromStr`. `Option<T>` parameters are optional.

use std::fmt::Display;
use std::marker::PhantomData;
use std::str::FromStr;

/// The probe a text argument's type is dispatched on, by autoref specialization; the table of
/// cases and depth is [`text_arg!`](crate::__private::text_arg).
pub struct TextArgProbe<T>(PhantomData<fn() -> T>);

impl<T> TextArgProbe<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        TextArgProbe(PhantomData)
    }
}

/// Calls `$method($args…)` on the case of the text-argument table that applies to `$ty`.
/// Three `&`s: the first case is implemented for two (one per case below it, down to the
/// fallback [`TextViaUnsupported`]), and method lookup adds the `&` of `&self`.
#[doc(hidden)]
#[macro_export]
macro_rules! __text_arg {
    ($ty:ty, $method:ident($($arg:expr),* $(,)?)) => {{
        #[allow(unused_imports)]
        use $crate::__private::{TextViaFromStr as _, TextViaOption as _, TextViaUnsupported as _};
        (&&&$crate::__private::TextArgProbe::<$ty>::new()).$method($($arg),*)
    }};
}

/// Priority 0: `Option<T: FromStr>`: absent is `None`.
pub trait TextViaOption<R> {
    /// Parses the value; the error says why.
    fn parse_text(&self, value: Option<&str>) -> Result<R, String>;
    /// Whether the argument must be given.
    fn required(&self) -> bool;
}

impl<T: FromStr> TextViaOption<Option<T>> for &&TextArgProbe<Option<T>>
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

/// Priority 1: any `T: FromStr`: required.
pub trait TextViaFromStr<R> {
    /// Parses the value; the error says why.
    fn parse_text(&self, value: Option<&str>) -> Result<R, String>;
    /// Whether the argument must be given.
    fn required(&self) -> bool;
}

impl<T: FromStr> TextViaFromStr<T> for &TextArgProbe<T>
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

/// The bound behind the table's fallback: no type has it, so a parameter type no case takes is
/// one error, at the parameter's type, in these words.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be parsed from a text argument",
    label = "prompt arguments and URI template variables arrive as text",
    note = "use a type that implements `FromStr` with a `Display` error (`String`, numbers, …), or an `Option` of one"
)]
pub trait ParsedFromText {}

/// The fallback: no case applies.
pub trait TextViaUnsupported<R> {
    /// Never used (the build fails at `parse_text`).
    fn required(&self) -> bool {
        true
    }
    /// Unreachable: `R: ParsedFromText` never holds.
    fn parse_text(&self, value: Option<&str>) -> Result<R, String>
    where
        R: ParsedFromText;
}

impl<T> TextViaUnsupported<T> for TextArgProbe<T> {
    fn parse_text(&self, _: Option<&str>) -> Result<T, String>
    where
        T: ParsedFromText,
    {
        unreachable!("no type is `ParsedFromText`")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn options_are_optional_and_others_required() {
        assert!(!crate::__text_arg!(Option<u8>, required()));
        assert!(crate::__text_arg!(u8, required()));
        assert_eq!(crate::__text_arg!(Option<u8>, parse_text(None)), Ok(None));
        assert_eq!(
            crate::__text_arg!(Option<u8>, parse_text(Some("7"))),
            Ok(Some(7))
        );
        assert_eq!(crate::__text_arg!(u8, parse_text(Some("7"))), Ok(7));
        assert!(crate::__text_arg!(u8, parse_text(Some("x"))).is_err());
        assert!(crate::__text_arg!(u8, parse_text(None)).is_err());
    }
}
