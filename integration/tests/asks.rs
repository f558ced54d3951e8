//! Asking the client (elicitation, sampling, roots) through the in-process client, in both
//! eras: session-era requests answered by id, 2026-07-28 input-required rounds.

use std::sync::Arc;
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::ErrorCode;
use mcp_runtime::testing::{Answer, TestClient};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

/// A size choice.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Size {
    /// Small one
    Small,
    /// Large one
    Large,
}

/// An order form.
#[derive(Debug, Deserialize, JsonSchema)]
struct Order {
    /// How many.
    #[schemars(range(min = 1, max = 9))]
    quantity: u32,
    size: Size,
    #[schemars(email)]
    email: Option<String>,
}

/// Orders, asking the user for the details.
#[tool]
async fn order(ctx: Context) -> Result<String, McpError> {
    Ok(match ctx.elicit::<Order>("Your order?").await? {
        Elicitation::Accept(o) => format!("{} {:?} {:?}", o.quantity, o.size, o.email),
        Elicitation::Decline => "declined".into(),
        Elicitation::Cancel => "cancelled".into(),
    })
}

/// A name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// A colour.
#[derive(Deserialize, JsonSchema)]
struct Colour {
    colour: String,
}

/// Asks twice, one after the other; counts its runs.
#[tool]
async fn two_steps(ctx: Context) -> Result<String, McpError> {
    let name = ctx
        .elicit::<Name>("Name?")
        .await?
        .accepted()
        .map(|n| n.name);
    let colour = ctx
        .elicit::<Colour>("Colour?")
        .await?
        .accepted()
        .map(|c| c.colour);
    Ok(format!("{name:?} likes {colour:?}"))
}

/// Asks three things at once.
#[tool]
async fn all_at_once(ctx: Context) -> Result<String, McpError> {
    let (name, sampled, roots) = tokio::join!(
        ctx.ask_as("who").elicit::<Name>("Name?"),
        ctx.sample(
            Sampling::prompt("Say hi", 20)
                .system_prompt("Be brief")
                .model_hint("small")
        ),
        ctx.roots(),
    );
    let name = name?.accepted().map_or("?".into(), |n| n.name);
    let sampled = sampled?;
    let roots: Vec<String> = roots?.into_iter().map(|r| r.uri).collect();
    Ok(format!(
        "{name}|{}|{}|{}",
        sampled.text().unwrap_or_default(),
        sampled.model,
        roots.join(",")
    ))
}

/// Greets, falling back when the client cannot show forms.
#[tool]
async fn greet(ctx: Context) -> Result<String, McpError> {
    match ctx.elicit::<Name>("Name?").await {
        Ok(answer) => Ok(format!(
            "Hello, {}!",
            answer.accepted().map_or("?".into(), |n| n.name)
        )),
        Err(e) if e.is_missing_capability() => Ok("Hello, stranger!".into()),
        Err(e) => Err(e),
    }
}

/// Samples, passing any error on as a protocol error.
#[tool]
async fn sample_or_fail(ctx: Context) -> Result<String, McpError> {
    let answer = ctx.sample(Sampling::prompt("Hi", 10)).await?;
    Ok(answer.text().unwrap_or_default())
}

/// Nested (not a valid form).
#[derive(Deserialize, JsonSchema)]
struct Nested {
    #[allow(dead_code)]
    inner: Name,
}

/// Elicits a form that is not flat: the ask fails when made (tests/form_check.rs has the
/// turbofish case and `testing::check_form`).
#[tool]
async fn bad_form(ctx: Context) -> Result<String, McpError> {
    let _answer: Elicitation<Nested> = ctx.elicit("?").await?;
    Ok("unreachable".into())
}

/// A prompt that asks for context first.
#[prompt]
async fn with_context(ctx: Context) -> Result<String, McpError> {
    let name = ctx
        .elicit::<Name>("Name?")
        .await?
        .accepted()
        .map_or("?".into(), |n| n.name);
    Ok(format!("Context: {name}"))
}

/// A tool whose error is a plain string: a tool error, not a protocol error.
#[tool]
async fn string_error() -> Result<String, String> {
    Err("plain failure".into())
}

const ALL_CAPS: fn() -> Value =
    || json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}});

/// Answers every ask the way a cooperative user and client would.
fn answering() -> Answer {
    Arc::new(|method: &str, params: &Value| {
        Ok(match method {
            "elicitation/create" => {
                let props = &params["requestedSchema"]["properties"];
                if props.get("quantity").is_some() {
                    json!({"action": "accept", "content": {"quantity": 2, "size": "large", "email": "a@b.c"}})
                } else if props.get("colour").is_some() {
                    json!({"action": "accept", "content": {"colour": "teal"}})
                } else {
                    json!({"action": "accept", "content": {"name": "Ada"}})
                }
            }
            "sampling/createMessage" => json!({
                "role": "assistant",
                "content": {"type": "text", "text": "hi there"},
                "model": "test-model",
                "stopReason": "endTurn"
            }),
            "roots/list" => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
            other => panic!("unexpected ask {other}"),
        })
    })
}

async fn client(version: ProtocolVersion, caps: Value, answer: Option<Answer>) -> TestClient {
    TestClient::connect_answering(Server::builder().build().unwrap(), version, caps, answer)
        .await
        .unwrap()
}

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

#[tokio::test]
async fn a_typed_form_goes_out_as_a_flat_schema_and_comes_back_typed() {
    for version in ERAS {
        let c = client(version, ALL_CAPS(), Some(answering())).await;
        let r = c.call_tool("order", json!({})).await.unwrap();
        assert_eq!(r.text(), "2 Large Some(\"a@b.c\")", "{version}");
        let asks = c.take_asks();
        assert_eq!(asks.len(), 1, "{version}: {asks:?}");
        assert_eq!(asks[0]["method"], "elicitation/create");
        let params = &asks[0]["params"];
        assert_eq!(params["mode"], "form");
        assert_eq!(params["message"], "Your order?");
        let schema = &params["requestedSchema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["properties"]["size"]["oneOf"],
            json!([{"const": "small", "title": "Small one"}, {"const": "large", "title": "Large one"}])
        );
        assert_eq!(
            schema["properties"]["email"],
            json!({"type": "string", "format": "email"})
        );
        assert_eq!(
            schema["properties"]["quantity"],
            json!({"type": "integer", "description": "How many.", "minimum": 1, "maximum": 9})
        );
        let required = schema["required"].as_array().unwrap();
        assert!(required.contains(&json!("quantity")) && !required.contains(&json!("email")));
        if version == ProtocolVersion::V2025_11_25 {
            // A real JSON-RPC request with an id of ours.
            assert_eq!(asks[0]["jsonrpc"], "2.0");
            assert!(asks[0]["id"].is_number(), "{:?}", asks[0]);
        }
    }
}

#[tokio::test]
async fn decline_and_cancel_reach_the_tool() {
    for (action, text) in [("decline", "declined"), ("cancel", "cancelled")] {
        for version in ERAS {
            let answer: Answer = Arc::new(move |_: &str, _: &Value| Ok(json!({"action": action})));
            let c = client(version, ALL_CAPS(), Some(answer)).await;
            let r = c.call_tool("order", json!({})).await.unwrap();
            assert_eq!(r.text(), text, "{version}");
        }
    }
}

#[tokio::test]
async fn an_ask_the_client_did_not_declare_is_an_error_the_tool_can_handle() {
    for version in ERAS {
        let c = client(version, json!({"roots": {}}), Some(answering())).await;
        // Handled by the tool: a fallback.
        let r = c.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(r.text(), "Hello, stranger!", "{version}");
        // Passed on with `?`: the client gets -32021 naming what is missing.
        let e = c.call_tool("sample_or_fail", json!({})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::MISSING_CLIENT_CAPABILITY, "{version}");
        assert_eq!(
            e.data.unwrap()["requiredCapabilities"],
            json!({"sampling": {}})
        );
        assert!(c.take_asks().is_empty(), "nothing was sent: {version}");
    }
    // URL mode is a capability of its own: `elicitation: {}` means forms only.
    for version in ERAS {
        let c = client(version, json!({"elicitation": {}}), Some(answering())).await;
        let e = c.call_tool("open_link", json!({})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::MISSING_CLIENT_CAPABILITY, "{version}");
        assert_eq!(
            e.data.unwrap()["requiredCapabilities"],
            json!({"elicitation": {"url": {}}})
        );
    }
}

/// Sends the user to a page.
#[tool]
async fn open_link(ctx: Context) -> Result<String, McpError> {
    let action = ctx
        .elicit_url("Please sign in", "https://example.com/login")
        .await?;
    Ok(format!("{action:?}"))
}

#[tokio::test]
async fn url_elicitation_carries_an_id_only_in_the_session_era() {
    let answer: Answer = Arc::new(|_: &str, _: &Value| Ok(json!({"action": "accept"})));
    for version in ERAS {
        let c = client(version, ALL_CAPS(), Some(answer.clone())).await;
        let r = c.call_tool("open_link", json!({})).await.unwrap();
        assert_eq!(r.text(), "Accept", "{version}");
        let asks = c.take_asks();
        let params = &asks[0]["params"];
        assert_eq!(params["mode"], "url");
        assert_eq!(params["url"], "https://example.com/login");
        let id = params.get("elicitationId");
        match version {
            ProtocolVersion::V2025_11_25 => assert_eq!(id.unwrap().as_str().unwrap().len(), 32),
            _ => assert!(id.is_none(), "2026-07-28 removed elicitationId"),
        }
    }
}

#[tokio::test]
async fn older_protocols_have_no_elicitation() {
    // 2025-03-26 predates elicitation: even a client claiming it gets the fallback.
    let c = client(ProtocolVersion::V2025_03_26, ALL_CAPS(), Some(answering())).await;
    let r = c.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(r.text(), "Hello, stranger!");
    // Before 2025-11-25, forms are sent without `mode`.
    let c = client(ProtocolVersion::V2025_06_18, ALL_CAPS(), Some(answering())).await;
    assert_eq!(
        c.call_tool("greet", json!({})).await.unwrap().text(),
        "Hello, Ada!"
    );
    let asks = c.take_asks();
    assert!(asks[0]["params"].get("mode").is_none(), "{asks:?}");
}

#[tokio::test]
async fn asks_made_together_go_out_together() {
    for version in ERAS {
        let c = client(version, ALL_CAPS(), Some(answering())).await;
        let r = c.call_tool("all_at_once", json!({})).await.unwrap();
        assert_eq!(
            r.text(),
            "Ada|hi there|test-model|file:///work",
            "{version}"
        );
        let asks = c.take_asks();
        let mut methods: Vec<&str> = asks.iter().map(|a| a["method"].as_str().unwrap()).collect();
        methods.sort();
        assert_eq!(
            methods,
            ["elicitation/create", "roots/list", "sampling/createMessage"]
        );
        let sampling = &asks
            .iter()
            .find(|a| a["method"] == "sampling/createMessage")
            .unwrap()["params"];
        assert_eq!(sampling["maxTokens"], 20);
        assert_eq!(sampling["systemPrompt"], "Be brief");
        assert_eq!(
            sampling["modelPreferences"]["hints"],
            json!([{"name": "small"}])
        );
        assert_eq!(
            sampling["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Say hi"}}])
        );
    }
}

#[tokio::test]
async fn keys_are_stable_across_rounds_whatever_the_poll_order() {
    // `join!` may poll its futures in any order; the keys come from the order they were made.
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let call = json!({"name": "all_at_once", "arguments": {}});
    let r1 = c.request("tools/call", call.clone()).await.unwrap();
    let mut keys: Vec<&String> = r1["inputRequests"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["roots-0", "sample-0", "who"]);
    assert_eq!(r1["inputRequests"]["who"]["method"], "elicitation/create");
    // Answering one of three: the other two are asked again, under the same keys.
    let mut retry = call.clone();
    retry["inputResponses"] = json!({"roots-0": {"roots": [{"uri": "file:///r"}]}});
    retry["requestState"] = r1["requestState"].clone();
    let r2 = c.request("tools/call", retry).await.unwrap();
    let mut keys: Vec<&String> = r2["inputRequests"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["sample-0", "who"]);
    let mut retry = call;
    retry["inputResponses"] = json!({
        "who": {"action": "accept", "content": {"name": "Bo"}},
        "sample-0": {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}
    });
    retry["requestState"] = r2["requestState"].clone();
    let r3 = c.request("tools/call", retry).await.unwrap();
    assert_eq!(r3["content"][0]["text"], "Bo|yo|m|file:///r");
}

/// Params serde_json cannot read as a value (`"pad":1e400`) used to bind a state to `null`:
/// one issued for `two_steps` then opened for any other request padded the same way, with its
/// answers and memo. A state is now bound to what the request acts on, as decoded once (the
/// tool's name and arguments): a member the method does not have is skipped unread, and the
/// state opens for that tool with those arguments only.
#[tokio::test]
async fn unreadable_params_get_no_request_state() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPS(),
    });
    let padded = |extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{meta},"name":"two_steps","arguments":{{}},"pad":1e400{extra}}}}}"#
        )
    };
    let r = c.send_raw(&padded("")).await.unwrap();
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let state = r["result"]["requestState"].as_str().unwrap().to_owned();
    // Opened for other arguments (padded the same way), the state is refused.
    let other = padded(&format!(r#","requestState":"{state}""#))
        .replace(r#""arguments":{}"#, r#""arguments":{"other":1}"#);
    let r = c.send_raw(&other).await.unwrap();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Without the padding the same call asks its question, on the same connection.
    let r = c
        .request("tools/call", json!({"name": "two_steps", "arguments": {}}))
        .await
        .unwrap();
    assert_eq!(r["resultType"], "input_required", "{r}");
}

#[tokio::test]
async fn stateless_rounds_carry_earlier_answers_in_the_sealed_state() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let call = json!({"name": "two_steps", "arguments": {}});
    // Round 1: the first question.
    let r1 = c.request("tools/call", call.clone()).await.unwrap();
    assert_eq!(r1["resultType"], "input_required");
    assert!(
        r1.get("ttlMs").is_none() && r1.get("cacheScope").is_none(),
        "{r1}"
    );
    let keys: Vec<&String> = r1["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["elicit-0"]);
    let state1 = r1["requestState"].as_str().unwrap().to_owned();
    // Round 2: answered; the second question, with a new state.
    let mut retry = call.clone();
    retry["inputResponses"] =
        json!({"elicit-0": {"action": "accept", "content": {"name": "Ada"}}, "junk": 1});
    retry["requestState"] = json!(state1);
    let r2 = c.request("tools/call", retry).await.unwrap();
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    let keys: Vec<&String> = r2["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["elicit-1"]);
    let state2 = r2["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state1, state2);
    // Round 3: only the new answer is sent; the first comes back from the state.
    let mut retry = call.clone();
    retry["inputResponses"] =
        json!({"elicit-1": {"action": "accept", "content": {"colour": "teal"}}});
    retry["requestState"] = json!(state2);
    let r3 = c.request("tools/call", retry.clone()).await.unwrap();
    assert_eq!(r3["resultType"], "complete");
    assert_eq!(
        r3["content"][0]["text"],
        "Some(\"Ada\") likes Some(\"teal\")"
    );
    // A state altered by one character is refused.
    let mut tampered = retry.clone();
    let mut bytes = state2.into_bytes();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    tampered["requestState"] = json!(String::from_utf8(bytes).unwrap());
    let e = c.request("tools/call", tampered).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    // So is a state presented with other arguments, or to another tool.
    let mut other = retry.clone();
    other["arguments"] = json!({"extra": true});
    let e = c.request("tools/call", other).await.unwrap_err();
    assert!(e.message.contains("different request"), "{e}");
    let mut other = retry;
    other["name"] = json!("order");
    assert!(c.request("tools/call", other).await.is_err());
}

/// Adds; given no context, it cannot ask anything.
#[tool]
async fn plain_sum(a: i64, b: i64) -> i64 {
    a + b
}

/// A 2026-07-28 call of a tool that cannot ask opens no round of its own, but state or
/// answers sent with it are read and checked as for any other tool.
#[tokio::test]
async fn a_tool_without_context_still_has_what_it_is_sent_checked() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let sum = json!({"name": "plain_sum", "arguments": {"a": 2, "b": 3}});
    let r = c.request("tools/call", sum.clone()).await.unwrap();
    assert_eq!(r["resultType"], "complete", "{r}");
    assert_eq!(r["structuredContent"]["result"], 5, "{r}");
    // A state sealed for another request is refused, whatever the tool.
    let asked = c
        .request("tools/call", json!({"name": "two_steps", "arguments": {}}))
        .await
        .unwrap();
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let mut stolen = sum.clone();
    stolen["requestState"] = json!(state);
    let e = c.request("tools/call", stolen).await.unwrap_err();
    assert!(e.message.contains("different request"), "{e}");
    for (member, value) in [
        ("requestState", json!("not a sealed state")),
        ("requestState", json!(5)),
        ("inputResponses", json!([1])),
    ] {
        let mut sent = sum.clone();
        sent[member] = value;
        let e = c.request("tools/call", sent.clone()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{sent}: {e}");
    }
    // Answers with no state (a client answering before it is asked) change nothing here.
    let mut answered = sum;
    answered["inputResponses"] = json!({"elicit-0": {"action": "accept", "content": {}}});
    let r = c.request("tools/call", answered).await.unwrap();
    assert_eq!(r["structuredContent"]["result"], 5, "{r}");
}

/// Greets; given no context, it cannot ask anything.
#[prompt]
async fn plain_greeting(name: String) -> String {
    format!("Hello, {name}")
}

/// A note; given no context, it cannot ask anything.
#[resource("note://{id}")]
async fn plain_note(id: String) -> String {
    format!("note {id}")
}

/// The same for prompts and resources whose fns take no context.
#[tokio::test]
async fn prompts_and_resources_without_context_still_have_what_they_are_sent_checked() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let asked = c
        .request("tools/call", json!({"name": "two_steps", "arguments": {}}))
        .await
        .unwrap();
    let stolen = asked["requestState"].as_str().unwrap().to_owned();
    for (method, params, text) in [
        (
            "prompts/get",
            json!({"name": "plain_greeting", "arguments": {"name": "Ada"}}),
            "/messages/0/content/text",
        ),
        (
            "resources/read",
            json!({"uri": "note://7"}),
            "/contents/0/text",
        ),
    ] {
        let r = c.request(method, params.clone()).await.unwrap();
        assert_eq!(r["resultType"], "complete", "{method}: {r}");
        assert!(r.pointer(text).unwrap().is_string(), "{method}: {r}");
        for state in [json!(stolen), json!("not a sealed state"), json!(5)] {
            let mut sent = params.clone();
            sent["requestState"] = state;
            let e = c.request(method, sent.clone()).await.unwrap_err();
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{method} {sent}: {e}");
        }
    }
}

#[tokio::test]
async fn a_wrong_key_is_asked_again_and_a_malformed_answer_is_an_error() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let r = c
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "inputResponses": {"wrong_key": {"action": "accept"}}}),
        )
        .await
        .unwrap();
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert!(r["inputRequests"]["elicit-0"].is_object(), "{r}");
    let first_round = r;
    // An answer given before the question was asked is taken (extra keys are ignored).
    let answer = json!({"elicit-0": {"action": "accept", "content": {"name": "Eve"}}, "extra": 1});
    let done = c
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "inputResponses": answer}),
        )
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "Hello, Eve!", "{done}");
    let r = first_round;
    // A malformed answer is an error.
    let e = c
        .request(
            "tools/call",
            json!({"name": "greet", "arguments": {}, "requestState": r["requestState"],
                   "inputResponses": {"elicit-0": {"not": "an elicit result"}}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("malformed"), "{e}");
    let e = c
        .request(
            "tools/call",
            json!({"name": "greet", "inputResponses": [1]}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn sealed_answers_cannot_be_changed_by_a_retry() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let call = json!({"name": "two_steps", "arguments": {}});
    let r1 = c.request("tools/call", call.clone()).await.unwrap();
    let mut retry = call.clone();
    retry["inputResponses"] = json!({"elicit-0": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = r1["requestState"].clone();
    let r2 = c.request("tools/call", retry).await.unwrap();
    // The last round tries to replace the first answer as well: the sealed one stands.
    let mut retry = call;
    retry["inputResponses"] = json!({
        "elicit-0": {"action": "accept", "content": {"name": "Mallory"}},
        "elicit-1": {"action": "accept", "content": {"colour": "red"}}
    });
    retry["requestState"] = r2["requestState"].clone();
    let r3 = c.request("tools/call", retry).await.unwrap();
    assert_eq!(
        r3["content"][0]["text"],
        "Some(\"Ada\") likes Some(\"red\")"
    );
}

/// Asks from a task of its own, then waits for it.
#[tool]
async fn ask_in_a_task(ctx: Context) -> Result<String, McpError> {
    let task = tokio::spawn({
        let ctx = ctx.clone();
        async move {
            ctx.elicit::<Name>("Name?")
                .await
                .map(|a| a.accepted().map(|n| n.name))
        }
    });
    let _ = ASKED_IN_TASK.set(());
    let name = task
        .await
        .map_err(|e| McpError::internal(e.to_string()))??;
    Ok(format!("{name:?}"))
}

static ASKED_IN_TASK: std::sync::OnceLock<()> = std::sync::OnceLock::new();

#[tokio::test]
async fn a_stopped_round_ends_asks_awaited_elsewhere() {
    let server = Server::builder().max_in_flight(1).build().unwrap();
    let c = TestClient::connect_answering(server, ProtocolVersion::V2026_07_28, ALL_CAPS(), None)
        .await
        .unwrap();
    // With one slot, a second call only works if the first one's context was released: the
    // spawned ask must not hold it forever.
    for _ in 0..3 {
        let r = c.call_tool("ask_in_a_task", json!({})).await.unwrap();
        assert_eq!(r.raw["resultType"], "input_required", "{:?}", r.raw);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ASKED_IN_TASK.get().is_some());
}

#[tokio::test]
async fn prompts_can_ask_too() {
    for version in ERAS {
        let c = client(version, ALL_CAPS(), Some(answering())).await;
        let r = c
            .request("prompts/get", json!({"name": "with_context"}))
            .await
            .unwrap();
        assert_eq!(
            r["messages"][0]["content"]["text"], "Context: Ada",
            "{version}"
        );
    }
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    let r = c
        .request("prompts/get", json!({"name": "with_context"}))
        .await
        .unwrap();
    assert_eq!(r["resultType"], "input_required");
}

#[tokio::test]
async fn a_form_that_is_not_flat_is_an_error_naming_the_field() {
    let c = client(ProtocolVersion::V2025_11_25, ALL_CAPS(), Some(answering())).await;
    let e = c.call_tool("bad_form", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(e.message.contains("field `inner`"), "{e}");
    assert!(c.take_asks().is_empty());
}

#[tokio::test]
async fn client_errors_reach_the_tool_and_mcp_errors_are_protocol_errors() {
    let answer: Answer = Arc::new(|_: &str, _: &Value| {
        Err(McpError::new(
            ErrorCode(-1),
            "User rejected sampling request",
        ))
    });
    let c = client(ProtocolVersion::V2025_11_25, ALL_CAPS(), Some(answer)).await;
    let e = c.call_tool("sample_or_fail", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode(-1));
    assert_eq!(e.message, "User rejected sampling request");
    // Other error types stay tool errors the model sees.
    let r = c.call_tool("string_error", json!({})).await.unwrap();
    assert!(r.is_error());
    assert_eq!(r.text(), "plain failure");
}

#[tokio::test]
async fn an_unanswered_ask_times_out_and_is_withdrawn() {
    let server = Server::builder()
        .client_request_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    // A client that declares sampling but never answers.
    let c = TestClient::connect_answering(server, ProtocolVersion::V2025_11_25, ALL_CAPS(), None)
        .await
        .unwrap();
    let e = c.call_tool("sample_or_fail", json!({})).await.unwrap_err();
    assert!(
        e.message
            .contains("did not answer `sampling/createMessage`"),
        "{e}"
    );
    let asked = c.take_asks();
    let cancelled: Vec<Value> = c
        .take_notifications()
        .into_iter()
        .filter(|n| n["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0]["params"]["requestId"], asked[0]["id"]);
    // A late answer to the withdrawn request is ignored.
    let late = json!({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {}});
    assert!(c.send_raw(&late.to_string()).await.is_none());
}

#[tokio::test]
async fn the_request_state_key_can_be_shared_by_replicas() {
    let build = || {
        Server::builder()
            .request_state_key(b"0123456789abcdef0123456789abcdef")
            .build()
            .unwrap()
    };
    let one =
        TestClient::connect_answering(build(), ProtocolVersion::V2026_07_28, ALL_CAPS(), None)
            .await
            .unwrap();
    let two =
        TestClient::connect_answering(build(), ProtocolVersion::V2026_07_28, ALL_CAPS(), None)
            .await
            .unwrap();
    let call = json!({"name": "two_steps", "arguments": {}});
    let r1 = one.request("tools/call", call.clone()).await.unwrap();
    let mut retry = call;
    retry["inputResponses"] = json!({"elicit-0": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = r1["requestState"].clone();
    // The second replica opens the first one's state.
    let r2 = two.request("tools/call", retry.clone()).await.unwrap();
    assert_eq!(r2["resultType"], "input_required");
    assert!(r2["inputRequests"]["elicit-1"].is_object());
    // A server with its own random key does not.
    let other = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), None).await;
    assert!(other.request("tools/call", retry).await.is_err());
}

#[test]
fn a_short_request_state_key_is_refused() {
    let e = Server::builder()
        .request_state_key(b"too short")
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            mcp_runtime::BuildError::WeakRequestStateKey { index: 0, len: 9 }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("at least 32"));
}

/// Sends the user to a page named by an elicitation id, then reports it complete.
#[tool]
async fn connect_account(ctx: Context) -> Result<String, McpError> {
    // The same id on every 2026-07-28 round, so the question stays the same.
    let id: String = ctx.remember("connect", mcp_runtime::ask::new_elicitation_id);
    let url = format!("https://example.com/connect?elicitation={id}");
    let action = ctx
        .elicit_url_with_id(id.clone(), "Connect your account", url)
        .await?;
    let completed = ctx.complete_elicitation(&id);
    Ok(format!("{action:?} {id} {completed}"))
}

#[tokio::test]
async fn a_url_elicitation_can_be_named_and_reported_complete() {
    let answer: Answer = Arc::new(|_: &str, _: &Value| Ok(json!({"action": "accept"})));
    for version in ERAS {
        let c = client(version, ALL_CAPS(), Some(answer.clone())).await;
        let text = c
            .call_tool("connect_account", json!({}))
            .await
            .unwrap()
            .text();
        let parts: Vec<&str> = text.split(" ").collect();
        assert_eq!(parts.len(), 3, "{version}: {text}");
        let (id, completed) = (parts[1], parts[2]);
        assert_eq!(id.len(), 32, "{text}");
        let asks = c.take_asks();
        assert!(asks[0]["params"]["url"].as_str().unwrap().ends_with(id));
        let done: Vec<Value> = c
            .take_notifications()
            .into_iter()
            .filter(|n| n["method"] == "notifications/elicitation/complete")
            .collect();
        if version == ProtocolVersion::V2025_11_25 {
            assert_eq!(asks[0]["params"]["elicitationId"], id);
            assert_eq!(completed, "true");
            assert_eq!(
                done,
                [
                    json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": id}})
                ]
            );
        } else {
            assert_eq!(
                completed, "false",
                "2026-07-28 has no completion notification"
            );
            assert!(done.is_empty());
        }
    }
}

/// Asks a question that differs on every run (a bug: it should use ctx.remember).
#[tool]
async fn restless(ctx: Context) -> Result<String, McpError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let answer = ctx
        .elicit::<Name>(format!("Name? (asked at {now})"))
        .await?;
    Ok(format!("{:?}", answer.accepted().map(|n| n.name)))
}

#[tokio::test]
async fn a_question_that_changes_between_rounds_is_an_error_not_a_loop() {
    let c = client(ProtocolVersion::V2026_07_28, ALL_CAPS(), Some(answering())).await;
    let e = c.call_tool("restless", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert!(
        e.message.contains("changed between rounds") && e.message.contains("ctx.remember"),
        "{e}"
    );
    assert_eq!(c.take_asks().len(), 1, "asked once, then the error");
}

static HANDLE: std::sync::Mutex<Option<mcp_runtime::ask::ElicitationHandle>> =
    std::sync::Mutex::new(None);

/// Starts a URL elicitation and leaves a handle to report it complete later.
#[tool]
async fn start_link(ctx: Context) -> Result<String, McpError> {
    let id: String = ctx.remember("id", mcp_runtime::ask::new_elicitation_id);
    *HANDLE.lock().unwrap() = ctx.elicitation_handle(id.clone());
    let action = ctx
        .elicit_url_with_id(id, "Connect", "https://example.com/c")
        .await?;
    Ok(format!("{action:?}"))
}

#[tokio::test]
async fn an_elicitation_handle_reports_completion_after_the_tool_returned() {
    let answer: Answer = Arc::new(|_: &str, _: &Value| Ok(json!({"action": "accept"})));
    let c = client(ProtocolVersion::V2025_11_25, ALL_CAPS(), Some(answer)).await;
    assert_eq!(
        c.call_tool("start_link", json!({})).await.unwrap().text(),
        "Accept"
    );
    let id = c.take_asks()[0]["params"]["elicitationId"].clone();
    let handle = HANDLE
        .lock()
        .unwrap()
        .take()
        .expect("a 2025-11-25 session has handles");
    assert!(c.take_notifications().is_empty());
    assert!(handle.complete());
    let notes = c.take_notifications();
    assert_eq!(
        notes,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": id}})
        ]
    );
    // Once the session is gone, there is no one to tell.
    drop(c);
    assert!(!handle.complete());
}
