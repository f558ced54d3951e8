//! The floor: the least any JSON-RPC server built on serde_json does for a `tools/call add`.
//!
//! The raw responders of the benches read no JSON (a byte scan finds the id, the answer is a
//! fixed line). A server that reads the message at all does at least what [`answer`] does: one
//! borrowing decode of the envelope (`jsonrpc`, `id`, `method`, `params` kept as raw text), one
//! of the call's params and arguments, the sum, and one encode of the result with derived
//! `Serialize` impls into a reused buffer. No MCP work: no checks beyond what the types demand,
//! no era, no registry, no allocation but the result's text. Its CPU per call beside the raw
//! responder's, in the same run, is the lowest ratio a serde_json server can show.

use std::borrow::Cow;
use std::io::Write;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Response<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallResult {
    content: [Text; 1],
    structured_content: Sum,
}

#[derive(Serialize)]
struct Text {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

#[derive(Serialize)]
struct Sum {
    result: i64,
}

/// An empty result, for any request that is not `tools/call add` (the handshake's).
#[derive(Serialize)]
struct Empty {}

/// Writes `message`'s answer to `out`; false when there is none to send (a notification, or a
/// message that is not JSON-RPC: the floor does not spend on errors) or the write failed.
pub fn answer(message: &[u8], out: &mut impl Write) -> bool {
    let Ok(m) = serde_json::from_slice::<Message<'_>>(message) else {
        return false;
    };
    let Some(id) = m.id.filter(|_| m.jsonrpc == "2.0") else {
        return false;
    };
    let sum = (m.method == "tools/call")
        .then_some(m.params)
        .flatten()
        .and_then(|p| serde_json::from_str::<Call<'_>>(p.get()).ok())
        .filter(|c| c.name == "add")
        .and_then(|c| serde_json::from_str::<Add>(c.arguments?.get()).ok())
        .map(|add| add.a + add.b);
    let written = match sum {
        Some(sum) => serde_json::to_writer(
            &mut *out,
            &Response {
                jsonrpc: "2.0",
                id,
                result: CallResult {
                    content: [Text {
                        kind: "text",
                        text: sum.to_string(),
                    }],
                    structured_content: Sum { result: sum },
                },
            },
        ),
        None => serde_json::to_writer(
            &mut *out,
            &Response {
                jsonrpc: "2.0",
                id,
                result: Empty {},
            },
        ),
    };
    written.is_ok()
}
