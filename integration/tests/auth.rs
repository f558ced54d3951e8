//! The OAuth resource server (`HttpConfig::auth`) against a real authorization server:
//! oidc-provider (npm, pinned in tests/auth/), started here on loopback, issuing JWT and opaque
//! access tokens with the client credentials grant, and with the authorization code grant to a
//! user the test plays (oidc-provider's login and consent pages). Every token on the positive
//! path comes from it; only the forgeries of the negative path (`alg: none`, HMAC with the
//! public key, a bad signature) are made here.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use hmac::{KeyInit as _, Mac as _};
use mcp_runtime::auth::{Auth, Introspection, JwtVerifier, Principal};
use mcp_runtime::client::{Client, ClientError, ProtocolChoice};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::{HttpConfig, serve_http_on};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};
use support::http::{Endpoint, Req};

/// Who is calling.
#[tool]
async fn whoami(who: Principal) -> String {
    format!(
        "{} from {} (client {}) with {}",
        who.subject,
        who.issuer,
        who.client_id.as_deref().unwrap_or("?"),
        who.scopes.join(" ")
    )
}

/// Reads tickets.
#[tool(scopes = ["tickets:read"])]
async fn read_tickets() -> String {
    "3 open tickets".into()
}

/// A private note, for writers only.
#[resource("notes://{id}", scopes = ["tickets:write"], complete(id = note_ids))]
fn note(id: String) -> String {
    format!("note {id}")
}

/// A private file, for writers only, below a public one.
#[resource("files:///private/{name}", scopes = ["tickets:write"])]
fn private_file(name: String) -> String {
    format!("private {name}")
}

/// A public file.
#[resource("files:///public/readme")]
fn readme() -> String {
    "read me".into()
}

fn note_ids(_: &CompletionRequest) -> Vec<String> {
    vec!["1".into()]
}

/// Drafts a reply, for writers only.
#[prompt(scopes = ["tickets:write"], complete(topic = topics))]
fn draft(topic: String) -> String {
    format!("Draft a reply about {topic}.")
}

fn topics(_: &CompletionRequest) -> Vec<String> {
    vec!["billing".into()]
}

/// Changes a ticket.
#[tool(scopes = ["tickets:write"])]
async fn close_ticket(id: u32) -> String {
    format!("closed {id}")
}

use support::auth::{AuthServer, CLIENT};

/// Binds a port for the MCP server (its URL is the resource tokens must name), starts the
/// authorization server for it, then serves with `auth(issuer, resource)`.
async fn serve(auth: impl FnOnce(&str, &str) -> Auth) -> (AuthServer, String, Endpoint) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let authz = AuthServer::start(&resource, 0);
    let config = HttpConfig::new("127.0.0.1:0").auth(auth(&authz.issuer, &resource));
    let server = Server::builder().name("auth-test").build().unwrap();
    tokio::spawn(serve_http_on(server, listener, config));
    (authz, resource, Endpoint { port })
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

fn initialize() -> Value {
    support::http::initialize_request("2025-11-25")
}

async fn client(url: &str, token: &str, protocol: ProtocolChoice) -> Result<Client, ClientError> {
    Client::builder()
        .protocol(protocol)
        .header("Authorization", &format!("Bearer {token}"))
        .connect(url)
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_challenges_and_malformed_requests() {
    let (authz, resource, mcp) =
        serve(|issuer, resource| Auth::jwt(issuer, resource).required_scopes(["mcp"])).await;
    let issuer = authz.issuer.clone();
    let res = resource.clone();
    blocking(move || {
        // RFC 9728 metadata, at the path-inserted URL and at the root one.
        for path in [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ] {
            let r = mcp.send(&Req::get(path));
            assert_eq!(r.status(), 200, "{path}: {r}");
            let doc = r.json();
            assert_eq!(doc["resource"], json!(res));
            assert_eq!(doc["authorization_servers"], json!([issuer]));
            assert_eq!(
                doc["scopes_supported"],
                json!(["mcp", "tickets:read", "tickets:write"])
            );
            assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        }
        let metadata_url = format!(
            "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
            mcp.port
        );
        // No token: 401 naming the metadata and the required scope, on every route.
        for req in [
            Req::post("/mcp").json(&initialize()),
            Req::get("/mcp"),
            Req::new("DELETE", "/mcp"),
            Req::get("/sse"),
            Req::post("/messages?sessionId=x").json(&initialize()),
        ] {
            let r = mcp.send(&req);
            assert_eq!(r.status(), 401, "{r}");
            let challenge = r.header("www-authenticate").unwrap();
            assert!(challenge.starts_with("Bearer "), "{challenge}");
            assert!(
                challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
                "{challenge}"
            );
            assert!(challenge.contains("scope=\"mcp\""), "{challenge}");
        }
        // Malformed: 400 invalid_request.
        for (name, value) in [
            ("Authorization", "Basic bWNwOnNlY3JldA=="),
            ("Authorization", "Bearer"),
            ("Authorization", "Bearer a b"),
        ] {
            let r = mcp.send(&Req::post("/mcp").header(name, value).json(&initialize()));
            assert_eq!(r.status(), 400, "{value}: {r}");
            assert!(
                r.header("www-authenticate")
                    .unwrap()
                    .contains("error=\"invalid_request\"")
            );
        }
        let r = mcp.send(&Req::post("/mcp?access_token=abc").json(&initialize()));
        assert_eq!(r.status(), 400, "a token in the query string: {r}");
        let r = mcp.send(
            &Req::post("/mcp")
                .header("Authorization", "Bearer abc")
                .also("Authorization", "Bearer def")
                .json(&initialize()),
        );
        assert_eq!(r.status(), 400, "two Authorization headers: {r}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn jwt_tokens_of_the_issuer_for_this_resource_and_their_scopes() {
    let (authz, resource, mcp) =
        serve(|issuer, resource| Auth::jwt(issuer, resource).required_scopes(["mcp"])).await;
    let url = resource.clone();
    let reader = authz.token(CLIENT, &resource, "mcp tickets:read");
    for protocol in [
        ProtocolChoice::Session(ProtocolVersion::V2025_11_25),
        ProtocolChoice::Stateless,
    ] {
        let c = client(&url, &reader, protocol).await.unwrap();
        let who: String = c.call_tool_as("whoami", json!({})).await.unwrap();
        assert_eq!(
            who,
            format!(
                "mcp-test from {} (client mcp-test) with mcp tickets:read",
                authz.issuer
            )
        );
        // Lists hide what the token's scopes do not allow.
        let names: Vec<String> = c
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert!(names.contains(&"read_tickets".to_owned()), "{names:?}");
        assert!(!names.contains(&"close_ticket".to_owned()), "{names:?}");
        let r = c.call_tool("read_tickets", json!({})).await.unwrap();
        assert!(!r.is_error());
        // A tool needing a scope the token lacks: 403 insufficient_scope.
        let err = c
            .call_tool("close_ticket", json!({"id": 7}))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::Status { status: 403, .. }),
            "{err}"
        );
        c.close().await;
    }
    // The challenge names every scope the call needs, so a client can step up at once.
    let token = reader.clone();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "close_ticket", "arguments": {"id": 7},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    }});
    let r = blocking(move || {
        mcp.send(
            &Req::post("/mcp")
                .header("Authorization", &format!("Bearer {token}"))
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", "close_ticket")
                .json(&body),
        )
    })
    .await;
    assert_eq!(r.status(), 403, "{r}");
    let challenge = r.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"mcp tickets:write\""),
        "{challenge}"
    );

    // A writer's token does it.
    let writer = authz.token(CLIENT, &resource, "mcp tickets:write");
    let c = client(&url, &writer, ProtocolChoice::Stateless)
        .await
        .unwrap();
    let done: String = c
        .call_tool_as("close_ticket", json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(done, "closed 7");

    // Without the required scope, nothing: 403.
    let bare = authz.token(CLIENT, &resource, "tickets:read");
    let err = client(&url, &bare, ProtocolChoice::Stateless)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, ClientError::Status { status: 403, .. }),
        "{err}"
    );

    // A token for another audience (RFC 8707): 401 invalid_token.
    let other = authz.token(CLIENT, "http://other.example/mcp", "mcp");
    let err = client(&url, &other, ProtocolChoice::Stateless)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(err, ClientError::Status { status: 401, .. }),
        "{err}"
    );
}

/// Forgeries of a real token: its claims, resigned badly. `public_key`: the issuer's published
/// key, which the HMAC forgery uses as its secret (the classic RS/ES-to-HS confusion).
fn forgeries(real: &str, public_key: &[u8]) -> Vec<(&'static str, String)> {
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let parts: Vec<&str> = real.split('.').collect();
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[0])
            .unwrap(),
    )
    .unwrap();
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        parts[1]
    );
    let mut hs = header.clone();
    hs["alg"] = json!("HS256");
    let hs_input = format!("{}.{}", b64(&hs), parts[1]);
    let mac = {
        let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(public_key).unwrap();
        m.update(hs_input.as_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(m.finalize().into_bytes())
    };
    let mut flipped = parts[2].as_bytes().to_vec();
    flipped[5] = if flipped[5] == b'A' { b'B' } else { b'A' };
    vec![
        ("alg none", none),
        ("HMAC", format!("{hs_input}.{mac}")),
        (
            "bad signature",
            format!(
                "{}.{}.{}",
                parts[0],
                parts[1],
                String::from_utf8(flipped).unwrap()
            ),
        ),
        ("not a JWT", "garbage".into()),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_tokens_are_refused() {
    let (authz, resource, _mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let real = authz.token(CLIENT, &resource, "mcp");
    let jwks = Endpoint { port: authz.port }.send(&Req::get("/jwks"));
    assert_eq!(jwks.status(), 200, "{jwks}");
    let key = jwks.json()["keys"][0].to_string();
    for (what, forged) in forgeries(&real, key.as_bytes()) {
        let err = client(&resource, &forged, ProtocolChoice::Stateless)
            .await
            .err()
            .unwrap();
        assert!(
            matches!(err, ClientError::Status { status: 401, .. }),
            "{what}: {err}"
        );
    }
    // The real one passes.
    client(&resource, &real, ProtocolChoice::Stateless)
        .await
        .unwrap();
}

/// A kept-alive connection remembers its last token (one client sends the same one on every
/// request): a forgery of the same length, another client's token, and the first again, all
/// on that one connection, are each answered as their own.
#[tokio::test(flavor = "multi_thread")]
async fn one_connection_carries_tokens_that_are_each_checked() {
    use http_body_util::{BodyExt as _, Full};
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let alice = authz.token(CLIENT, &resource, "mcp");
    let other = authz.token(("mcp-other", "other-secret"), &resource, "mcp");
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", mcp.port))
        .await
        .unwrap();
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let authority = mcp.authority();
    // `whoami` over 2026-07-28 (or, with `post` false, a GET, whose refusal leaves the
    // connection open where one of a POST, its body unread, closes it): the status and the
    // text of the answer.
    let mut call = async |token: &str, post: bool| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "whoami", "arguments": {}, "_meta": support::http::stateless_meta()}});
        let body = if post {
            body.to_string()
        } else {
            String::new()
        };
        let req = mcp_runtime::http::Request::builder()
            .method(if post { "POST" } else { "GET" })
            .uri("/mcp")
            .header("Host", &authority)
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "whoami")
            .body(Full::new(bytes::Bytes::from(body)))
            .unwrap();
        send.ready().await.expect("the same connection, still open");
        let response = send.send_request(req).await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    };
    let (status, text) = call(&alice, true).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("(client mcp-test)"), "{text}");
    let jwks = Endpoint { port: authz.port }.send(&Req::get("/jwks"));
    let key = jwks.json()["keys"][0].to_string();
    let (_, forged) = forgeries(&alice, key.as_bytes())
        .into_iter()
        .find(|(what, _)| *what == "bad signature")
        .unwrap();
    assert_eq!(forged.len(), alice.len());
    let (status, text) = call(&forged, false).await;
    assert_eq!(status, 401, "a forgery after the real token: {text}");
    // The real token on a GET passes the check (and is refused by the stateless era's
    // endpoint for what it is, a GET).
    let (status, text) = call(&alice, false).await;
    assert_ne!(status, 401, "{text}");
    let (status, text) = call(&other, true).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("(client mcp-other)"), "{text}");
    let (status, text) = call(&alice, true).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("(client mcp-test)"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rotated_keys_are_fetched_again() {
    let (authz, resource, _mcp) = serve(|issuer, resource| {
        Auth::with_verifier(
            issuer,
            resource,
            JwtVerifier::new(issuer, resource).min_refetch_interval(Duration::ZERO),
        )
    })
    .await;
    let first = authz.token(CLIENT, &resource, "mcp");
    let c = client(&resource, &first, ProtocolChoice::Stateless)
        .await
        .unwrap();
    c.call_tool("whoami", json!({})).await.unwrap();
    // The same issuer, restarted with a new signing key (a new kid).
    let port = authz.port;
    drop(authz);
    let authz = AuthServer::start(&resource, port);
    let second = authz.token(CLIENT, &resource, "mcp");
    assert_ne!(
        first.split('.').next(),
        second.split('.').next(),
        "the key id changed"
    );
    let c = client(&resource, &second, ProtocolChoice::Stateless)
        .await
        .unwrap();
    let who: String = c.call_tool_as("whoami", json!({})).await.unwrap();
    assert!(who.starts_with("mcp-test from"), "{who}");
}

#[tokio::test(flavor = "multi_thread")]
async fn opaque_tokens_are_introspected() {
    let (authz, resource, _mcp) = serve(|issuer, resource| {
        Auth::introspection(
            issuer,
            resource,
            Introspection::new("mcp-server", "server-secret"),
        )
        .required_scopes(["mcp"])
    })
    .await;
    let opaque = authz.token(CLIENT, &format!("{resource}?opaque"), "mcp tickets:read");
    assert_eq!(opaque.split('.').count(), 1, "an opaque token");
    let c = client(&resource, &opaque, ProtocolChoice::Stateless)
        .await
        .unwrap();
    let who: String = c.call_tool_as("whoami", json!({})).await.unwrap();
    assert_eq!(
        who,
        format!(
            "mcp-test from {} (client mcp-test) with mcp tickets:read",
            authz.issuer
        )
    );
    let err = client(
        &resource,
        "not-a-token-it-issued",
        ProtocolChoice::Stateless,
    )
    .await
    .err()
    .unwrap();
    assert!(
        matches!(err, ClientError::Status { status: 401, .. }),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_belong_to_their_principal_not_their_token() {
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let first = authz.token(CLIENT, &resource, "mcp");
    let c = client(
        &resource,
        &first,
        ProtocolChoice::Session(ProtocolVersion::V2025_11_25),
    )
    .await
    .unwrap();
    let session = c.session_id().unwrap();
    // The same client with a fresh token (a refresh) keeps its session.
    let refreshed = authz.token(CLIENT, &resource, "mcp tickets:read");
    assert_ne!(first, refreshed);
    let other = authz.token(("mcp-other", "other-secret"), &resource, "mcp");
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}});
    let (same, stranger) = blocking(move || {
        let send = |token: &str| {
            mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &format!("Bearer {token}"))
                    .header("Mcp-Session-Id", &session)
                    .header("MCP-Protocol-Version", "2025-11-25")
                    .json(&call),
            )
        };
        (send(&refreshed), send(&other))
    })
    .await;
    assert_eq!(same.status(), 200, "{same}");
    // Another principal does not know the session exists (CVE-2026-52869).
    assert_eq!(stranger.status(), 404, "{stranger}");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ticket_desk_serves_with_authorization_from_the_environment() {
    let db = std::env::temp_dir().join(format!("mcp-auth-tickets-{}.sqlite3", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let (program, db_path) = (support::example("tickets"), db.clone());
    let (resource, authz, _desk) = blocking(move || {
        support::http::on_a_free_port(|port| {
            let resource = format!("http://127.0.0.1:{port}/mcp");
            let authz = AuthServer::start(&resource, 0);
            let desk = support::http::HttpServer::try_start_on_with(
                &program,
                &format!("127.0.0.1:{port}"),
                &[
                    ("MCP_AUTH_ISSUER", &authz.issuer),
                    ("MCP_AUTH_RESOURCE", &resource),
                    ("TICKETS_DB", db_path.to_str().unwrap()),
                ],
            )?;
            Ok((resource, authz, desk))
        })
    })
    .await;
    let reader = authz.token(CLIENT, &resource, "tickets:read");
    let c = client(&resource, &reader, ProtocolChoice::Auto)
        .await
        .unwrap();
    let mut names: Vec<String> = c
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    assert_eq!(names, ["query_tickets_by_status", "report"]);
    let open = c
        .call_tool("query_tickets_by_status", json!({"status": "open"}))
        .await
        .unwrap();
    assert!(!open.is_error(), "{open:?}");
    let err = c
        .call_tool("create_ticket", json!({"title": "t", "description": "d"}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Status { status: 403, .. }),
        "{err}"
    );
    let writer = authz.token(CLIENT, &resource, "tickets:read tickets:write");
    let c = client(&resource, &writer, ProtocolChoice::Auto)
        .await
        .unwrap();
    assert_eq!(c.list_tools().await.unwrap().len(), 4);
    let none = client(&resource, "", ProtocolChoice::Auto)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(
            none,
            ClientError::Status {
                status: 400 | 401,
                ..
            }
        ),
        "{none}"
    );
    let _ = std::fs::remove_file(&db);
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test(flavor = "multi_thread")]
async fn well_signed_tokens_with_wrong_claims_are_refused() {
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let good = json!({"iss": authz.issuer, "aud": resource, "sub": "u", "exp": now() + 300});
    let with = |key: &str, value: Value| {
        let mut c = good.clone();
        if value.is_null() {
            c.as_object_mut().unwrap().remove(key);
        } else {
            c[key] = value;
        }
        c
    };
    let cases = [
        (
            "expired",
            authz.mint(with("exp", json!(now() - 3600)), None),
        ),
        (
            "not yet valid",
            authz.mint(with("nbf", json!(now() + 3600)), None),
        ),
        (
            "another issuer",
            authz.mint(with("iss", json!("http://127.0.0.1:1")), None),
        ),
        (
            "another audience",
            authz.mint(with("aud", json!("http://127.0.0.1:1/mcp")), None),
        ),
        ("no exp", authz.mint(with("exp", Value::Null), None)),
        ("no sub", authz.mint(with("sub", Value::Null), None)),
        ("unknown kid", authz.mint(good.clone(), Some("no-such-key"))),
    ];
    let challenges = blocking(move || {
        cases
            .into_iter()
            .map(|(what, token)| {
                let r = mcp.send(
                    &Req::post("/mcp")
                        .header("Authorization", &format!("Bearer {token}"))
                        .json(&initialize()),
                );
                (
                    what,
                    r.status(),
                    r.header("www-authenticate").map(str::to_owned),
                )
            })
            .collect::<Vec<_>>()
    })
    .await;
    for (what, status, challenge) in challenges {
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge
                .as_deref()
                .is_some_and(|c| c.contains("error=\"invalid_token\"")),
            "{what}: {challenge:?}"
        );
    }
}

/// Asks the caller for a name (a 2026-07-28 input round).
#[tool]
async fn ask_name(ctx: Context) -> Result<String, McpError> {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        name: String,
    }
    let answer = ctx.ask_as("name").elicit::<Name>("Your name?").await?;
    Ok(answer.accepted().map_or("nobody".into(), |n| n.name))
}

/// Works for a while (may run as a task).
#[tool(task = "optional")]
async fn slow_job() -> String {
    tokio::time::sleep(Duration::from_millis(200)).await;
    "job done".into()
}

/// A 2026-07-28 request with a bearer token; the JSON-RPC message of the answer.
fn stateless_call(mcp: &Endpoint, token: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut req = Req::post("/mcp")
        .header("Authorization", &format!("Bearer {token}"))
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if !name.is_empty() {
        req = req.header("Mcp-Name", &name);
    }
    let r = mcp
        .send(&req.json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})));
    let text = r.text();
    match text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .next_back()
    {
        Some(data) => serde_json::from_str(data.trim()).unwrap(),
        None => serde_json::from_str(&text).unwrap_or_else(|_| panic!("{r}")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn request_state_and_tasks_belong_to_their_principal() {
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let alice = authz.token(CLIENT, &resource, "mcp");
    let alice_again = authz.token(CLIENT, &resource, "mcp tickets:read");
    let mallory = authz.token(("mcp-other", "other-secret"), &resource, "mcp");
    blocking(move || {
        // An input round begun by one principal cannot be finished by another.
        let first = stateless_call(
            &mcp,
            &alice,
            "tools/call",
            json!({"name": "ask_name", "arguments": {}}),
        );
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        let state = first["result"]["requestState"].clone();
        let retry = json!({
            "name": "ask_name", "arguments": {},
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Alice"}}},
            "requestState": state,
        });
        let stolen = stateless_call(&mcp, &mallory, "tools/call", retry.clone());
        assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
        // The same principal with a refreshed token finishes it.
        let done = stateless_call(&mcp, &alice_again, "tools/call", retry);
        assert_eq!(done["result"]["content"][0]["text"], "Alice", "{done}");

        // A task is visible to its principal only.
        let created = stateless_call(
            &mcp,
            &alice,
            "tools/call",
            json!({"name": "slow_job", "arguments": {}}),
        );
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let id = created["result"]["taskId"].as_str().unwrap().to_owned();
        let theirs = stateless_call(&mcp, &mallory, "tasks/get", json!({"taskId": id}));
        assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
        let mine = stateless_call(&mcp, &alice_again, "tasks/get", json!({"taskId": id}));
        assert!(mine.get("result").is_some(), "{mine}");
    })
    .await;
}

/// Runs an official client's OAuth script; its one JSON line.
fn run_client(command: Command) -> Value {
    let mut command = command;
    let out = command.output().expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?} failed:\n{stdout}\n{}",
        command.get_program(),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_clients_find_the_issuer_and_get_their_own_tokens() {
    support::interop::install_clients();
    let (authz, resource, _mcp) = serve(|i, r| Auth::jwt(i, r).required_scopes(["mcp"])).await;
    let root = Path::new(support::interop::ROOT);
    let issuer = authz.issuer.clone();
    let url = resource.clone();
    let (ts, py) = blocking(move || {
        let ts = run_client(support::interop::client_command(
            Path::new("node"),
            &[
                root.join("tests/interop/ts_oauth.mjs").to_str().unwrap(),
                &url,
                &issuer,
                CLIENT.0,
                CLIENT.1,
                "mcp tickets:read",
            ],
        ));
        let py: Vec<Value> = ["legacy", "auto"]
            .iter()
            .map(|mode| {
                run_client(support::interop::client_command(
                    &support::interop::python(),
                    &[
                        root.join("tests/interop/py_oauth.py").to_str().unwrap(),
                        mode,
                        &url,
                        &issuer,
                        CLIENT.0,
                        CLIENT.1,
                        "mcp tickets:read",
                    ],
                ))
            })
            .collect();
        (ts, py)
    })
    .await;
    let with = |scopes: &str| {
        format!(
            "mcp-test from {} (client mcp-test) with {scopes}",
            authz.issuer
        )
    };
    // The TypeScript SDK (session era) asks for the scopes it was given; the tool they do not
    // allow is hidden and refused.
    assert_eq!(ts["whoami"], json!(with("mcp tickets:read")), "{ts}");
    assert_eq!(
        ts["tools"],
        json!(["ask_name", "read_tickets", "slow_job", "whoami"]),
        "{ts}"
    );
    assert!(
        !ts["denied"].is_null(),
        "close_ticket must be refused: {ts}"
    );
    // The Python SDK, in both eras, asks for the scope of the 401 challenge (`mcp`), so it first
    // sees only what that allows; read_tickets' 403 makes it step up to a new token with
    // `tickets:read`, and its session (bound to the principal, not the token) carries on.
    assert_eq!(py[0]["version"], "2025-11-25", "{}", py[0]);
    assert_eq!(py[1]["version"], "2026-07-28", "{}", py[1]);
    for run in &py {
        assert_eq!(run["whoami"], json!(with("mcp")), "{run}");
        assert_eq!(
            run["tools"],
            json!(["ask_name", "slow_job", "whoami"]),
            "{run}"
        );
        assert_eq!(run["stepped"], "3 open tickets", "{run}");
        assert_eq!(
            run["whoami_after"],
            json!(with("mcp tickets:read")),
            "{run}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_cannot_smuggle_a_call_past_its_scopes() {
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let reader = authz.token(CLIENT, &resource, "mcp tickets:read");
    let (batch, allowed, listed) = blocking(move || {
        let auth = format!("Bearer {reader}");
        let r = mcp.send(
            &Req::post("/mcp")
                .header("Authorization", &auth)
                .json(&support::http::initialize_request("2025-03-26")),
        );
        assert_eq!(r.status(), 200, "{r}");
        let session = r.header("mcp-session-id").unwrap().to_owned();
        let send = |body: Value| {
            mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &auth)
                    .header("Mcp-Session-Id", &session)
                    .header("MCP-Protocol-Version", "2025-03-26")
                    .json(&body),
            )
        };
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let call = |id: u32, name: &str, arguments: Value| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        };
        (
            send(json!([
                call(1, "read_tickets", json!({})),
                call(2, "close_ticket", json!({"id": 1}))
            ])),
            send(json!([call(3, "read_tickets", json!({}))])),
            // Inside a batch the caller is still known: its lists still hide what it lacks.
            send(json!([{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}])),
        )
    })
    .await;
    assert_eq!(batch.status(), 403, "{batch}");
    let challenge = batch.header("www-authenticate").unwrap();
    assert!(challenge.contains("scope=\"tickets:write\""), "{challenge}");
    assert_eq!(allowed.status(), 200, "{allowed}");
    assert!(allowed.text().contains("3 open tickets"), "{allowed}");
    let names: Vec<String> = listed.json()[0]["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"read_tickets".to_owned()), "{names:?}");
    assert!(!names.contains(&"close_ticket".to_owned()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn completions_subscriptions_and_listens_need_the_scopes_of_what_they_touch() {
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let reader = authz.token(CLIENT, &resource, "mcp tickets:read");
    let writer = authz.token(CLIENT, &resource, "mcp tickets:read tickets:write");
    blocking(move || {
        let session = |token: &str| {
            let r = mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &format!("Bearer {token}"))
                    .json(&initialize()),
            );
            assert_eq!(r.status(), 200, "{r}");
            r.header("mcp-session-id").unwrap().to_owned()
        };
        let send = |token: &str, session: &str, method: &str, params: Value| {
            mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &format!("Bearer {token}"))
                    .header("Mcp-Session-Id", session)
                    .header("MCP-Protocol-Version", "2025-11-25")
                    .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})),
            )
        };
        let prompt_ref = json!({"ref": {"type": "ref/prompt", "name": "draft"}, "argument": {"name": "topic", "value": "b"}});
        let template_ref = json!({"ref": {"type": "ref/resource", "uri": "notes://{id}"}, "argument": {"name": "id", "value": ""}});
        let r_session = session(&reader);
        for (method, params) in [
            ("completion/complete", prompt_ref.clone()),
            ("completion/complete", template_ref.clone()),
            ("resources/subscribe", json!({"uri": "notes://1"})),
            // A parent hears about the private files below it (issue #27).
            ("resources/subscribe", json!({"uri": "files:///"})),
            ("resources/subscribe", json!({"uri": "files:///private/"})),
            ("resources/read", json!({"uri": "notes://1"})),
            ("prompts/get", json!({"name": "draft", "arguments": {"topic": "x"}})),
        ] {
            let r = send(&reader, &r_session, method, params);
            assert_eq!(r.status(), 403, "{method}: {r}");
            assert!(r.header("www-authenticate").unwrap().contains("tickets:write"), "{method}: {r}");
        }
        // Nothing scoped below the public file: a reader may subscribe to it.
        let r = send(&reader, &r_session, "resources/subscribe", json!({"uri": "files:///public/readme"}));
        assert_eq!(r.status(), 200, "{r}");
        assert!(!r.text().contains("error"), "{r}");
        let w_session = session(&writer);
        let r = send(&writer, &w_session, "completion/complete", prompt_ref);
        assert_eq!(r.status(), 200, "{r}");
        assert!(r.text().contains("billing"), "{r}");
        // 2026-07-28: a listen watching a resource the token may not read, or a parent of
        // one (issue #27: `files:///` needed no scope and heard the private files' updates).
        for watched in ["notes://1", "files:///", "files:///private"] {
            let r = mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &format!("Bearer {reader}"))
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "subscriptions/listen")
                    .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {
                        "notifications": {"resourceSubscriptions": [watched]},
                        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
                    }})),
            );
            assert_eq!(r.status(), 403, "{watched}: {r}");
            assert!(r.header("www-authenticate").unwrap().contains("tickets:write"), "{watched}: {r}");
        }
    })
    .await;
}

/// A member the method does not have, holding what serde_json's value parser refuses (a
/// number out of range, nesting past its depth limit). The scope check once read params with
/// that parser and, refused, saw no target (no scope needed), while the dispatcher skipped
/// the member and ran the tool. Both now read the one decode.
fn paddings() -> Vec<(&'static str, String)> {
    vec![
        ("1e400", r#""x":1e400,"#.to_owned()),
        (
            "200 levels",
            format!(r#""x":{}1{},"#, "[".repeat(200), "]".repeat(200)),
        ),
    ]
}

/// A JSON-RPC request whose params start with `pad` (serde_json cannot hold it in a `Value`).
fn padded(id: u32, method: &str, params: &Value, pad: &str) -> String {
    let params = params.to_string();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{pad}{}}}"#,
        &params[1..]
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn padding_cannot_hide_what_a_request_touches_from_the_scope_check() {
    let (authz, resource, mcp) = serve(|i, r| Auth::jwt(i, r)).await;
    let reader = authz.token(CLIENT, &resource, "mcp tickets:read");
    blocking(move || {
        let auth = format!("Bearer {reader}");
        let refused = |what: &str, r: &support::http::Response| {
            assert_eq!(r.status(), 403, "{what}: {r}");
            let challenge = r.header("www-authenticate").unwrap_or_default();
            assert!(challenge.contains("tickets:write"), "{what}: {r}");
        };
        let prompt_ref = json!({"ref": {"type": "ref/prompt", "name": "draft"}, "argument": {"name": "topic", "value": "b"}});
        let template_ref = json!({"ref": {"type": "ref/resource", "uri": "notes://{id}"}, "argument": {"name": "id", "value": ""}});
        let scoped = [
            ("tools/call", json!({"name": "close_ticket", "arguments": {"id": 1}}), "close_ticket"),
            ("prompts/get", json!({"name": "draft", "arguments": {"topic": "x"}}), "draft"),
            ("resources/read", json!({"uri": "notes://1"}), "notes://1"),
            ("completion/complete", prompt_ref, ""),
            ("completion/complete", template_ref, ""),
        ];
        for version in ["2025-11-25", "2025-03-26"] {
            let r = mcp.send(
                &Req::post("/mcp")
                    .header("Authorization", &auth)
                    .json(&support::http::initialize_request(version)),
            );
            assert_eq!(r.status(), 200, "{r}");
            let session = r.header("mcp-session-id").unwrap().to_owned();
            let send = |body: String| {
                mcp.send(
                    &Req::post("/mcp")
                        .header("Authorization", &auth)
                        .header("Mcp-Session-Id", &session)
                        .header("MCP-Protocol-Version", version)
                        .header("Content-Type", "application/json")
                        .body(body),
                )
            };
            let subscribe = ("resources/subscribe", json!({"uri": "notes://1"}), "");
            for (pad_name, pad) in paddings() {
                for (method, params, _) in scoped.iter().chain([&subscribe]) {
                    let what = format!("{version} {method} padded with {pad_name}");
                    refused(&what, &send(padded(1, method, params, &pad)));
                    if version == "2025-03-26" {
                        // In a batch, beside a call the token allows.
                        let batch = format!(
                            r#"[{},{}]"#,
                            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_tickets"}}),
                            padded(2, method, params, &pad)
                        );
                        refused(&format!("{what}, in a batch"), &send(batch));
                    }
                }
            }
        }
        // 2026-07-28: the same requests with `_meta` (its headers agreeing), and a listen.
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#;
        let listen = (
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["notes://1"]}}),
            "",
        );
        for (pad_name, pad) in paddings() {
            for (method, params, name) in scoped.iter().chain([&listen]) {
                let mut req = Req::post("/mcp")
                    .header("Authorization", &auth)
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", method)
                    .header("Content-Type", "application/json");
                if !name.is_empty() {
                    req = req.header("Mcp-Name", name);
                }
                let body = padded(1, method, params, &format!("{meta}{pad}"));
                refused(&format!("2026-07-28 {method} padded with {pad_name}"), &mcp.send(&req.body(body)));
            }
        }
        // HTTP+SSE: POST /messages of a 2024-11-05 session.
        let mut stream = mcp.open_stream(
            &Req::get("/sse")
                .header("Accept", "text/event-stream")
                .header("Authorization", &auth),
        );
        assert_eq!(stream.head.status, 200, "GET /sse: {}", stream.seen());
        let endpoint = loop {
            let event = stream.expect_event("the endpoint event");
            if event.event.as_deref() == Some("endpoint") {
                break event.data;
            }
        };
        let post = |body: String| {
            mcp.send(
                &Req::post(&endpoint)
                    .header("Authorization", &auth)
                    .header("Content-Type", "application/json")
                    .body(body),
            )
        };
        let r = post(support::http::initialize_request("2024-11-05").to_string());
        assert_eq!(r.status(), 202, "{r}");
        for (pad_name, pad) in paddings() {
            for (method, params, _) in &scoped {
                refused(&format!("/messages {method} padded with {pad_name}"), &post(padded(1, method, params, &pad)));
            }
        }
    })
    .await;
}

/// `mcp_runtime::client::oauth` against oidc-provider, end to end: the client is given only
/// the MCP server's URL and client credentials; it finds the issuer through the server's
/// protected resource metadata and oidc-provider's OpenID metadata, gets a JWT for this
/// resource (RFC 8707) with the scopes it was told, and, refused a tool for want of
/// `tickets:write` (403 `insufficient_scope`), asks again for the union and calls it.
#[tokio::test(flavor = "multi_thread")]
async fn the_oauth_client_gets_its_own_tokens_and_steps_up() {
    use mcp_runtime::client::oauth::OAuthConfig;
    let (authz, resource, _mcp) =
        serve(|issuer, resource| Auth::jwt(issuer, resource).required_scopes(["mcp"])).await;
    for protocol in [
        ProtocolChoice::Session(ProtocolVersion::V2025_11_25),
        ProtocolChoice::Stateless,
    ] {
        let c = Client::builder()
            .protocol(protocol)
            .oauth(
                OAuthConfig::client_credentials(CLIENT.0, CLIENT.1).scopes(["mcp", "tickets:read"]),
            )
            .connect(&resource)
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
        let who: String = c.call_tool_as("whoami", json!({})).await.unwrap();
        assert_eq!(
            who,
            format!(
                "mcp-test from {} (client mcp-test) with mcp tickets:read",
                authz.issuer
            )
        );
        // Step-up: the 403 names tickets:write; the new token has all three.
        let r = c.call_tool("close_ticket", json!({"id": 7})).await.unwrap();
        assert!(!r.is_error(), "{r:?}");
        let who: String = c.call_tool_as("whoami", json!({})).await.unwrap();
        assert!(
            who.ends_with("with mcp tickets:read tickets:write"),
            "{who}"
        );
        c.close().await;
    }
}

/// `http://127.0.0.1:PORT/path?query` → (PORT, `/path?query`).
fn split_url(url: &str) -> (u16, String) {
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("not a loopback URL: {url}"));
    let (port, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    (port.parse().unwrap(), target.to_owned())
}

/// The query parameters of `url`, decoded.
fn query_of(url: &str) -> Vec<(String, String)> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (support::oauth::decode(k), support::oauth::decode(v)))
        .collect()
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The user, in a browser of their own (a new cookie jar): opens `authorization_url`, follows
/// redirects, and answers oidc-provider's interaction pages as `user` would (the login form,
/// then the consent form), until the authorization server sends the browser to another origin
/// (the client's loopback redirect URI), which must answer 200. Returns the prompts shown.
fn play_user(authorization_url: &str, user: &str) -> Vec<String> {
    let (as_port, first) = split_url(authorization_url);
    let (mut port, mut target) = (as_port, first);
    let mut form: Option<String> = None;
    let mut cookies: Vec<(String, String)> = Vec::new();
    let mut prompts = Vec::new();
    let resolve = |location: &str, port: u16| {
        if location.starts_with("http://") {
            split_url(location)
        } else {
            (port, location.to_owned())
        }
    };
    for _ in 0..20 {
        let mut req = match &form {
            Some(body) => Req::post(&target)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body.clone()),
            None => Req::get(&target),
        }
        .header("Accept", "text/html");
        if !cookies.is_empty() && port == as_port {
            let jar: Vec<String> = cookies.iter().map(|(n, v)| format!("{n}={v}")).collect();
            req = req.header("Cookie", &jar.join("; "));
        }
        let r = Endpoint { port }.send(&req);
        if port != as_port {
            assert_eq!(r.status(), 200, "the redirect URI answered {r}");
            return prompts;
        }
        for (name, value) in &r.head.headers {
            if !name.eq_ignore_ascii_case("set-cookie") {
                continue;
            }
            let pair = value.split(';').next().unwrap_or("");
            let Some((n, v)) = pair.split_once('=') else {
                continue;
            };
            cookies.retain(|(k, _)| k != n);
            if !v.is_empty() {
                cookies.push((n.trim().to_owned(), v.to_owned()));
            }
        }
        form = None;
        match r.status() {
            302 | 303 => (port, target) = resolve(r.header("location").unwrap(), port),
            200 => {
                let page = r.text();
                let after = |marker: &str| {
                    let start = page.find(marker).unwrap_or_else(|| {
                        panic!("no {marker} on the authorization server's page: {r}")
                    }) + marker.len();
                    page[start..].split('"').next().unwrap().to_owned()
                };
                let prompt = after(r#"name="prompt" value=""#);
                form = Some(match prompt.as_str() {
                    "login" => format!("prompt=login&login={user}"),
                    "consent" => "prompt=consent".to_owned(),
                    other => panic!("an unexpected prompt {other:?}: {r}"),
                });
                (port, target) = resolve(&after(r#"action=""#), port);
                prompts.push(prompt);
            }
            _ => panic!("the authorization server answered {r}"),
        }
    }
    panic!("the authorization server never sent the browser back");
}

/// The claims of a JWT (not verified: the MCP server did that).
fn claims(jwt: &str) -> Value {
    let payload = jwt.split('.').nth(1).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap()
}

/// The authorization-code flow of `mcp_runtime::client::oauth` against oidc-provider, with a
/// user: the client is given only the MCP server's URL and a [`LoopbackRedirect`] whose hook
/// plays the user in a browser of its own (oidc-provider's login form, then its consent form).
/// The client registers itself (RFC 7591, a public native client with its loopback redirect
/// URI), sends PKCE S256 and the resource (RFC 8707), gets a JWT for that user, for this
/// server, steps up through a second authorization when a tool needs more scope, and a later
/// client with the same token file uses the tokens without a login. In both eras.
///
/// [`LoopbackRedirect`]: mcp_runtime::client::oauth::LoopbackRedirect
#[tokio::test(flavor = "multi_thread")]
async fn the_authorization_code_flow_runs_against_a_real_authorization_server() {
    use mcp_runtime::client::oauth::{FileTokenStore, LoopbackRedirect, OAuthConfig};
    use std::sync::{Arc, Mutex};
    type Logins = Arc<Mutex<Vec<(String, std::thread::JoinHandle<Vec<String>>)>>>;

    let (authz, resource, _mcp) =
        serve(|issuer, resource| Auth::jwt(issuer, resource).required_scopes(["mcp"])).await;
    let dir = std::env::temp_dir().join(format!("mcp-auth-code-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (era, protocol) in [
        ProtocolChoice::Session(ProtocolVersion::V2025_11_25),
        ProtocolChoice::Stateless,
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.join(format!("tokens-{era}.json"));
        let _ = std::fs::remove_file(&path);
        // Each authorization URL the hook was given, and the browser that went through it.
        let logins: Logins = Arc::default();
        let redirect = {
            let logins = logins.clone();
            LoopbackRedirect::bind(move |url| {
                let browser = std::thread::spawn({
                    let url = url.to_owned();
                    move || play_user(&url, "alice")
                });
                logins.lock().unwrap().push((url.to_owned(), browser));
            })
            .unwrap()
            .timeout(Duration::from_secs(120))
        };
        let redirect_uri = format!("http://127.0.0.1:{}/callback", redirect.port());
        let config = OAuthConfig::authorization_code(redirect).client_name("auth-code-test");
        let take_logins = || std::mem::take(&mut *logins.lock().unwrap());

        let c = Client::builder()
            .protocol(protocol)
            .oauth(config.clone().token_store(FileTokenStore::new(&path)))
            .connect(&resource)
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
        let who: String = c.call_tool_as("whoami", json!({})).await.unwrap();

        // One login: the user saw the login form, then the consent form.
        let mut logins_seen = take_logins();
        assert_eq!(logins_seen.len(), 1, "{protocol:?}");
        let (url, browser) = logins_seen.pop().unwrap();
        assert_eq!(browser.join().unwrap(), ["login", "consent"]);
        let params = query_of(&url);
        assert_eq!(param(&params, "response_type"), Some("code"));
        assert_eq!(param(&params, "code_challenge_method"), Some("S256"));
        assert_eq!(param(&params, "code_challenge").map(str::len), Some(43));
        assert_eq!(param(&params, "resource"), Some(resource.as_str()));
        assert_eq!(param(&params, "redirect_uri"), Some(redirect_uri.as_str()));
        let client_id = param(&params, "client_id").unwrap().to_owned();
        assert_ne!(client_id, CLIENT.0);

        // The token the server took is the user's, got by that client, for this resource.
        assert_eq!(
            who,
            format!("alice from {} (client {client_id}) with mcp", authz.issuer),
            "{protocol:?}"
        );
        let stored: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let tokens = &stored[resource.as_str()];
        assert_eq!(
            tokens["client_auth_method"], "none",
            "a public client: {tokens}"
        );
        let at = claims(tokens["access_token"].as_str().unwrap());
        assert_eq!(at["sub"], "alice");
        assert_eq!(at["aud"], resource.as_str());
        assert_eq!(at["client_id"], client_id.as_str());
        assert_eq!(at["iss"], authz.issuer.as_str());

        // oidc-provider requires PKCE of a public client: the same request without it is
        // refused (sent back to the redirect URI with an error, not to a login).
        let without: Vec<String> = params
            .iter()
            .filter(|(k, _)| !k.starts_with("code_challenge"))
            .map(|(k, v)| format!("{k}={}", v.replace(':', "%3A").replace('/', "%2F")))
            .collect();
        let (as_port, _) = split_url(&url);
        let r = Endpoint { port: as_port }
            .send(&Req::get(&format!("/auth?{}", without.join("&"))).header("Accept", "text/html"));
        let location = r.header("location").unwrap_or_else(|| panic!("{r}"));
        assert!(location.starts_with(&redirect_uri), "{location}");
        let refusal = query_of(location);
        assert_eq!(
            param(&refusal, "error"),
            Some("invalid_request"),
            "{location}"
        );
        assert!(
            param(&refusal, "error_description").is_some_and(|d| d.contains("PKCE")),
            "{location}"
        );

        // Step-up: close_ticket needs tickets:write; the user is asked again (a new browser:
        // login and consent to the new scope) and the new token has both.
        let r = c.call_tool("close_ticket", json!({"id": 7})).await.unwrap();
        assert!(!r.is_error(), "{r:?}");
        let mut logins_seen = take_logins();
        assert_eq!(logins_seen.len(), 1, "{protocol:?}");
        let (url, browser) = logins_seen.pop().unwrap();
        assert_eq!(browser.join().unwrap(), ["login", "consent"]);
        assert_eq!(
            param(&query_of(&url), "scope"),
            Some("mcp tickets:write"),
            "{url}"
        );
        c.close().await;

        // A later run with the same token file: no login.
        let again = Client::builder()
            .protocol(protocol)
            .oauth(config.token_store(FileTokenStore::new(&path)))
            .connect(&resource)
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
        let who: String = again.call_tool_as("whoami", json!({})).await.unwrap();
        assert_eq!(
            who,
            format!(
                "alice from {} (client {client_id}) with mcp tickets:write",
                authz.issuer
            )
        );
        let r = again
            .call_tool("close_ticket", json!({"id": 8}))
            .await
            .unwrap();
        assert!(!r.is_error(), "{r:?}");
        assert!(take_logins().is_empty(), "{protocol:?}: a second login");
        again.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
