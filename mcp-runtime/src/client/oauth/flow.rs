//! The client's side of an authorization, start to end: [`Authorizer`] holds one server's
//! tokens, puts them on its requests, and on a 401 or 403 `insufficient_scope` finds out how
//! to get (better) ones and gets them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use http::Uri;
use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};

use super::super::error::ClientError;
use super::discovery::{self, origin};
use super::metadata::{Challenge, ServerMetadata};
use super::pkce::{Pkce, random_token};
use super::store::Tokens;
use super::token::{self, ClientCreds};
use super::{Grant, OAuthConfig, fetch};

/// Refresh a token this many seconds before it expires.
const EXPIRY_MARGIN: u64 = 30;

/// What a discovery found: the authorization server and what to ask it for.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// The protected resource metadata's `resource` (sent as RFC 8707 `resource`), `None`
    /// for a 2025-03-26 server without metadata.
    resource: Option<String>,
    prm_scopes: Option<Vec<String>>,
    issuer: String,
    meta: ServerMetadata,
    /// Endpoints guessed (2025-03-26 fallbacks), not read from metadata.
    guessed: bool,
}

#[derive(Default)]
struct FlowState {
    /// The client's registration at each authorization server, by issuer.
    registrations: HashMap<String, ClientCreds>,
    /// The scopes asked for so far (a step-up asks for their union with the new ones).
    scopes: Vec<String>,
    last: Option<Found>,
}

/// Counts a request's retries for authorization.
#[derive(Debug, Default)]
pub(crate) struct Tries {
    reauthorized: bool,
    step_ups: u32,
    nonces: u32,
}

/// One server's authorization.
pub(crate) struct Authorizer {
    config: OAuthConfig,
    /// Its requests to authorization servers, under the `ClientBuilder`'s TLS settings.
    fetch: fetch::Fetch,
    server: Uri,
    /// The key of its tokens in the store: the URL as given.
    key: String,
    current: Mutex<Option<Tokens>>,
    /// Bumped whenever the tokens change: a request refused with older ones is simply sent
    /// again.
    generation: AtomicU64,
    flow: tokio::sync::Mutex<FlowState>,
    /// The latest DPoP nonce of each server (by origin: the MCP server's, each token
    /// endpoint's).
    nonces: Mutex<HashMap<String, String>>,
    #[cfg(feature = "client-jwt")]
    dpop: Option<super::jwt::DpopKey>,
}

impl Authorizer {
    pub(crate) fn new(
        config: OAuthConfig,
        fetch: fetch::Fetch,
        server: Uri,
        key: String,
    ) -> Authorizer {
        let current = config.store.load(&key);
        #[cfg(feature = "client-jwt")]
        let config_dpop = config.dpop;
        Authorizer {
            config,
            fetch,
            server,
            key,
            current: Mutex::new(current),
            generation: AtomicU64::new(0),
            flow: tokio::sync::Mutex::new(FlowState::default()),
            nonces: Mutex::new(HashMap::new()),
            #[cfg(feature = "client-jwt")]
            dpop: config_dpop.then(super::jwt::DpopKey::generate),
        }
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The `Authorization` header (and, for a DPoP-bound token, the `DPoP` proof) for a
    /// `method` request to `url`. Only the links to the server the client was given call
    /// this, for its URL (or an HTTP+SSE endpoint on its origin).
    pub(crate) fn headers(&self, method: &str, url: &Uri) -> Vec<(HeaderName, HeaderValue)> {
        let Some(tokens) = self.current.lock().unwrap().clone() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Ok(mut value) =
            HeaderValue::try_from(format!("{} {}", tokens.token_type, tokens.access_token))
        {
            value.set_sensitive(true);
            out.push((AUTHORIZATION, value));
        }
        if tokens.token_type == "DPoP" {
            let url = url.to_string();
            let nonce = self.nonce(&url);
            if let Some(proof) =
                self.proof(method, &url, Some(&tokens.access_token), nonce.as_deref())
                && let Ok(value) = HeaderValue::try_from(proof)
            {
                out.push((HeaderName::from_static("dpop"), value));
            }
        }
        out
    }

    /// A DPoP proof, when the client has a DPoP key.
    #[allow(unused_variables)]
    fn proof(
        &self,
        htm: &str,
        htu: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Option<String> {
        #[cfg(feature = "client-jwt")]
        if let Some(key) = &self.dpop {
            return Some(key.proof(htm, htu, token, nonce));
        }
        None
    }

    fn nonce(&self, url: &str) -> Option<String> {
        let origin = url.parse::<Uri>().ok().map(|u| origin(&u))?;
        self.nonces.lock().unwrap().get(&origin).cloned()
    }

    /// Keeps a server's `DPoP-Nonce`; whether there was one.
    fn keep_nonce(&self, url: &str, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) else {
            return false;
        };
        if let Ok(uri) = url.parse::<Uri>() {
            self.nonces
                .lock()
                .unwrap()
                .insert(origin(&uri), nonce.to_owned());
        }
        true
    }

    /// Whether DPoP is used with this authorization server: the client has a key and the
    /// server takes ES256 proofs.
    fn dpop_with(&self, found: &Found) -> bool {
        #[cfg(feature = "client-jwt")]
        {
            self.dpop.is_some()
                && found
                    .meta
                    .dpop_signing_alg_values_supported
                    .as_ref()
                    .is_some_and(|a| a.iter().any(|a| a == "ES256"))
        }
        #[cfg(not(feature = "client-jwt"))]
        {
            let _ = found;
            false
        }
    }

    /// A token request to `found`'s token endpoint, with a DPoP proof when DPoP is on (and
    /// once more with the server's nonce when it asks for one).
    async fn token_request(
        &self,
        found: &Found,
        client: Option<&ClientCreds>,
        form: Vec<(&str, String)>,
    ) -> Result<fetch::Reply, ClientError> {
        let endpoint = token_endpoint(found)?;
        let dpop = self.dpop_with(found);
        let mut asked = false;
        loop {
            let mut extra = Vec::new();
            if dpop {
                let nonce = self.nonce(endpoint);
                if let Some(proof) = self.proof("POST", endpoint, None, nonce.as_deref()) {
                    extra.push(("dpop".to_owned(), proof));
                }
            }
            let reply = token::request(
                &self.fetch,
                endpoint,
                &found.issuer,
                client,
                form.clone(),
                &extra,
                self.config.assertion.as_ref(),
            )
            .await?;
            let fresh = dpop && self.keep_nonce(endpoint, &reply.headers);
            let use_nonce = reply.status == 400
                && reply
                    .json()
                    .and_then(|b| b.get("error").and_then(|e| e.as_str()).map(str::to_owned))
                    .as_deref()
                    == Some("use_dpop_nonce");
            if use_nonce && fresh && !asked {
                asked = true;
                continue;
            }
            return Ok(reply);
        }
    }

    fn set(&self, tokens: Tokens) {
        if let Err(e) = self.config.store.save(&self.key, &tokens) {
            tracing::warn!(error = %e, "the token store could not save the tokens");
        }
        *self.current.lock().unwrap() = Some(tokens);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn forget(&self) {
        if let Err(e) = self.config.store.clear(&self.key) {
            tracing::warn!(error = %e, "the token store could not forget the tokens");
        }
        *self.current.lock().unwrap() = None;
    }

    /// Before a request: a token about to expire is refreshed, when the client knows where
    /// (best effort: a failure leaves it to the 401).
    pub(crate) async fn before_send(&self) {
        let expiring = self
            .current
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some() && t.expires_within(EXPIRY_MARGIN));
        if !expiring {
            return;
        }
        let sent = self.generation();
        let st = self.flow.lock().await;
        if self.generation() != sent {
            return;
        }
        let Some(found) = st.last.clone() else {
            return;
        };
        drop(st);
        if let Err(e) = self.refresh(&found).await {
            tracing::debug!(error = %e, "refreshing the expiring token failed");
        }
    }

    /// After an answer: whether to send the request again (a new token was got), or an
    /// error. `sent`: the generation of the tokens the request carried.
    pub(crate) async fn after(
        &self,
        status: u16,
        headers: &HeaderMap,
        sent: u64,
        tries: &mut Tries,
    ) -> Result<bool, ClientError> {
        let challenge = || {
            Challenge::parse(
                headers
                    .get_all(WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok()),
            )
        };
        match status {
            401 => {
                let challenge = challenge();
                // A DPoP proof without the server's (new) nonce: again, with it.
                if challenge.error.as_deref() == Some("use_dpop_nonce")
                    && tries.nonces < 2
                    && self.keep_nonce(&self.server.to_string(), headers)
                {
                    tries.nonces += 1;
                    return Ok(true);
                }
                if tries.reauthorized {
                    return Err(ClientError::authorization(
                        "the server refused the token it was just given (401)",
                    ));
                }
                tries.reauthorized = true;
                self.unauthorized(challenge, sent).await?;
                Ok(true)
            }
            403 => {
                let challenge = challenge();
                if challenge.error.as_deref() != Some("insufficient_scope") {
                    return Ok(false);
                }
                if tries.step_ups >= self.config.max_step_ups {
                    return Err(ClientError::authorization(format!(
                        "the server still asks for more scope ({}) after {} re-authorizations; \
                         giving up",
                        challenge.scope.as_deref().unwrap_or("unnamed"),
                        tries.step_ups
                    )));
                }
                tries.step_ups += 1;
                self.step_up(challenge, sent).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// A 401: refresh the token, or authorize from the start.
    async fn unauthorized(&self, challenge: Challenge, sent: u64) -> Result<(), ClientError> {
        let mut st = self.flow.lock().await;
        if self.generation() != sent {
            return Ok(()); // another request got a new token meanwhile
        }
        let found = self.discover(&challenge).await?;
        st.last = Some(found.clone());
        let refreshable = self.current.lock().unwrap().as_ref().is_some_and(|t| {
            t.refresh_token.is_some() && t.issuer.as_deref() == Some(&found.issuer)
        });
        if refreshable {
            match self.refresh(&found).await {
                Ok(()) => return Ok(()),
                Err(e) => {
                    tracing::debug!(error = %e, "refreshing the token failed; authorizing again")
                }
            }
        }
        self.forget();
        let scopes = self.scopes(&mut st, &challenge, &found, false);
        let tokens = self.obtain(&mut st, &found, &scopes).await?;
        self.set(tokens);
        Ok(())
    }

    /// A 403 `insufficient_scope`: authorize again for more scopes.
    async fn step_up(&self, challenge: Challenge, sent: u64) -> Result<(), ClientError> {
        let mut st = self.flow.lock().await;
        if self.generation() != sent {
            return Ok(());
        }
        let found = match (&challenge.resource_metadata, &st.last) {
            (None, Some(found)) => found.clone(),
            _ => self.discover(&challenge).await?,
        };
        st.last = Some(found.clone());
        let scopes = self.scopes(&mut st, &challenge, &found, true);
        let tokens = self.obtain(&mut st, &found, &scopes).await?;
        self.set(tokens);
        Ok(())
    }

    /// The scopes to ask for: the configured ones, else the challenge's, else the resource
    /// metadata's `scopes_supported`, else none; on a step-up, with those asked for before
    /// (SEP-2350); `offline_access` added when the authorization server lists it (SEP-2207).
    fn scopes(
        &self,
        st: &mut FlowState,
        challenge: &Challenge,
        found: &Found,
        step_up: bool,
    ) -> Vec<String> {
        // A step-up asks for what the server now names, on top of what was asked before
        // (configured scopes included).
        let configured = self.config.scopes.as_ref().filter(|_| !step_up);
        let mut scopes: Vec<String> = match (configured, &challenge.scope, &found.prm_scopes) {
            (Some(s), _, _) => s.clone(),
            (None, Some(s), _) => s.split_whitespace().map(str::to_owned).collect(),
            (None, None, Some(s)) => s.clone(),
            _ => Vec::new(),
        };
        if step_up {
            let mut union = st.scopes.clone();
            for s in scopes {
                if !union.contains(&s) {
                    union.push(s);
                }
            }
            scopes = union;
        }
        let wants_refresh = matches!(self.config.grant, Grant::AuthorizationCode(_));
        if wants_refresh
            && !scopes.is_empty()
            && found.meta.offers_scope("offline_access")
            && found.meta.may_refresh()
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
        st.scopes = scopes.clone();
        scopes
    }

    /// Finds the authorization server (and the resource) for this server.
    async fn discover(&self, challenge: &Challenge) -> Result<Found, ClientError> {
        let prm = discovery::resource_metadata(&self.fetch, &self.server, challenge).await?;
        let Some(prm) = prm else {
            // A 2025-03-26 server: the authorization server is at its origin, with metadata
            // or at the default paths.
            let issuer = origin(&self.server);
            let (meta, guessed) = match discovery::server_metadata(&self.fetch, &issuer).await? {
                Some(meta) => (meta, false),
                None => (
                    ServerMetadata {
                        issuer: issuer.clone(),
                        authorization_endpoint: Some(format!("{issuer}/authorize")),
                        token_endpoint: Some(format!("{issuer}/token")),
                        registration_endpoint: Some(format!("{issuer}/register")),
                        ..ServerMetadata::default()
                    },
                    true,
                ),
            };
            return Ok(Found {
                resource: None,
                prm_scopes: None,
                issuer,
                meta,
                guessed,
            });
        };
        let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| {
            ClientError::authorization(format!(
                "the protected resource metadata of {} names no authorization server",
                prm.resource
            ))
        })?;
        let meta = discovery::server_metadata(&self.fetch, &issuer)
            .await?
            .ok_or_else(|| {
                ClientError::authorization(format!(
                    "the authorization server {issuer} publishes no metadata (RFC 8414 or OpenID \
                 Connect Discovery)"
                ))
            })?;
        Ok(Found {
            resource: Some(prm.resource),
            prm_scopes: prm.scopes_supported,
            issuer,
            meta,
            guessed: false,
        })
    }

    /// New tokens by the configured grant.
    async fn obtain(
        &self,
        st: &mut FlowState,
        found: &Found,
        scopes: &[String],
    ) -> Result<Tokens, ClientError> {
        let (mut tokens, client) = match &self.config.grant {
            Grant::AuthorizationCode(redirect) => {
                let redirect_uri = redirect.redirect_uri();
                let client = match st.registrations.get(&found.issuer) {
                    Some(client) => client.clone(),
                    None => {
                        let client = super::registration::register(
                            &self.fetch,
                            &self.config,
                            &found.meta,
                            Some(&redirect_uri),
                        )
                        .await?;
                        st.registrations
                            .insert(found.issuer.clone(), client.clone());
                        client
                    }
                };
                let tokens = self
                    .authorization_code(found, &client, redirect.as_ref(), &redirect_uri, scopes)
                    .await?;
                (tokens, client)
            }
            Grant::ClientCredentials => {
                let client =
                    super::registration::register(&self.fetch, &self.config, &found.meta, None)
                        .await?;
                let mut form = vec![("grant_type", "client_credentials".to_owned())];
                if !scopes.is_empty() {
                    form.push(("scope", scopes.join(" ")));
                }
                if let Some(resource) = &found.resource {
                    form.push(("resource", resource.clone()));
                }
                let reply = self.token_request(found, Some(&client), form).await?;
                (token::read(&reply, "the client-credentials grant")?, client)
            }
            Grant::JwtBearer(assertion) => {
                let client = self.config.client_id.as_ref().map(|id| ClientCreds {
                    id: id.clone(),
                    secret: self.config.client_secret.clone(),
                    method: token::AuthMethod::choose(
                        self.config.client_secret.is_some(),
                        &found.meta,
                    ),
                });
                let form = jwt_bearer_form(assertion(), scopes, found);
                let reply = self.token_request(found, client.as_ref(), form).await?;
                let tokens = token::read(&reply, "the JWT bearer grant")?;
                let client = client.unwrap_or(ClientCreds {
                    id: String::new(),
                    secret: None,
                    method: token::AuthMethod::None,
                });
                (tokens, client)
            }
            Grant::Enterprise(grant) => {
                let client =
                    super::registration::register(&self.fetch, &self.config, &found.meta, None)
                        .await?;
                let jag = self.identity_assertion(grant, found, scopes).await?;
                let form = jwt_bearer_form(jag, scopes, found);
                let reply = self.token_request(found, Some(&client), form).await?;
                (
                    token::read(&reply, "the JWT bearer grant (ID-JAG)")?,
                    client,
                )
            }
        };
        tokens.issuer = Some(found.issuer.clone());
        tokens.client_id = (!client.id.is_empty()).then_some(client.id);
        tokens.client_secret = client.secret;
        tokens.client_auth_method = Some(client.method.name().to_owned());
        Ok(tokens)
    }

    /// The authorization-code flow with PKCE.
    async fn authorization_code(
        &self,
        found: &Found,
        client: &ClientCreds,
        redirect: &dyn super::RedirectHandler,
        redirect_uri: &str,
        scopes: &[String],
    ) -> Result<Tokens, ClientError> {
        let meta = &found.meta;
        if !found.guessed {
            let s256 = meta
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|m| m == "S256"));
            if !s256 {
                return Err(ClientError::authorization(format!(
                    "the authorization server {} does not say it supports PKCE with S256 \
                     (code_challenge_methods_supported); refused",
                    found.issuer
                )));
            }
        }
        let endpoint = meta.authorization_endpoint.as_deref().ok_or_else(|| {
            ClientError::authorization(format!(
                "the authorization server {} names no authorization_endpoint",
                found.issuer
            ))
        })?;
        fetch::parse(endpoint)?;
        let pkce = Pkce::new();
        let state = random_token(32);
        let mut query = vec![
            ("response_type", "code".to_owned()),
            ("client_id", client.id.clone()),
            ("redirect_uri", redirect_uri.to_owned()),
            ("code_challenge", pkce.challenge.clone()),
            ("code_challenge_method", "S256".to_owned()),
            ("state", state.clone()),
        ];
        if !scopes.is_empty() {
            query.push(("scope", scopes.join(" ")));
        }
        if let Some(resource) = &found.resource {
            query.push(("resource", resource.clone()));
        }
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let sep = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{sep}{}", fetch::form(&pairs));

        let back = redirect.authorize(&url).await?;
        let params = fetch::query_pairs(back.split_once('?').map(|(_, q)| q).unwrap_or(""));
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if get("state") != Some(state.as_str()) {
            return Err(ClientError::authorization(
                "the authorization response's state is not the one sent; refused",
            ));
        }
        // RFC 9207: a present `iss` must be the issuer; an advertised one must be present.
        match get("iss") {
            Some(iss) if iss != found.issuer => {
                return Err(ClientError::authorization(format!(
                    "the authorization response comes from the issuer {iss:?}, not {:?}; refused",
                    found.issuer
                )));
            }
            None if meta.authorization_response_iss_parameter_supported => {
                return Err(ClientError::authorization(
                    "the authorization response has no iss, which its server says it sends \
                     (RFC 9207); refused",
                ));
            }
            _ => {}
        }
        if let Some(error) = get("error") {
            let desc = get("error_description")
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            return Err(ClientError::authorization(format!(
                "the authorization was refused: {error}{desc}"
            )));
        }
        let code = get("code")
            .filter(|c| !c.is_empty())
            .ok_or_else(|| ClientError::authorization("the authorization response has no code"))?;
        let mut form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", redirect_uri.to_owned()),
            ("code_verifier", pkce.verifier),
        ];
        if let Some(resource) = &found.resource {
            form.push(("resource", resource.clone()));
        }
        let reply = self.token_request(found, Some(client), form).await?;
        token::read(&reply, "the token request")
    }

    /// The identity assertion grant (ID-JAG) for this server's authorization server, from the
    /// identity provider (RFC 8693 token exchange of the user's ID token).
    async fn identity_assertion(
        &self,
        grant: &super::EnterpriseAuthorization,
        found: &Found,
        scopes: &[String],
    ) -> Result<String, ClientError> {
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            ("subject_token", grant.id_token.clone()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
            ("audience", found.issuer.clone()),
        ];
        if let Some(resource) = &found.resource {
            form.push(("resource", resource.clone()));
        }
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        let idp = ClientCreds {
            id: grant.idp_client_id.clone(),
            secret: grant.idp_client_secret.clone(),
            method: if grant.idp_client_secret.is_some() {
                token::AuthMethod::Basic
            } else {
                token::AuthMethod::None
            },
        };
        let reply = token::request(
            &self.fetch,
            &grant.idp_token_endpoint,
            &grant.idp_token_endpoint,
            Some(&idp),
            form,
            &[],
            None,
        )
        .await?;
        let body = reply.json().unwrap_or(serde_json::Value::Null);
        if !reply.ok() {
            return Err(token::refusal(
                &reply,
                &body,
                "the token exchange at the identity provider",
            ));
        }
        let issued = body.get("issued_token_type").and_then(|t| t.as_str());
        if issued.is_some_and(|t| t != "urn:ietf:params:oauth:token-type:id-jag") {
            return Err(ClientError::authorization(format!(
                "the identity provider issued a {issued:?}, not an identity assertion grant"
            )));
        }
        body.get("access_token")
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                ClientError::authorization("the identity provider's answer has no access_token")
            })
    }

    /// Refreshes the current token (the new refresh token, when one comes, replaces the old:
    /// rotation).
    async fn refresh(&self, found: &Found) -> Result<(), ClientError> {
        let Some(old) = self.current.lock().unwrap().clone() else {
            return Err(ClientError::authorization("no token to refresh"));
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Err(ClientError::authorization("no refresh token"));
        };
        let client = old.client_id.clone().map(|id| {
            let secret = old.client_secret.clone();
            // As the tokens were got (a private_key_jwt or client_secret_post client stays one).
            let method = old
                .client_auth_method
                .as_deref()
                .and_then(token::AuthMethod::from_name)
                .unwrap_or_else(|| token::AuthMethod::choose(secret.is_some(), &found.meta));
            ClientCreds { id, secret, method }
        });
        let mut form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
        ];
        if let Some(resource) = &found.resource {
            form.push(("resource", resource.clone()));
        }
        let reply = self.token_request(found, client.as_ref(), form).await?;
        let mut tokens = token::read(&reply, "refreshing the token")?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token);
        }
        tokens.issuer = old.issuer;
        tokens.client_id = old.client_id;
        tokens.client_secret = old.client_secret;
        tokens.client_auth_method = old.client_auth_method;
        if tokens.scope.is_none() {
            tokens.scope = old.scope;
        }
        self.set(tokens);
        Ok(())
    }
}

/// The JWT bearer grant's form (RFC 7523 §2.1).
fn jwt_bearer_form(
    assertion: String,
    scopes: &[String],
    found: &Found,
) -> Vec<(&'static str, String)> {
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
        ),
        ("assertion", assertion),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    if let Some(resource) = &found.resource {
        form.push(("resource", resource.clone()));
    }
    form
}

fn token_endpoint(found: &Found) -> Result<&str, ClientError> {
    found.meta.token_endpoint.as_deref().ok_or_else(|| {
        ClientError::authorization(format!(
            "the authorization server {} names no token_endpoint",
            found.issuer
        ))
    })
}
