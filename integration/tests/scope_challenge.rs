//! Per-operation `insufficient_scope` challenges checked against the rules of the conformance
//! scenario `sep-2350-server-scope-challenge` (suite main branch; SEP-2350, RFC 6750 §3.1): with
//! a valid token that lacks an operation's scopes, `tools/call`, `resources/read` (a static
//! resource and a template) and `prompts/get` get 403 with ONE Bearer challenge carrying
//! `error="insufficient_scope"`, every scope the operation needs, and an absolute
//! `resource_metadata` (https, or http on the server's own origin); the same operation retried
//! with a token holding them all succeeds. The tokens are the scenario's two opaque fixture
//! tokens, checked by a verifier of this file (no authorization server is needed). Both eras.

mod support;

use mcp_runtime::auth::{Auth, Principal, TokenError, TokenVerifier, VerifyFuture};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, serve_http_on};
use serde_json::{Map, Value, json};
use support::http::{Endpoint, Req, Response, initialize_request, notification, rpc};

const LOW: &str = "mcp-conformance-scope-low";
const FULL: &str = "mcp-conformance-scope-full";
/// A valid token with no scope at all (not a scenario token).
const NONE: &str = "mcp-conformance-scope-none";

/// The scenario's text tool.
#[tool(scopes = ["mcp:conformance:tools:call", "mcp:conformance:tools:test_simple_text"])]
async fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// The scenario's static resource.
#[resource(
    "test://static-text",
    scopes = ["mcp:conformance:resources:read", "mcp:conformance:resources:static"]
)]
fn static_text() -> String {
    "This is the content of the static text resource.".into()
}

/// The scenario's template. (Its fixture table wants `…:template:123`, a scope per value of
/// the variable; scopes here are fixed per template, so it asks for `…:template`.)
#[resource(
    "test://template/{id}/data",
    scopes = ["mcp:conformance:resources:read", "mcp:conformance:resources:template"]
)]
fn template_data(id: String) -> String {
    format!("Data for ID: {id}")
}

/// The scenario's prompt.
#[prompt(scopes = ["mcp:conformance:prompts:get", "mcp:conformance:prompts:test_simple_prompt"])]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// Every scope the full token holds.
const ALL: [&str; 9] = [
    "mcp:conformance:baseline",
    "mcp:conformance:tools:call",
    "mcp:conformance:tools:test_simple_text",
    "mcp:conformance:resources:read",
    "mcp:conformance:resources:static",
    "mcp:conformance:resources:template",
    "mcp:conformance:prompts:get",
    "mcp:conformance:prompts:test_simple_prompt",
    "mcp:conformance:other",
];

/// The fixture's opaque tokens: the low one holds only the baseline scope.
struct FixtureTokens;

impl TokenVerifier for FixtureTokens {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let scopes: &[&str] = match token {
                NONE => &[],
                LOW => &ALL[..1],
                FULL => &ALL,
                _ => return Err(TokenError::Invalid("not a fixture token".into())),
            };
            let mut claims = Map::new();
            claims.insert("iss".into(), json!("https://as.example"));
            claims.insert("sub".into(), json!("conformance"));
            claims.insert("scope".into(), json!(scopes.join(" ")));
            Principal::from_claims(claims).map_err(TokenError::Invalid)
        })
    }
}

/// Serves this file's items with the fixture verifier; the endpoint and its URL.
async fn serve() -> (Endpoint, String) {
    serve_requiring(&[]).await
}

/// [`serve`], every request needing `required` too.
async fn serve_requiring(required: &[&str]) -> (Endpoint, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let auth = Auth::with_verifier("https://as.example", &resource, FixtureTokens)
        .required_scopes(required.iter().copied());
    let config = HttpConfig::new("127.0.0.1:0").auth(auth);
    let server = mcp_runtime::Server::builder()
        .name("scope-challenge")
        .build()
        .unwrap();
    tokio::spawn(serve_http_on(server, listener, config));
    (Endpoint { port }, resource)
}

/// One operation of the scenario: method, params, the scopes it needs, and what its result
/// must hold.
struct Fixture {
    method: &'static str,
    params: Value,
    name: &'static str,
    scopes: [&'static str; 2],
    check: fn(&Value) -> bool,
}

fn fixtures() -> Vec<Fixture> {
    vec![
        Fixture {
            method: "tools/call",
            params: json!({"name": "test_simple_text", "arguments": {}}),
            name: "test_simple_text",
            scopes: [
                "mcp:conformance:tools:call",
                "mcp:conformance:tools:test_simple_text",
            ],
            check: |r| r["content"][0]["type"] == "text",
        },
        Fixture {
            method: "resources/read",
            params: json!({"uri": "test://static-text"}),
            name: "test://static-text",
            scopes: [
                "mcp:conformance:resources:read",
                "mcp:conformance:resources:static",
            ],
            check: |r| r["contents"][0]["uri"] == "test://static-text",
        },
        Fixture {
            method: "resources/read",
            params: json!({"uri": "test://template/123/data"}),
            name: "test://template/123/data",
            scopes: [
                "mcp:conformance:resources:read",
                "mcp:conformance:resources:template",
            ],
            check: |r| {
                r["contents"][0]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("123"))
            },
        },
        Fixture {
            method: "prompts/get",
            params: json!({"name": "test_simple_prompt"}),
            name: "test_simple_prompt",
            scopes: [
                "mcp:conformance:prompts:get",
                "mcp:conformance:prompts:test_simple_prompt",
            ],
            check: |r| r["messages"][0]["role"] == "user",
        },
    ]
}

/// The auth-params of the one Bearer challenge in `header` (RFC 7235 syntax: quoted strings
/// may hold commas).
fn bearer_params(header: &str) -> Map<String, Value> {
    let rest = header
        .strip_prefix("Bearer ")
        .unwrap_or_else(|| panic!("not a Bearer challenge: {header}"));
    let mut params = Map::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || *c == ' ') {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.is_empty() {
            break;
        }
        let value: String = if chars.peek() == Some(&'"') {
            chars.next();
            chars.by_ref().take_while(|c| *c != '"').collect()
        } else {
            chars.by_ref().take_while(|c| *c != ',').collect()
        };
        assert!(
            params.insert(key.trim().to_owned(), json!(value)).is_none(),
            "a parameter twice: {header}"
        );
    }
    params
}

/// The scenario's challenge checks on `r`, for an operation needing `scopes`.
fn assert_challenge(r: &Response, scopes: &[&str], metadata_url: &str, what: &str) {
    assert_eq!(r.status(), 403, "{what}: {r}");
    let headers: Vec<&str> = r
        .head
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(headers.len(), 1, "{what}: one challenge: {r}");
    let params = bearer_params(headers[0]);
    assert_eq!(params["error"], "insufficient_scope", "{what}: {r}");
    let granted: Vec<&str> = params["scope"].as_str().unwrap().split(' ').collect();
    for scope in scopes {
        assert!(
            granted.contains(scope),
            "{what}: {scope} missing from {granted:?}"
        );
    }
    // Absolute, and (over http) on the server's own origin: the scenario's rule.
    assert_eq!(params["resource_metadata"], metadata_url, "{what}: {r}");
}

#[tokio::test(flavor = "multi_thread")]
async fn under_scoped_tokens_get_one_complete_challenge_and_the_full_token_succeeds() {
    let (mcp, resource) = serve().await;
    let metadata_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    tokio::task::spawn_blocking(move || {
        // 2026-07-28, as the scenario runs it.
        for (n, f) in fixtures().into_iter().enumerate() {
            let mut params = f.params.clone();
            params["_meta"] = support::http::stateless_meta();
            let body = rpc(n as i64, f.method, params);
            let send = |token: &str| {
                mcp.send(
                    &Req::post("/mcp")
                        .header("Authorization", &format!("Bearer {token}"))
                        .header("MCP-Protocol-Version", "2026-07-28")
                        .header("Mcp-Method", f.method)
                        .header("Mcp-Name", f.name)
                        .json(&body),
                )
            };
            let what = format!("2026-07-28 {} {}", f.method, f.name);
            assert_challenge(&send(LOW), &f.scopes, &metadata_url, &what);
            let r = send(FULL);
            assert_eq!(r.status(), 200, "{what}: {r}");
            assert!((f.check)(&r.json()["result"]), "{what}: {r}");
        }
        // The session era: the same challenge inside a session opened with the low token.
        for token in [LOW, FULL] {
            let auth = format!("Bearer {token}");
            let r = mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &auth)
                    .json(&initialize_request("2025-11-25")),
            );
            assert_eq!(r.status(), 200, "{r}");
            let id = r.header("mcp-session-id").unwrap().to_owned();
            let headers = [
                ("Authorization", auth.as_str()),
                ("Mcp-Session-Id", id.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            let r = mcp.post(&notification("notifications/initialized"), &headers);
            assert_eq!(r.status(), 202, "{r}");
            for (n, f) in fixtures().into_iter().enumerate() {
                let r = mcp.post(&rpc(n as i64, f.method, f.params.clone()), &headers);
                let what = format!("2025-11-25 {} {} with {token}", f.method, f.name);
                if token == LOW {
                    assert_challenge(&r, &f.scopes, &metadata_url, &what);
                } else {
                    assert_eq!(r.status(), 200, "{what}: {r}");
                    assert!((f.check)(&r.json()["result"]), "{what}: {r}");
                }
            }
        }
    })
    .await
    .unwrap();
}

/// A token that lacks the scopes every request needs as well as the operation's: still ONE
/// challenge, naming both, so one step-up is enough (before, the required scopes alone were
/// named, and the retry with them met a second 403 for the operation's).
#[tokio::test(flavor = "multi_thread")]
async fn a_token_without_the_required_scopes_hears_the_operations_too() {
    let (mcp, resource) = serve_requiring(&["mcp:conformance:baseline"]).await;
    let metadata_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    tokio::task::spawn_blocking(move || {
        for (n, f) in fixtures().into_iter().enumerate() {
            let mut params = f.params.clone();
            params["_meta"] = support::http::stateless_meta();
            let body = rpc(n as i64, f.method, params);
            let r = mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &format!("Bearer {NONE}"))
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", f.method)
                    .header("Mcp-Name", f.name)
                    .json(&body),
            );
            let mut needed = vec!["mcp:conformance:baseline"];
            needed.extend(f.scopes);
            assert_challenge(&r, &needed, &metadata_url, f.method);
        }
        // The session era's `initialize` needs only the required ones.
        let r = mcp.send(
            &Req::post("/mcp")
                .header("Authorization", &format!("Bearer {NONE}"))
                .json(&initialize_request("2025-11-25")),
        );
        assert_challenge(
            &r,
            &["mcp:conformance:baseline"],
            &metadata_url,
            "initialize",
        );
        // Routes without a body are refused before any is read, as before.
        let r = mcp.send(
            &Req::get("/mcp")
                .header("Authorization", &format!("Bearer {NONE}"))
                .header("Accept", "text/event-stream"),
        );
        assert_challenge(&r, &["mcp:conformance:baseline"], &metadata_url, "GET");
        // The low token holds the required scope: the operation's own challenge, as above.
        let r = mcp.send(
            &Req::post("/mcp")
                .header("Authorization", &format!("Bearer {LOW}"))
                .json(&initialize_request("2025-11-25")),
        );
        assert_eq!(r.status(), 200, "{r}");
    })
    .await
    .unwrap();
}
