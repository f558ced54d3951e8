//! [`Context`]: what a tool can learn about the request it serves, and [`FromContext`], the
//! trait behind every injected parameter. Both live in the request layer (`request/`), the
//! bottom of the runtime; this module is their public home.

pub use crate::request::{Context, FromContext};
