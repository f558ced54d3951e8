//! `mcp_runtime::client::oauth` against a scripted MCP server and authorization server on two
//! origins (tests/support/oauth.rs): the authorization-code flow end to end, where the token
//! goes (to the MCP server, in its `Authorization` header, nowhere else), the file token store
//! (0600, reused by the next run), and refresh with rotation. The conformance suite's `auth/*`
//! client scenarios (tests/conformance/run.sh) cover the rest of the specification.

mod support;

use std::time::Duration;

use mcp_runtime::client::oauth::{FileTokenStore, LoopbackRedirect, OAuthConfig};
use mcp_runtime::client::{Client, ProtocolChoice};
use support::oauth::{Approve, Options, REDIRECT_URI, World, everything_sent, form_field};

fn builder() -> mcp_runtime::client::ClientBuilder {
    Client::builder()
        .protocol(ProtocolChoice::Session(
            mcp_runtime::ProtocolVersion::V2025_11_25,
        ))
        .request_timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(30))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_goes_to_the_mcp_server_only_and_never_in_a_url() {
    let world = World::start(Options::default()).await;
    let client = builder()
        .oauth(OAuthConfig::authorization_code(Approve))
        .connect(&world.url)
        .await
        .expect("connects after authorizing");
    client.list_tools().await.unwrap();
    client.close().await;

    let auth = world.auth.seen();
    let paths: Vec<_> = auth
        .iter()
        .map(|r| r.target.split('?').next().unwrap().to_owned())
        .collect();
    assert_eq!(
        paths,
        [
            "/.well-known/oauth-authorization-server",
            "/register",
            "/authorize",
            "/token"
        ]
    );
    // The authorization request and the token request: PKCE, resource, state.
    let authorize = &auth[2];
    assert!(authorize.target.contains("code_challenge_method=S256"));
    assert!(authorize.target.contains(&format!(
        "resource={}",
        support::oauth::decode(&world.url)
            .replace(':', "%3A")
            .replace('/', "%2F")
    )));
    let token = &auth[3];
    assert_eq!(
        form_field(token, "grant_type").as_deref(),
        Some("authorization_code")
    );
    assert_eq!(
        form_field(token, "resource").as_deref(),
        Some(world.url.as_str())
    );
    assert_eq!(
        form_field(token, "redirect_uri").as_deref(),
        Some(REDIRECT_URI)
    );
    assert!(form_field(token, "code_verifier").is_some_and(|v| v.len() >= 43));

    // The token: on the MCP server's requests after the 401, in the header; nowhere else.
    let mcp = world.mcp.seen();
    let carried = mcp
        .iter()
        .filter(|r| r.header("authorization") == Some("Bearer tok-1"))
        .count();
    assert!(carried >= 2, "initialize and tools/list carry the token");
    for sent in everything_sent(&auth) {
        assert!(
            !sent.contains("tok-1"),
            "the token went to the authorization server: {sent}"
        );
    }
    for r in mcp.iter().chain(auth.iter()) {
        assert!(!r.target.contains("tok-"), "a token in a URL: {}", r.target);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_file_token_store_is_private_and_serves_the_next_run() {
    let dir = std::env::temp_dir().join(format!("mcp-oauth-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tokens.json");
    let _ = std::fs::remove_file(&path);
    let world = World::start(Options::default()).await;
    let run = || async {
        let client = builder()
            .oauth(OAuthConfig::authorization_code(Approve).token_store(FileTokenStore::new(&path)))
            .connect(&world.url)
            .await
            .expect("connects");
        client.list_tools().await.unwrap();
        client.close().await;
    };
    run().await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the token file is its owner's only");
    }
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains("tok-1") && saved.contains(&world.url));
    let authorizations = || {
        world
            .auth
            .seen()
            .iter()
            .filter(|r| r.target.starts_with("/authorize"))
            .count()
    };
    assert_eq!(authorizations(), 1);
    // The next run starts with the saved token: no 401, no new authorization.
    let before = world.mcp.seen().len();
    run().await;
    assert_eq!(authorizations(), 1);
    assert!(
        world.mcp.seen()[before..]
            .iter()
            .filter(|r| r.method == "POST")
            .all(|r| r.header("authorization") == Some("Bearer tok-1"))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn expiring_tokens_are_refreshed_and_refresh_tokens_rotate() {
    // Every token expires within the refresh margin: each request after the first refreshes.
    let world = World::start(Options {
        expires_in: 5,
        ..Options::default()
    })
    .await;
    let client = builder()
        .oauth(OAuthConfig::authorization_code(Approve))
        .connect(&world.url)
        .await
        .expect("connects");
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    client.close().await;
    let refreshes: Vec<_> = world
        .auth
        .seen()
        .iter()
        .filter(|r| form_field(r, "grant_type").as_deref() == Some("refresh_token"))
        .map(|r| form_field(r, "refresh_token").unwrap())
        .collect();
    assert!(refreshes.len() >= 2, "{refreshes:?}");
    // Each refresh uses the refresh token the one before it issued.
    for (i, used) in refreshes.iter().enumerate() {
        assert_eq!(used, &format!("ref-{}", i + 1));
    }
    let last = world
        .mcp
        .seen()
        .into_iter()
        .rev()
        .find(|r| r.method == "POST")
        .unwrap();
    assert_eq!(
        last.header("authorization"),
        Some(format!("Bearer tok-{}", refreshes.len() + 1).as_str())
    );
}

/// The loopback redirect: the hook is given the authorization URL; the browser (here: two
/// plain `GET`s, after a stray request for a favicon) comes back to
/// `http://127.0.0.1:<port>/callback`, which answers with a page and hands the URL to the
/// client.
#[tokio::test(flavor = "multi_thread")]
async fn the_loopback_redirect_catches_the_browser_coming_back() {
    let world = World::start(Options::default()).await;
    let (pages_tx, mut pages) = tokio::sync::mpsc::unbounded_channel();
    let redirect = LoopbackRedirect::bind(move |url| {
        let (url, pages) = (url.to_owned(), pages_tx.clone());
        tokio::spawn(async move {
            let (_, back) = support::oauth::get(&url).await;
            let back = back.expect("the authorization server redirects");
            let origin = back.split("/callback").next().unwrap().to_owned();
            let (stray, _) = support::oauth::get(&format!("{origin}/favicon.ico")).await;
            let (page, _) = support::oauth::get(&back).await;
            pages.send((stray, page, back)).unwrap();
        });
    })
    .unwrap();
    let port = redirect.port();
    let client = builder()
        .oauth(OAuthConfig::authorization_code(redirect))
        .connect(&world.url)
        .await
        .expect("connects");
    client.list_tools().await.unwrap();
    client.close().await;
    let (stray, page, back) = pages.recv().await.unwrap();
    assert!(stray.contains("404"), "{stray}");
    assert!(page.contains("200"), "{page}");
    let expected = format!("http://127.0.0.1:{port}/callback");
    assert!(back.starts_with(&format!("{expected}?code=")), "{back}");
    let register = &world.auth.seen()[1];
    assert!(
        String::from_utf8_lossy(&register.body).contains(&expected),
        "the registration names the loopback redirect URI"
    );
}

/// A deprecated HTTP+SSE server behind OAuth: the stream's `GET` gets the 401, the client
/// authorizes and opens it with the token, and every `POST` to the endpoint carries it too.
#[tokio::test(flavor = "multi_thread")]
async fn an_http_sse_server_gets_the_token_on_its_stream_and_its_posts() {
    use std::sync::{Arc, OnceLock};

    use serde_json::{Value, json};
    use support::raw_server::{RawServer, initialize_result};
    use tokio::sync::{Mutex, mpsc};

    let world = World::start(Options::default()).await;
    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    let rx = Arc::new(Mutex::new(rx));
    let base: Arc<OnceLock<String>> = Arc::default();
    let (as_url, me) = (world.auth.url(""), base.clone());
    let legacy = RawServer::start(move |req, mut conn| {
        let (tx, rx, as_url, me) = (tx.clone(), rx.clone(), as_url.clone(), me.clone());
        Box::pin(async move {
            let base = me.get().unwrap().clone();
            if req.target == "/.well-known/oauth-protected-resource/sse" {
                let doc =
                    json!({"resource": format!("{base}/sse"), "authorization_servers": [as_url]});
                conn.json(200, &doc).await.ok()?;
                return Some(conn);
            }
            if !req
                .header("authorization")
                .is_some_and(|a| a.starts_with("Bearer tok-"))
            {
                let challenge = format!(
                    "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/sse\""
                );
                conn.respond(401, &[("WWW-Authenticate", &challenge)], b"")
                    .await
                    .ok()?;
                return Some(conn);
            }
            if req.method == "GET" {
                conn.open_body(200, "text/event-stream").await.ok()?;
                conn.write(b"event: endpoint\ndata: /messages?s=1\n\n")
                    .await
                    .ok()?;
                let mut rx = rx.lock().await;
                while let Some(message) = rx.recv().await {
                    conn.event(&message).await.ok()?;
                }
                return None;
            }
            let msg = req.json();
            let result = match msg.get("method").and_then(Value::as_str) {
                Some("initialize") => Some(initialize_result()),
                Some("tools/list") => Some(json!({"tools": []})),
                _ => None,
            };
            if let Some(result) = result {
                tx.send(json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
                    .unwrap();
            }
            conn.respond(202, &[], b"").await.ok()?;
            Some(conn)
        })
    })
    .await;
    base.set(legacy.url("")).unwrap();

    let client = builder()
        .oauth(OAuthConfig::authorization_code(Approve))
        .connect_sse(&legacy.url("/sse"))
        .await
        .expect("connects after authorizing");
    client.list_tools().await.unwrap();
    client.close().await;
    assert_eq!(world.issued.load(std::sync::atomic::Ordering::SeqCst), 1);
    let seen = legacy.seen();
    let unauthorized = seen
        .iter()
        .filter(|r| r.target == "/sse" && r.header("authorization").is_none())
        .count();
    assert_eq!(unauthorized, 1, "one GET before the token");
    let posts: Vec<_> = seen.iter().filter(|r| r.method == "POST").collect();
    assert!(posts.len() >= 2, "initialize and tools/list");
    for post in posts {
        assert_eq!(post.header("authorization"), Some("Bearer tok-1"));
    }
}
