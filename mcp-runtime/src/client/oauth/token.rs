//! Requests to the token endpoint: the grant's form, the client's authentication
//! (`none`, `client_secret_basic`, `client_secret_post`, `private_key_jwt`), and the answer
//! read into [`Tokens`] or a clear error.

use base64::Engine as _;
use serde_json::Value;

use super::super::error::ClientError;
use super::fetch::{self, form_encode};
use super::metadata::ServerMetadata;
use super::store::{Tokens, now};

/// How the client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AuthMethod {
    None,
    Basic,
    Post,
    PrivateKeyJwt,
}

impl AuthMethod {
    pub(crate) fn name(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<AuthMethod> {
        Some(match name {
            "none" => AuthMethod::None,
            "client_secret_basic" => AuthMethod::Basic,
            "client_secret_post" => AuthMethod::Post,
            "private_key_jwt" => AuthMethod::PrivateKeyJwt,
            _ => return None,
        })
    }

    /// The method for a client with (or without) a secret, from what the server supports:
    /// `client_secret_basic`, else `client_secret_post`; `none` without a secret.
    pub(crate) fn choose(has_secret: bool, meta: &ServerMetadata) -> AuthMethod {
        if !has_secret {
            return AuthMethod::None;
        }
        if meta.supports_auth_method("client_secret_basic") {
            AuthMethod::Basic
        } else if meta.supports_auth_method("client_secret_post") {
            AuthMethod::Post
        } else {
            AuthMethod::Basic
        }
    }
}

/// The client as the token endpoint knows it.
#[derive(Clone)]
pub(crate) struct ClientCreds {
    pub(crate) id: String,
    pub(crate) secret: Option<String>,
    pub(crate) method: AuthMethod,
}

/// A token request: `form` plus the client's authentication, to `endpoint`; `issuer` is the
/// audience of a `private_key_jwt` assertion. `extra` headers (a DPoP proof) are added.
pub(crate) async fn request(
    fetch: &fetch::Fetch,
    endpoint: &str,
    issuer: &str,
    client: Option<&ClientCreds>,
    mut form: Vec<(&str, String)>,
    extra: &[(String, String)],
    signer: Option<&super::ClientAssertion>,
) -> Result<fetch::Reply, ClientError> {
    let mut headers: Vec<(String, String)> = extra.to_vec();
    if let Some(client) = client {
        match client.method {
            AuthMethod::None => form.push(("client_id", client.id.clone())),
            AuthMethod::Basic => {
                // RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined.
                let pair = format!(
                    "{}:{}",
                    form_encode(&client.id),
                    form_encode(client.secret.as_deref().unwrap_or(""))
                );
                let b64 = base64::engine::general_purpose::STANDARD.encode(pair);
                headers.push(("authorization".into(), format!("Basic {b64}")));
            }
            AuthMethod::Post => {
                form.push(("client_id", client.id.clone()));
                form.push(("client_secret", client.secret.clone().unwrap_or_default()));
            }
            AuthMethod::PrivateKeyJwt => {
                let signer = signer.ok_or_else(|| {
                    ClientError::authorization(
                        "private_key_jwt needs a signing key (OAuthConfig::private_key_jwt)",
                    )
                })?;
                form.push(("client_id", client.id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                form.push(("client_assertion", signer.sign(&client.id, issuer)?));
            }
        }
    }
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fetch
        .post(
            endpoint,
            "application/x-www-form-urlencoded",
            fetch::form(&pairs),
            &headers,
        )
        .await
}

/// Reads a token answer: [`Tokens`] from a 200, or an error naming the server's `error` and
/// `error_description`.
pub(crate) fn read(reply: &fetch::Reply, what: &str) -> Result<Tokens, ClientError> {
    let body = reply.json().unwrap_or(Value::Null);
    if !reply.ok() {
        return Err(refusal(reply, &body, what));
    }
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    let access_token = text("access_token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ClientError::authorization(format!("{what}: the answer has no access_token"))
        })?;
    let token_type = match text("token_type") {
        Some(t) if t.eq_ignore_ascii_case("dpop") => "DPoP".to_owned(),
        _ => "Bearer".to_owned(),
    };
    Ok(Tokens {
        access_token,
        token_type,
        refresh_token: text("refresh_token"),
        expires_at: body
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|s| now() + s),
        scope: text("scope"),
        ..Tokens::default()
    })
}

/// An error answer of an OAuth endpoint as a [`ClientError::Authorization`].
pub(crate) fn refusal(reply: &fetch::Reply, body: &Value, what: &str) -> ClientError {
    match body.get("error").and_then(Value::as_str) {
        Some(error) => {
            let desc = body
                .get("error_description")
                .and_then(Value::as_str)
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            ClientError::authorization(format!(
                "{what}: the authorization server refused: {error}{desc}"
            ))
        }
        None => {
            ClientError::authorization(format!("{what}: HTTP {}: {}", reply.status, reply.text()))
        }
    }
}
