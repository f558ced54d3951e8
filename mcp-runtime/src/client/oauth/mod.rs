//! OAuth 2.1 for the client: what it does when an HTTP server answers `401` (or `403
//! insufficient_scope`), as the MCP authorization specification asks of clients.
//!
//! [`ClientBuilder::oauth`](super::ClientBuilder::oauth) turns it on with an [`OAuthConfig`].
//! On a 401 the client reads the server's challenge, finds its protected resource metadata
//! (the challenge's `resource_metadata`, then the RFC 9728 well-known URLs, path-inserted then
//! root) and checks that it describes the server being called (its `resource` is the server's
//! URL, or covers it on the same origin: anything else is refused, GHSA-33f5-2c5q-wgwj). It
//! then reads the authorization server's metadata (RFC 8414 and OpenID Connect URLs; its
//! `issuer` must be the one it was fetched for, byte for byte), registers (a pre-registered
//! `client_id`, a Client ID Metadata Document, or RFC 7591 Dynamic Client Registration), and
//! gets a token by the configured grant. The request is then sent again with it.
//!
//! - **Authorization code** ([`OAuthConfig::authorization_code`]): PKCE S256, a random
//!   `state` checked on return, the `resource` parameter (RFC 8707) in the authorization and
//!   token requests, the RFC 9207 `iss` of the redirect compared with the issuer (required
//!   when the server advertises it, compared whenever present, never normalised). The user's
//!   part goes through a [`RedirectHandler`]: [`LoopbackRedirect`] listens on `127.0.0.1`
//!   and hands the authorization URL to a hook of yours (open a browser, or a window).
//! - **Client credentials** ([`OAuthConfig::client_credentials`]); the **JWT bearer** grant
//!   of workload identity federation ([`OAuthConfig::jwt_bearer`]); **enterprise-managed
//!   authorization** ([`OAuthConfig::enterprise`]: the identity provider's token exchange for
//!   an ID-JAG, then the JWT bearer grant). With the `client-jwt` feature, `private_key_jwt`
//!   client authentication (`PrivateKey`) and **DPoP** (`OAuthConfig::dpop`, RFC 9449):
//!   tokens bound to a P-256 key the client makes, a fresh proof on every request, the
//!   authorization server's and the MCP server's nonces honoured.
//! - **Scopes**: the challenge's `scope`, else the metadata's `scopes_supported`, else none;
//!   `offline_access` added only when the authorization server lists it. A 403
//!   `insufficient_scope` re-authorizes with the union of the scopes asked so far and the new
//!   ones, at most [`max_step_ups`](OAuthConfig::max_step_ups) times per request.
//! - **Tokens** live in a [`TokenStore`] ([`MemoryTokenStore`] by default,
//!   [`FileTokenStore`] for a CLI), are refreshed (with rotation) when they expire or are
//!   refused, and are only ever sent to the MCP server the client was given, in the
//!   `Authorization` header: never in a URL, never to another origin (the client follows no
//!   redirect), never to the authorization server.
//!
//! The authorization happens inside the request that needed it, within its deadline: an
//! interactive login needs a [`request_timeout`](super::ClientBuilder::request_timeout) and
//! [`connect_timeout`](super::ClientBuilder::connect_timeout) long enough for a person.

mod discovery;
mod fetch;
mod flow;
#[cfg(feature = "client-jwt")]
mod jwt;
mod metadata;
mod pkce;
mod redirect;
mod registration;
mod store;
mod token;

use std::fmt;
use std::sync::Arc;

pub(crate) use fetch::Fetch;
pub(crate) use flow::Authorizer;
#[cfg(feature = "client-jwt")]
pub use jwt::PrivateKey;
pub use redirect::{AuthorizeFuture, LoopbackRedirect, RedirectHandler};
pub use store::{FileTokenStore, MemoryTokenStore, TokenStore, Tokens};

/// How a client gets tokens for an HTTP server that asks for them. Built with one of the
/// grant constructors, then refined with the other methods.
///
/// ```no_run
/// use mcp_runtime::client::Client;
/// use mcp_runtime::client::oauth::{LoopbackRedirect, OAuthConfig};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let redirect = LoopbackRedirect::bind(|url| println!("Open this page to log in: {url}"))?;
/// let client = Client::builder()
///     .oauth(OAuthConfig::authorization_code(redirect).client_name("my-agent"))
///     .connect("http://127.0.0.1:8000/mcp")
///     .await?;
/// # drop(client);
/// # Ok(())
/// # }
/// ```
/// Cloning shares the token store (and the redirect handler): a cloned
/// [`ClientBuilder`](super::ClientBuilder), as [`Clients`](super::Clients) makes for each server,
/// keeps each server's tokens under that server's URL in the same store.
#[derive(Clone)]
#[must_use]
pub struct OAuthConfig {
    pub(crate) grant: Grant,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) max_step_ups: u32,
    pub(crate) assertion: Option<ClientAssertion>,
    #[cfg_attr(not(feature = "client-jwt"), allow(dead_code))]
    pub(crate) dpop: bool,
}

#[derive(Clone)]
pub(crate) enum Grant {
    AuthorizationCode(Arc<dyn RedirectHandler>),
    ClientCredentials,
    JwtBearer(Arc<dyn Fn() -> String + Send + Sync>),
    Enterprise(Box<EnterpriseAuthorization>),
}

/// The enterprise-managed authorization grant (SEP-990): the user's identity provider
/// exchanges their ID token for an identity assertion grant (ID-JAG, RFC 8693 token exchange),
/// which the MCP server's authorization server takes as a JWT bearer grant (RFC 7523) from a
/// pre-registered client.
#[derive(Clone)]
#[non_exhaustive]
pub struct EnterpriseAuthorization {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// This client's id at the identity provider.
    pub idp_client_id: String,
    /// This client's secret at the identity provider, if it has one.
    pub idp_client_secret: Option<String>,
    /// The user's ID token from the identity provider.
    pub id_token: String,
}

impl EnterpriseAuthorization {
    /// The identity provider's token endpoint, this client's id there, and the user's ID
    /// token.
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: impl Into<String>,
    ) -> Self {
        EnterpriseAuthorization {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            id_token: id_token.into(),
        }
    }
}

impl fmt::Debug for OAuthConfig {
    /// Secrets are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode(_) => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::JwtBearer(_) => "jwt-bearer",
            Grant::Enterprise(_) => "enterprise-managed (token exchange, jwt-bearer)",
        };
        f.debug_struct("OAuthConfig")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    fn with(grant: Grant) -> Self {
        OAuthConfig {
            grant,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "mcp-runtime-client".into(),
            scopes: None,
            store: Arc::new(MemoryTokenStore::new()),
            max_step_ups: 2,
            assertion: None,
            dpop: false,
        }
    }

    /// The authorization-code grant with PKCE: the user logs in through `redirect`.
    pub fn authorization_code(redirect: impl RedirectHandler) -> Self {
        Self::with(Grant::AuthorizationCode(Arc::new(redirect)))
    }

    /// The client-credentials grant (a machine acting for itself, no user): a pre-registered
    /// client that authenticates with `secret` (`client_secret_basic`, or
    /// `client_secret_post` when the server takes only that).
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        let mut config = Self::with(Grant::ClientCredentials);
        config.client_id = Some(client_id.into());
        config.client_secret = Some(secret.into());
        config
    }

    /// The JWT bearer grant (RFC 7523 §2.1) for workload identity federation: `assertion`
    /// returns the workload's current JWT (from its platform: a Kubernetes service account
    /// token, a cloud identity token), sent as the grant. A refusal is reported, never retried
    /// with another grant. Add [`client_id`](Self::client_id) when the server wants one.
    pub fn jwt_bearer(assertion: impl Fn() -> String + Send + Sync + 'static) -> Self {
        Self::with(Grant::JwtBearer(Arc::new(assertion)))
    }

    /// The enterprise-managed authorization grant (SEP-990), for a client pre-registered
    /// at the authorization server with `client_id` and `secret`.
    pub fn enterprise(
        grant: EnterpriseAuthorization,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        let mut config = Self::with(Grant::Enterprise(Box::new(grant)));
        config.client_id = Some(client_id.into());
        config.client_secret = Some(secret.into());
        config
    }

    /// The client-credentials grant with `private_key_jwt` client authentication (RFC 7523
    /// §2.2): a signed assertion instead of a secret.
    #[cfg(feature = "client-jwt")]
    pub fn client_credentials_jwt(client_id: impl Into<String>, key: PrivateKey) -> Self {
        let mut config = Self::with(Grant::ClientCredentials);
        config.client_id = Some(client_id.into());
        config.assertion = Some(key);
        config
    }

    /// Authenticates a pre-registered client with `private_key_jwt` (RFC 7523 §2.2).
    #[cfg(feature = "client-jwt")]
    pub fn private_key_jwt(mut self, key: PrivateKey) -> Self {
        self.assertion = Some(key);
        self
    }

    /// DPoP (RFC 9449): with an authorization server that supports ES256 proofs
    /// (`dpop_signing_alg_values_supported`), tokens are bound to a key the client makes,
    /// and every request proves it holds it (the servers' nonces honoured). Off by default.
    #[cfg(feature = "client-jwt")]
    pub fn dpop(mut self, on: bool) -> Self {
        self.dpop = on;
        self
    }

    /// A pre-registered client id (with [`client_secret`](Self::client_secret) for a
    /// confidential client): no registration is made.
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self
    }

    /// The pre-registered client's secret.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as its `client_id`
    /// with authorization servers that say they fetch them
    /// (`client_id_metadata_document_supported`); others are registered with dynamically.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The name given in dynamic client registration (default `mcp-runtime-client`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scopes to ask for, in place of the challenge's or the metadata's.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Where tokens are kept (default: in memory).
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How many times one request may re-authorize for a 403 `insufficient_scope` (default
    /// 2): past it the request fails with [`ClientError::Authorization`](super::ClientError::Authorization).
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.max_step_ups = n;
        self
    }
}

/// Signs `private_key_jwt` client assertions.
#[cfg(feature = "client-jwt")]
pub(crate) type ClientAssertion = PrivateKey;

/// Without the `client-jwt` feature, nothing signs.
#[cfg(not(feature = "client-jwt"))]
#[derive(Clone)]
pub(crate) enum ClientAssertion {}

#[cfg(not(feature = "client-jwt"))]
impl ClientAssertion {
    pub(crate) fn sign(
        &self,
        _client_id: &str,
        _audience: &str,
    ) -> Result<String, super::ClientError> {
        match *self {}
    }
}
