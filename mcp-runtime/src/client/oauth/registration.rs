//! Who the client is at an authorization server: pre-registered (a `client_id`, and a secret
//! or key, given in [`OAuthConfig`](super::OAuthConfig)), a Client ID Metadata Document (an
//! HTTPS URL as the `client_id`, when the server says it fetches them), or registered on the
//! spot (RFC 7591 Dynamic Client Registration). A registration belongs to one authorization
//! server: when the protected resource moves to another, the client registers again there
//! (SEP-2352) and never shows the old server's credentials to the new one.

use serde_json::{Value, json};

use super::super::error::ClientError;
use super::fetch;
use super::metadata::ServerMetadata;
use super::token::{AuthMethod, ClientCreds, refusal};

/// How the client is registered, for `redirect_uri` (the authorization-code flow) at the
/// authorization server `meta` describes.
pub(crate) async fn register(
    fetch: &fetch::Fetch,
    config: &super::OAuthConfig,
    meta: &ServerMetadata,
    redirect_uri: Option<&str>,
) -> Result<ClientCreds, ClientError> {
    if let Some(id) = &config.client_id {
        let method = if config.assertion.is_some() {
            AuthMethod::PrivateKeyJwt
        } else {
            AuthMethod::choose(config.client_secret.is_some(), meta)
        };
        return Ok(ClientCreds {
            id: id.clone(),
            secret: config.client_secret.clone(),
            method,
        });
    }
    if let Some(url) = &config.client_metadata_url
        && meta.client_id_metadata_document_supported
    {
        return Ok(ClientCreds {
            id: url.clone(),
            secret: None,
            method: AuthMethod::None,
        });
    }
    let Some(endpoint) = &meta.registration_endpoint else {
        return Err(ClientError::authorization(format!(
            "the authorization server {} offers no dynamic client registration{}: configure a \
             pre-registered client_id (OAuthConfig::client_id)",
            meta.issuer,
            if config.client_metadata_url.is_some() {
                " and does not take Client ID Metadata Documents"
            } else {
                ""
            }
        )));
    };
    // A public client unless the server takes none: then one with a secret.
    let method = match &meta.token_endpoint_auth_methods_supported {
        Some(list) if !list.iter().any(|m| m == "none") => {
            if list.iter().any(|m| m == "client_secret_basic") {
                AuthMethod::Basic
            } else if list.iter().any(|m| m == "client_secret_post") {
                AuthMethod::Post
            } else {
                AuthMethod::None
            }
        }
        _ => AuthMethod::None,
    };
    // The refresh token grant only with a server that may issue refresh tokens: one whose
    // `grant_types_supported` leaves it out refuses a registration asking for it (RFC 7591
    // `invalid_client_metadata`; oidc-provider does).
    let mut grant_types = vec!["authorization_code"];
    if meta.may_refresh() {
        grant_types.push("refresh_token");
    }
    let mut body = json!({
        "client_name": config.client_name,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method.name(),
        "application_type": "native",
    });
    if let Some(uri) = redirect_uri {
        body["redirect_uris"] = json!([uri]);
    }
    let reply = fetch
        .post(endpoint, "application/json", body.to_string(), &[])
        .await?;
    let doc = reply.json().unwrap_or(Value::Null);
    if !reply.ok() {
        return Err(refusal(&reply, &doc, "dynamic client registration"));
    }
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
    let id = text("client_id")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            ClientError::authorization("dynamic client registration: the answer has no client_id")
        })?;
    let secret = text("client_secret").filter(|s| !s.is_empty());
    let method = text("token_endpoint_auth_method")
        .as_deref()
        .and_then(AuthMethod::from_name)
        .filter(|m| *m != AuthMethod::PrivateKeyJwt && (secret.is_some() || *m == AuthMethod::None))
        .unwrap_or_else(|| AuthMethod::choose(secret.is_some(), meta));
    tracing::debug!(issuer = %meta.issuer, client_id = %id, method = method.name(), "registered");
    Ok(ClientCreds { id, secret, method })
}
