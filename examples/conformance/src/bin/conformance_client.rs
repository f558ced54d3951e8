//! The client the official conformance suite drives (`conformance client --command …`): it reads
//! the scenario from `MCP_CONFORMANCE_SCENARIO`, the server URL from its last argument, the
//! protocol version from `MCP_CONFORMANCE_PROTOCOL_VERSION` and scenario data from
//! `MCP_CONFORMANCE_CONTEXT`, and does what the scenario expects of a client, through
//! `mcp_runtime::client`. `tests/conformance/run-client.sh` runs the suite against it.

use mcp_runtime::ProtocolVersion;
use mcp_runtime::client::oauth::{
    EnterpriseAuthorization, LoopbackRedirect, OAuthConfig, PrivateKey,
};
use mcp_runtime::client::{
    Client, ClientError, ElicitResult, ProtocolChoice, Root, SampledMessage,
};
use mcp_runtime::protocol::Role;
use serde_json::{Map, Value, json};

#[tokio::main]
async fn main() {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance_client <server-url>");
        std::process::exit(2);
    };
    if let Err(e) = run(&scenario, &url).await {
        eprintln!("conformance client: scenario {scenario}: {e}");
        std::process::exit(1);
    }
}

/// The era the runner asked for: its version when it names one, otherwise auto-detection.
fn protocol() -> ProtocolChoice {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .as_deref()
        .and_then(ProtocolVersion::parse)
    {
        Some(ProtocolVersion::V2026_07_28) => ProtocolChoice::Stateless,
        Some(v) => ProtocolChoice::Session(v),
        None => ProtocolChoice::Auto,
    }
}

/// The scenario's data (`MCP_CONFORMANCE_CONTEXT`), if any.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null)
}

/// The Client ID Metadata Document URL the `auth/basic-cimd` scenario expects.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth for the `auth/*` scenarios: the grant the scenario tests, with the credentials its
/// context gives.
fn oauth(scenario: &str) -> Result<Option<OAuthConfig>, ClientError> {
    if !scenario.starts_with("auth/") {
        return Ok(None);
    }
    let ctx = context();
    let text = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_owned);
    let need = |k: &str| {
        text(k).ok_or_else(|| ClientError::Protocol(format!("the scenario's context has no {k}")))
    };
    match scenario {
        "auth/client-credentials-basic" => {
            return Ok(Some(OAuthConfig::client_credentials(
                need("client_id")?,
                need("client_secret")?,
            )));
        }
        "auth/client-credentials-jwt" => {
            let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
            let key = PrivateKey::from_pem(&need("private_key_pem")?, &alg)?;
            return Ok(Some(OAuthConfig::client_credentials_jwt(
                need("client_id")?,
                key,
            )));
        }
        "auth/wif-jwt-bearer" => {
            let jwt = need("valid_jwt")?;
            let mut config = OAuthConfig::jwt_bearer(move || jwt.clone());
            if let Some(id) = text("client_id") {
                config = config.client_id(id);
            }
            return Ok(Some(config));
        }
        "auth/enterprise-managed-authorization" => {
            let grant = EnterpriseAuthorization::new(
                need("idp_token_endpoint")?,
                need("idp_client_id")?,
                need("idp_id_token")?,
            );
            return Ok(Some(OAuthConfig::enterprise(
                grant,
                need("client_id")?,
                need("client_secret")?,
            )));
        }
        _ => {}
    }
    let redirect = LoopbackRedirect::bind(browse)
        .map_err(|e| ClientError::Transport(format!("no loopback listener: {e}")))?
        .timeout(std::time::Duration::from_secs(10));
    let mut config = OAuthConfig::authorization_code(redirect)
        .client_name("mcp-runtime-conformance-client")
        .client_metadata_url(CIMD_URL)
        .dpop(true);
    if let Some(id) = text("client_id") {
        config = config.client_id(id);
    }
    if let Some(secret) = text("client_secret") {
        config = config.client_secret(secret);
    }
    Ok(Some(config))
}

/// The "browser" of the authorization-code scenarios: a user who approves at once. It gets
/// the authorization URL, and follows the authorization server's redirect back to the
/// client's loopback listener, with plain HTTP/1.1 `GET`s.
fn browse(url: &str) {
    let url = url.to_owned();
    tokio::spawn(async move {
        match http_get(&url).await {
            Ok(Some(location)) => {
                if let Err(e) = http_get(&location).await {
                    eprintln!("conformance client: GET {location}: {e}");
                }
            }
            Ok(None) => eprintln!("conformance client: {url} did not redirect"),
            Err(e) => eprintln!("conformance client: GET {url}: {e}"),
        }
    });
}

/// `GET url` (http:// only); the `Location` of the answer, if any.
async fn http_get(url: &str) -> std::io::Result<Option<String>> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| std::io::Error::other("not an http:// URL"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let mut stream = tokio::net::TcpStream::connect(authority).await?;
    let head = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    let answer = String::from_utf8_lossy(&answer);
    let head = answer.split("\r\n\r\n").next().unwrap_or("");
    Ok(head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    }))
}

async fn connect(scenario: &str, url: &str) -> Result<Client, ClientError> {
    let mut builder = Client::builder();
    if let Some(config) = oauth(scenario)? {
        builder = builder.oauth(config);
    }
    builder
        .info("mcp-runtime-conformance-client", env!("CARGO_PKG_VERSION"))
        .protocol(protocol())
        // A user who changes nothing accepts the form's defaults (SEP-1034); a form without
        // defaults is accepted with what the scenario fixtures ask for.
        .on_elicitation(|req| async move {
            let mut content = req.defaults();
            if let Some(props) = req
                .requested_schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
            {
                for (name, prop) in props {
                    if !content.contains_key(name) {
                        content.insert(name.clone(), sample_value(prop));
                    }
                }
            }
            Ok(ElicitResult::accept(content))
        })
        .on_sampling(|_params| async move {
            Ok(SampledMessage {
                role: Role::Assistant,
                content: json!({"type": "text", "text": "This is a test response"}),
                model: "conformance-model".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
        .roots(vec![Root {
            uri: "file:///tmp/conformance".into(),
            name: Some("conformance".into()),
        }])
        .connect(url)
        .await
}

/// A value a form field accepts: `true` for booleans (`confirmed: true`), a number, the first
/// enum member, or a string.
fn sample_value(prop: &Value) -> Value {
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("boolean") => json!(true),
        Some("integer") => json!(1),
        Some("number") => json!(1.5),
        _ => json!("test"),
    }
}

/// Arguments for a tool from its schema alone: numbers 2 and 3 in order (`add_numbers`' a and
/// b), `true`, or a string.
fn sample_arguments(schema: &Value) -> Value {
    let mut args = Map::new();
    let mut n = 2;
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let value = match prop.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => {
                    n += 1;
                    json!(n - 1)
                }
                _ => sample_value(prop),
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

async fn run(scenario: &str, url: &str) -> Result<(), ClientError> {
    let client = connect(scenario, url).await?;
    let outcome = match scenario {
        // Lists only: the tool's `$ref` points at a network URI the client must not fetch.
        "json-schema-ref-no-deref" => client.list_tools().await.map(drop),
        "json-schema-2020-12-preservation" => echo_schema(&client).await,
        "request-metadata" => request_metadata(&client).await,
        "http-standard-headers" => every_primitive(&client).await,
        "sep-2322-client-request-state" => request_state(&client).await,
        // A host lists the skills and reads no file of one before it is loaded.
        "sep-2640-client-no-prefetch" => client.list_skills().await.map(drop),
        // A host loads a skill: each file checked against the index before the next is read
        // (the server tampers with SKILL.md, so the load stops at it with an error).
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => load_every_skill(&client).await,
        "http-custom-headers" | "http-invalid-tool-headers" => {
            scripted_or_every_tool(&client).await
        }
        // initialize, tools_call, elicitation-sep1034-client-defaults, sse-retry and the
        // rest: list the tools and call each.
        _ => scripted_or_every_tool(&client).await,
    };
    client.close().await;
    outcome
}

/// Lists the skills, loads each one (its SKILL.md, checked), then reads its other files as a
/// model would, each checked against the index.
async fn load_every_skill(client: &Client) -> Result<(), ClientError> {
    for entry in client.list_skills().await? {
        let skill = client.load_skill(&entry).await?;
        for file in entry.files.iter().flatten().filter(|f| f.uri != entry.uri) {
            client.read_skill_file(&entry, &file.uri).await?;
        }
        eprintln!("conformance client: loaded {}", skill.entry.uri);
    }
    Ok(())
}

/// Calls the tools `MCP_CONFORMANCE_CONTEXT.toolCalls` names with their arguments, or else
/// every listed tool with sample arguments. Tools left out of the list (invalid
/// `x-mcp-header` annotations) are never called.
async fn scripted_or_every_tool(client: &Client) -> Result<(), ClientError> {
    let tools = client.list_tools().await?;
    let scripted = context()
        .get("toolCalls")
        .and_then(Value::as_array)
        .cloned();
    match scripted {
        Some(calls) => {
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or("");
                if !tools.iter().any(|t| t.name == name) {
                    continue;
                }
                let args = call.get("arguments").cloned().unwrap_or(json!({}));
                client.call_tool(name, args).await?;
            }
        }
        None => {
            for tool in &tools {
                client
                    .call_tool(&tool.name, sample_arguments(&tool.input_schema))
                    .await?;
            }
        }
    }
    Ok(())
}

/// Lists and uses every kind of primitive, so that each method's headers are seen.
async fn every_primitive(client: &Client) -> Result<(), ClientError> {
    for tool in client.list_tools().await? {
        client
            .call_tool(&tool.name, sample_arguments(&tool.input_schema))
            .await?;
    }
    for resource in client.list_resources().await? {
        client.read_resource(&resource.uri).await?;
    }
    for prompt in client.list_prompts().await? {
        let args: Map<String, Value> = prompt
            .arguments
            .iter()
            .map(|a| (a.name.clone(), json!("test")))
            .collect();
        client.get_prompt(&prompt.name, args).await?;
    }
    Ok(())
}

/// Sends the focal tool's input schema back through the echo tool, unchanged.
async fn echo_schema(client: &Client) -> Result<(), ClientError> {
    let tools = client.list_tools().await?;
    let focal = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .ok_or_else(|| ClientError::Protocol("json_schema_2020_12_tool is not listed".into()))?;
    client
        .call_tool("json_schema_echo", json!({ "schema": focal.input_schema }))
        .await
        .map(drop)
}

/// `server/discover` happened while connecting; then a listing, with `_meta` and headers.
async fn request_metadata(client: &Client) -> Result<(), ClientError> {
    client.list_tools().await.map(drop)
}

/// Multi-round-trip calls: `requestState` echoed, an unrelated call in between carrying none,
/// a result without `resultType` taken as complete.
async fn request_state(client: &Client) -> Result<(), ClientError> {
    let tools = client.list_tools().await?;
    for name in [
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ] {
        if tools.iter().any(|t| t.name == name) {
            client.call_tool(name, json!({})).await?;
        }
    }
    Ok(())
}
