//! The verifier seam: what checks a bearer token, and how it says no.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use super::Principal;

/// What [`TokenVerifier::verify`] returns.
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Principal, TokenError>> + Send + 'a>>;

/// What [`TokenVerifier::verify_shared`] returns.
#[doc(hidden)]
pub type SharedVerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Verified, TokenError>> + Send + 'a>>;

/// What [`TokenVerifier::verify_shared`] hands out: the principal, and until when the
/// verifier would hand out the same one for the same token without checking it again (its
/// cache's entry; `None` promises nothing). The HTTP server remembers it that long for the
/// connection the token came on.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Verified {
    pub principal: Arc<Principal>,
    pub until: Option<Instant>,
}

/// Checks an access token and says whose it is.
///
/// [`JwtVerifier`](super::JwtVerifier) (signed JWTs, keys from the issuer's JWKS) and
/// [`Introspection`](super::Introspection) (RFC 7662)
/// are the built-in ones; implement this for anything else (a session store, an API-key table).
/// The audience check is the verifier's job: a token minted for another resource must fail.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the bearer token, without the `Bearer ` prefix).
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;

    /// What the server calls: [`verify`](Self::verify), the principal shared, its lists
    /// hiding what it may not use as `hide_unauthorized` says. The built-in verifiers hand out
    /// the principal they keep for the token, not a copy of it.
    #[doc(hidden)]
    fn verify_shared<'a>(
        &'a self,
        token: &'a str,
        hide_unauthorized: bool,
    ) -> SharedVerifyFuture<'a> {
        Box::pin(async move {
            let mut principal = self.verify(token).await?;
            principal.hide_unauthorized = hide_unauthorized;
            Ok(Verified {
                principal: Arc::new(principal),
                until: None,
            })
        })
    }
}

/// `principal` as a request of a server whose lists hide (or not) what a caller may not use:
/// itself when it says so already (a verifier keeps it so for the server it serves) or when
/// nothing else holds it, else a copy that does.
pub(crate) fn hiding(mut principal: Arc<Principal>, hide_unauthorized: bool) -> Arc<Principal> {
    if principal.hide_unauthorized != hide_unauthorized {
        Arc::make_mut(&mut principal).hide_unauthorized = hide_unauthorized;
    }
    principal
}

/// A principal handed out by [`TokenVerifier::verify`]: the verifier's own, or a copy.
pub(crate) fn owned(principal: Arc<Principal>) -> Principal {
    let mut principal = Arc::unwrap_or_clone(principal);
    principal.hide_unauthorized = false;
    principal
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
