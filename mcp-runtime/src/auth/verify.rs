//! The verifier seam: what checks a bearer token, and how it says no.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use super::Principal;

/// What [`TokenVerifier::verify`] returns.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Principal, TokenError>> + Send + 'a>>;

/// Checks an access token and says whose it is.
///
/// [`JwtVerifier`](super::JwtVerifier) (signed JWTs, keys from the issuer's JWKS) and
/// [`Introspection`](super::Introspection) (RFC 7662)
/// are the built-in ones; implement this for anything else (a session store, an API-key table).
/// The audience check is the verifier's job: a token minted for another resource must fail.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the bearer token, without the `Bearer ` prefix).
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// Expired, revoked, malformed, for another audience, badly signed: 401
    /// `error="invalid_token"`, and the client gets a new token.
    Invalid(String),
    /// The token could not be checked (the issuer or its keys are unreachable): 503, and the
    /// client may retry. Never a reason to let the request through.
    Unavailable(String),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Invalid(why) => write!(f, "invalid token: {why}"),
            TokenError::Unavailable(why) => write!(f, "the token could not be checked: {why}"),
        }
    }
}

impl std::error::Error for TokenError {}
