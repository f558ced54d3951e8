//! The server card (SEP-2127) at `GET <mcp-url>/server-card`: its media type, CORS from any
//! origin, caching and `ETag` revalidation, a name in reverse-DNS form derived from the
//! repository, content that agrees with what `server/discover` says, and when it is served
//! (on by default without authorization, off by default with it, never without a name); and
//! the AI Catalog at `/.well-known/ai-catalog.json` that holds it.

mod support;

use mcp_runtime::auth::{Auth, Principal, TokenError, TokenVerifier, VerifyFuture};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::SessionEra;
use mcp_runtime::transport::{HttpConfig, serve_http_on};
use mcp_runtime::{BuildError, Server};
use serde_json::{Value, json};
use support::http::{Endpoint, Req, rpc, stateless_meta};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn weather() -> Server {
    Server::builder()
        .name("weather")
        .version("1.4.2")
        .title("Weather")
        .description("Forecasts by city name.")
        .website_url("https://weather.acme.dev")
        .repository("https://github.com/Acme/weather")
        .build()
        .unwrap()
}

/// Serves `server` with `config` on a loopback port, in this process.
async fn serve(server: Server, config: impl FnOnce(u16) -> HttpConfig) -> Endpoint {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(serve_http_on(server, listener, config(port)));
    Endpoint { port }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

fn card_request() -> Req {
    Req::get("/mcp/server-card").header("Accept", "application/mcp-server-card+json")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_card_is_served_to_anyone_cached_and_consistent_with_discover() {
    let mcp = serve(weather(), |_| HttpConfig::default()).await;
    blocking(move || {
        let r = mcp.send(&card_request());
        assert_eq!(r.status(), 200, "{r}");
        assert_eq!(
            r.header("content-type"),
            Some("application/mcp-server-card+json"),
            "{r}"
        );
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{r}");
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=3600"),
            "{r}"
        );
        let tag = r.header("etag").expect("an ETag").to_owned();
        let card = r.json();
        assert_eq!(
            card,
            json!({
                "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
                "name": "io.github.acme/weather",
                "version": "1.4.2",
                "title": "Weather",
                "description": "Forecasts by city name.",
                "websiteUrl": "https://weather.acme.dev",
                "repository": {"url": "https://github.com/Acme/weather", "source": "github"},
            }),
            "{r}"
        );
        // What a connected client hears does not contradict it.
        let discover = mcp.post(
            &rpc(1, "server/discover", json!({"_meta": stateless_meta()})),
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "server/discover"),
            ],
        );
        assert_eq!(discover.status(), 200, "{discover}");
        let info = &discover.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
        for field in ["version", "title", "description", "websiteUrl"] {
            assert_eq!(info[field], card[field], "{field}: {discover}");
        }
        // Any origin may read it, the MCP endpoint's own Origin check notwithstanding.
        let r = mcp.send(&card_request().header("Origin", "https://elsewhere.example"));
        assert_eq!(r.status(), 200, "{r}");
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{r}");
        let r = mcp.send(
            &Req::new("OPTIONS", "/mcp/server-card")
                .header("Origin", "https://elsewhere.example")
                .header("Access-Control-Request-Method", "GET")
                .header("Access-Control-Request-Headers", "if-none-match"),
        );
        assert_eq!(r.status(), 204, "{r}");
        assert_eq!(r.header("access-control-allow-methods"), Some("GET"), "{r}");
        // Revalidation.
        let r = mcp.send(&card_request().header("If-None-Match", &tag));
        assert_eq!(r.status(), 304, "{r}");
        assert_eq!(r.header("etag"), Some(tag.as_str()), "{r}");
        assert!(r.body.is_empty(), "{r}");
        let r = mcp.send(&card_request().header("If-None-Match", "\"other\""));
        assert_eq!(r.status(), 200, "{r}");
        // Read-only.
        let r = mcp.send(&Req::post("/mcp/server-card").json(&json!({})));
        assert_eq!(r.status(), 405, "{r}");
        assert_eq!(r.header("allow"), Some("GET"), "{r}");
        // The Host check still holds (DNS rebinding).
        let r = mcp.send(&card_request().header("Host", "attacker.example"));
        assert_eq!(r.status(), 403, "{r}");
    })
    .await;
}

/// The AI Catalog (the discovery document of the server card extension): the card inline, under
/// the `urn:air` identifier of its name, public and revalidated like the card; absent where
/// the card is.
#[tokio::test(flavor = "multi_thread")]
async fn the_ai_catalog_holds_the_card() {
    let mcp = serve(weather(), |_| HttpConfig::default()).await;
    let off = serve(weather(), |_| HttpConfig::default().server_card(false)).await;
    let nameless = serve(Server::builder().name("x").build().unwrap(), |_| {
        HttpConfig::default()
    })
    .await;
    blocking(move || {
        let card = mcp.send(&card_request()).json();
        let catalog = || Req::get("/.well-known/ai-catalog.json");
        let r = mcp.send(&catalog().header("Origin", "https://elsewhere.example"));
        assert_eq!(r.status(), 200, "{r}");
        assert_eq!(
            r.header("content-type"),
            Some("application/ai-catalog+json"),
            "{r}"
        );
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{r}");
        assert_eq!(
            r.json(),
            json!({
                "specVersion": "1.0",
                "entries": [{
                    "identifier": "urn:air:acme.github.io:mcp:weather",
                    "type": "application/mcp-server-card+json",
                    "data": card,
                }],
            }),
            "{r}"
        );
        let tag = r.header("etag").expect("an ETag").to_owned();
        assert_eq!(
            mcp.send(&catalog().header("If-None-Match", &tag)).status(),
            304
        );
        assert_eq!(
            mcp.send(&Req::post("/.well-known/ai-catalog.json").json(&json!({})))
                .status(),
            405
        );
        assert_eq!(
            mcp.send(&catalog().header("Host", "attacker.example"))
                .status(),
            403
        );
        assert_eq!(off.send(&catalog()).status(), 404);
        assert_eq!(nameless.send(&catalog()).status(), 404);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_name_no_card_and_off_is_off() {
    let nameless = Server::builder().name("x").build().unwrap();
    let mcp = serve(nameless, |_| HttpConfig::default()).await;
    let off = serve(weather(), |_| HttpConfig::default().server_card(false)).await;
    let named = serve(
        Server::builder()
            .name("x")
            .card_name("dev.acme/x")
            .build()
            .unwrap(),
        |_| HttpConfig::default(),
    )
    .await;
    blocking(move || {
        assert_eq!(mcp.send(&card_request()).status(), 404);
        assert_eq!(off.send(&card_request()).status(), 404);
        let r = named.send(&card_request());
        assert_eq!(r.status(), 200, "{r}");
        assert_eq!(r.json()["name"], "dev.acme/x", "{r}");
        assert_eq!(r.json()["description"], "The x MCP server", "{r}");
    })
    .await;
    match Server::builder().card_name("weather").build() {
        Err(BuildError::InvalidCardName { reason }) => {
            assert!(reason.contains("reverse-DNS"), "{reason}")
        }
        other => panic!("{:?}", other.map(|_| "built")),
    }
}

struct AnyToken;

impl TokenVerifier for AnyToken {
    fn verify<'a>(&'a self, _: &'a str) -> VerifyFuture<'a> {
        Box::pin(async {
            let claims = json!({"iss": "https://as.example", "sub": "x"});
            Principal::from_claims(claims.as_object().unwrap().clone()).map_err(TokenError::Invalid)
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_authorizing_server_serves_its_card_only_when_told_with_its_url_and_versions() {
    let auth = |port: u16| {
        Auth::with_verifier(
            "https://as.example",
            format!("http://127.0.0.1:{port}/mcp"),
            AnyToken,
        )
    };
    let quiet = serve(weather(), |port| HttpConfig::default().auth(auth(port))).await;
    let told = serve(weather(), |port| {
        HttpConfig::default()
            .auth(auth(port))
            .server_card(true)
            .session_era(SessionEra::Reject)
    })
    .await;
    let port = told.port;
    blocking(move || {
        // Off by default: the card names the server to callers without a token.
        let r = quiet.send(&card_request());
        assert_eq!(r.status(), 404, "{r}");
        let r = told.send(&card_request());
        assert_eq!(r.status(), 200, "{r}");
        let remotes: Value = r.json()["remotes"].clone();
        assert_eq!(
            remotes,
            json!([{
                "type": "streamable-http",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "supportedProtocolVersions": ["2026-07-28"],
            }]),
            "{r}"
        );
    })
    .await;
}
