//! Authorization: the caller of a request as an OAuth 2.1 access token names it.
//!
//! [`Principal`] is always here (a tool takes it as a parameter, or reads
//! [`Context::principal`](crate::Context::principal)). With the `auth` feature, an HTTP server
//! becomes an OAuth resource server ([`Auth`], set with
//! [`HttpConfig::auth`](crate::transport::http::HttpConfig::auth)): it publishes its
//! RFC 9728 protected resource metadata, verifies the bearer token of every request (JWTs
//! against the issuer's JWKS, or RFC 7662 introspection, or a [`TokenVerifier`] of your own),
//! and answers a missing or bad token with the `WWW-Authenticate` challenge clients follow.

// The caller is part of the request (the bottom layer, which hands it to handlers); this
// module, which verifies it, is its public home.
pub use crate::request::Principal;

#[cfg(feature = "auth")]
mod cache;
#[cfg(feature = "auth")]
mod config;
#[cfg(feature = "auth")]
mod fetch;
#[cfg(feature = "auth")]
mod introspect;
#[cfg(feature = "auth")]
mod jwt;
#[cfg(feature = "auth")]
mod verify;

#[cfg(feature = "auth")]
pub use config::Auth;
#[cfg(feature = "auth")]
pub use introspect::Introspection;
#[cfg(feature = "auth")]
pub use jwt::JwtVerifier;
#[cfg(feature = "auth")]
#[doc(hidden)]
pub use verify::{SharedVerifyFuture, Verified};
#[cfg(feature = "auth")]
pub use verify::{TokenError, TokenVerifier, VerifyFuture};
#[cfg(all(test, feature = "auth"))]
mod test_peer;
