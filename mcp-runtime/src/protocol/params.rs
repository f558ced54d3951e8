//! A request's params, decoded once and by method: each method's members typed as its handler
//! needs them, and `_meta` read in the same pass. Everything that looks at a request after the
//! envelope (era resolution, the 2026-07-28 header checks, scope checks, tracing, middleware,
//! the dispatcher and the handlers) reads this value; none of them parses the params text
//! again. A check and the action it guards therefore see the same name, URI or task id: a
//! second parser over the same bytes, accepting what the first refused, is how a scoped tool
//! once ran for a token without its scope.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod members;

pub(crate) use members::*;

use crate::protocol::jsonrpc::strip_position;
use crate::protocol::{McpError, RequestId};

/// One decoded request: its id, method and params.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) id: RequestId,
    /// A method the runtime knows is named by a static string (no allocation per request).
    pub(crate) method: Cow<'static, str>,
    pub(crate) params: Params,
}

/// The params of one request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Params {
    /// `_meta`, when the params carry one (boxed: most session-era requests have none).
    pub(crate) meta: Option<Box<RequestMeta>>,
    /// The method's own members.
    pub(crate) body: Body,
}

/// Each method's members. Unknown members are skipped; a member of the wrong type, a missing
/// required one, or a repeated one makes the params [`Body::Invalid`].
#[derive(Clone, Debug, Default)]
pub(crate) enum Body {
    /// No params, or a method whose params the runtime does not read (`ping`,
    /// `server/discover`, an unknown method).
    #[default]
    None,
    /// Params that do not fit the method: the request names nothing, and the handler the
    /// method routes to answers with this error when it takes its params (an unserved method
    /// is -32601 first).
    Invalid(McpError),
    /// `initialize`.
    Initialize(InitializeParams),
    /// `logging/setLevel`.
    SetLevel(SetLevelParams),
    /// The list methods (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`, `skills/list`, `tasks/list`).
    List(ListParams),
    /// `tools/call`.
    CallTool(CallToolParams),
    /// `prompts/get`.
    GetPrompt(GetPromptParams),
    /// `resources/read`, `resources/subscribe`, `resources/unsubscribe`, `skills/get`.
    Uri(UriParams),
    /// `resources/directory/read`.
    Directory(DirectoryParams),
    /// `completion/complete`.
    Complete(CompleteParams),
    /// `subscriptions/listen`.
    Listen(ListenParams),
    /// `tasks/get`, `tasks/cancel`, `tasks/result`.
    Task(TaskParams),
    /// `tasks/update`.
    UpdateTask(UpdateTaskParams),
}

/// Decodes `params` (the raw member, or `None` when absent) of a request for `method`.
///
/// `Err` is what serde_json cannot read at all (a number out of range, nesting past its depth
/// limit, invalid text): the whole message is a parse error. Params that read but do not fit
/// the method come back as [`Body::Invalid`], with their `_meta` when it reads on its own (to
/// word the refusal for the request's era): such a request names nothing, so no check finds
/// anything to allow, and its handler refuses it when taking its params.
pub(crate) fn decode(method: &str, params: Option<&str>) -> Result<Params, serde_json::Error> {
    match METHODS.iter().find(|(name, _)| *name == method) {
        Some((_, decoder)) => decoder(method, params),
        None => ignored(method, params),
    }
}

/// How one method's params are decoded.
type Decoder = fn(&str, Option<&str>) -> Result<Params, serde_json::Error>;

/// The methods the runtime serves, each with its decoder: one table for the decode and for
/// the static names requests keep ([`method_name`]).
const METHODS: [(&str, Decoder); 23] = [
    ("initialize", |m, p| typed(m, p, false, Body::Initialize)),
    ("ping", ignored),
    ("server/discover", ignored),
    ("logging/setLevel", |m, p| {
        typed(m, p, false, Body::SetLevel)
    }),
    ("tools/list", |m, p| typed(m, p, true, Body::List)),
    ("prompts/list", |m, p| typed(m, p, true, Body::List)),
    ("resources/list", |m, p| typed(m, p, true, Body::List)),
    ("resources/templates/list", |m, p| {
        typed(m, p, true, Body::List)
    }),
    ("skills/list", |m, p| typed(m, p, true, Body::List)),
    ("tasks/list", |m, p| typed(m, p, true, Body::List)),
    ("tools/call", |m, p| typed(m, p, false, Body::CallTool)),
    ("prompts/get", |m, p| typed(m, p, false, Body::GetPrompt)),
    ("resources/read", |m, p| typed(m, p, false, Body::Uri)),
    ("resources/subscribe", |m, p| typed(m, p, false, Body::Uri)),
    ("resources/unsubscribe", |m, p| {
        typed(m, p, false, Body::Uri)
    }),
    ("skills/get", |m, p| typed(m, p, false, Body::Uri)),
    ("resources/directory/read", |m, p| {
        typed(m, p, false, Body::Directory)
    }),
    ("completion/complete", |m, p| {
        typed(m, p, false, Body::Complete)
    }),
    ("subscriptions/listen", |m, p| {
        typed(m, p, false, Body::Listen)
    }),
    ("tasks/get", |m, p| typed(m, p, false, Body::Task)),
    ("tasks/cancel", |m, p| typed(m, p, false, Body::Task)),
    ("tasks/result", |m, p| typed(m, p, false, Body::Task)),
    ("tasks/update", |m, p| typed(m, p, false, Body::UpdateTask)),
];

/// `method` as the request keeps it: a static string for the methods the runtime serves.
pub(crate) fn method_name(method: Cow<'_, str>) -> Cow<'static, str> {
    match METHODS.iter().find(|(name, _)| **name == *method) {
        Some((name, _)) => Cow::Borrowed(name),
        None => Cow::Owned(method.into_owned()),
    }
}

/// A method's params struct, which reads `_meta` with its own members (one pass; no
/// `#[serde(flatten)]`, which would buffer every member through another parser).
trait Method: DeserializeOwned {
    fn take_meta(&mut self) -> Option<Box<RequestMeta>>;
}

macro_rules! methods {
    ($($t:ty),*) => {$(
        impl Method for $t {
            fn take_meta(&mut self) -> Option<Box<RequestMeta>> {
                self.meta.take()
            }
        }
    )*};
}

methods!(
    InitializeParams,
    SetLevelParams,
    ListParams,
    CallToolParams,
    GetPromptParams,
    UriParams,
    DirectoryParams,
    CompleteParams,
    ListenParams,
    TaskParams,
    UpdateTaskParams
);

/// Params of a method whose members nobody reads: only `_meta` (array params have none).
fn ignored(method: &str, params: Option<&str>) -> Result<Params, serde_json::Error> {
    let Some(text) = params.filter(|t| is_object(t)) else {
        return Ok(Params::default());
    };
    match serde_json::from_str::<MetaOnly>(text) {
        Ok(p) => Ok(Params {
            meta: p.meta,
            body: Body::None,
        }),
        Err(e) if unreadable(&e) => Err(e),
        Err(e) => Ok(invalid(method, &e, None)),
    }
}

/// `_meta` alone.
#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta")]
    meta: Option<Box<RequestMeta>>,
}

fn typed<T: Method>(
    method: &str,
    params: Option<&str>,
    optional: bool,
    wrap: fn(T) -> Body,
) -> Result<Params, serde_json::Error> {
    let text = match params {
        None if optional => return Ok(Params::default()),
        None => "{}",
        Some(text) => text,
    };
    // MCP params are objects; serde would read a struct from an array by position.
    if !is_object(text) {
        return Ok(Params {
            meta: None,
            body: Body::Invalid(McpError::invalid_params(format!(
                "Invalid params for {method}: params must be an object"
            ))),
        });
    }
    match serde_json::from_str::<T>(text) {
        Ok(mut p) => Ok(Params {
            meta: p.take_meta(),
            body: wrap(p),
        }),
        Err(e) if unreadable(&e) => Err(e),
        Err(e) => Ok(invalid(method, &e, Some(text))),
    }
}

fn is_object(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// What serde_json cannot read at all, as opposed to a value of the wrong shape.
fn unreadable(e: &serde_json::Error) -> bool {
    e.is_syntax() || e.is_eof()
}

/// Params that do not fit `method`. Their `_meta` (when it reads alone) is kept to decide the
/// era the refusal is worded for; nothing else reads them.
fn invalid(method: &str, e: &serde_json::Error, text: Option<&str>) -> Params {
    let meta = text
        .and_then(|t| serde_json::from_str::<MetaOnly>(t).ok())
        .and_then(|m| m.meta);
    Params {
        meta,
        body: Body::Invalid(McpError::invalid_params(format!(
            "Invalid params for {method}: {}",
            strip_position(e)
        ))),
    }
}

impl Request {
    /// What the request uses, as `(lookup, name)` pairs for `Registry::scopes_for`: the tool,
    /// prompt or resource it calls or reads, and also the prompt or template a completion is
    /// for, and the resources a subscription (or a listen's `resourceSubscriptions`) watches.
    /// The scope checks read it, and the dispatcher acts on the same members.
    pub(crate) fn targets(&self) -> Vec<(&'static str, &str)> {
        match (&*self.method, &self.params.body) {
            ("tools/call", Body::CallTool(p)) => vec![("tools/call", &p.name)],
            ("prompts/get", Body::GetPrompt(p)) => vec![("prompts/get", &p.name)],
            ("resources/read", Body::Uri(p)) => vec![("resources/read", &p.uri)],
            // A subscription hears about the URIs below the one it names, too.
            ("resources/subscribe", Body::Uri(p)) => vec![("subscribe", &p.uri)],
            ("completion/complete", Body::Complete(p)) => match &p.reference {
                Reference::Prompt { name } => vec![("prompts/get", name)],
                Reference::Resource { uri } => vec![("template", uri)],
            },
            ("subscriptions/listen", Body::Listen(p)) => p
                .notifications
                .resource_subscriptions
                .iter()
                .flatten()
                .map(|uri| ("subscribe", uri.as_str()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Everything that names what the request acts on: its [`targets`](Request::targets),
    /// URI and task id.
    pub(crate) fn names(&self) -> (Vec<(&'static str, &str)>, Option<&str>, Option<&str>) {
        (self.targets(), self.params.uri(), self.params.task_id())
    }
}

impl Params {
    /// The params as JSON, as the server read them: the method's members and the `_meta`
    /// members the runtime reads (`null` for no params).
    pub(crate) fn to_json(&self) -> Value {
        let body = match &self.body {
            Body::None | Body::Invalid(_) => Ok(Value::Object(Map::new())),
            Body::Initialize(p) => serde_json::to_value(p),
            Body::SetLevel(p) => serde_json::to_value(p),
            Body::List(p) => serde_json::to_value(p),
            Body::CallTool(p) => serde_json::to_value(p),
            Body::GetPrompt(p) => serde_json::to_value(p),
            Body::Uri(p) => serde_json::to_value(p),
            Body::Directory(p) => serde_json::to_value(p),
            Body::Complete(p) => serde_json::to_value(p),
            Body::Listen(p) => serde_json::to_value(p),
            Body::Task(p) => serde_json::to_value(p),
            Body::UpdateTask(p) => serde_json::to_value(p),
        };
        let mut body = match body {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        if let Some(meta) = &self.meta {
            body.insert(
                "_meta".into(),
                serde_json::to_value(meta).unwrap_or(Value::Null),
            );
        }
        if body.is_empty() && matches!(self.body, Body::None) {
            return Value::Null;
        }
        Value::Object(body)
    }

    /// Whether `_meta` names a protocol version: a stateless-era (2026-07-28) request.
    pub(crate) fn is_stateless(&self) -> bool {
        self.meta.as_deref().is_some_and(RequestMeta::is_stateless)
    }

    /// The tool or prompt a `tools/call` or `prompts/get` names.
    pub(crate) fn name(&self) -> Option<&str> {
        match &self.body {
            Body::CallTool(p) => Some(&p.name),
            Body::GetPrompt(p) => Some(&p.name),
            _ => None,
        }
    }

    /// The resource a `resources/read`, `resources/subscribe`, `resources/unsubscribe`,
    /// `skills/get` or `resources/directory/read` names.
    pub(crate) fn uri(&self) -> Option<&str> {
        match &self.body {
            Body::Uri(p) => Some(&p.uri),
            Body::Directory(p) => Some(&p.uri),
            _ => None,
        }
    }

    /// The task a `tasks/*` request names.
    pub(crate) fn task_id(&self) -> Option<&str> {
        match &self.body {
            Body::Task(p) => Some(&p.task_id),
            Body::UpdateTask(p) => Some(&p.task_id),
            _ => None,
        }
    }

    /// What a retry of a 2026-07-28 request that may ask the client carries:
    /// `(inputResponses, requestState)`.
    pub(crate) fn round(&self) -> (Option<&Value>, Option<&Value>) {
        match &self.body {
            Body::CallTool(p) => (p.input_responses.as_ref(), p.request_state.as_ref()),
            Body::GetPrompt(p) => (p.input_responses.as_ref(), p.request_state.as_ref()),
            Body::Uri(p) => (p.input_responses.as_ref(), p.request_state.as_ref()),
            _ => (None, None),
        }
    }

    /// The members a 2026-07-28 `requestState` is bound to, as JSON text: what the handler
    /// acts on (the name or URI, arguments, task), never `_meta`, `inputResponses` or
    /// `requestState`. Built without parsing anything (the binding reads it only when a
    /// round needs its digest); `None` for the methods that have no rounds.
    pub(crate) fn bound(&self) -> Option<String> {
        // Written into one buffer sized for what it copies (on every 2026-07-28 call).
        fn member(out: &mut Vec<u8>, key: &str, value: &impl Serialize) {
            out.push(if out.is_empty() { b'{' } else { b',' });
            out.push(b'"');
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\":");
            serde_json::to_writer(&mut *out, value).expect("values serialize");
        }
        let mut out = Vec::new();
        match &self.body {
            Body::CallTool(p) => {
                let arguments = p.arguments.as_ref().map(|a| a.get());
                out.reserve(p.name.len() + arguments.map_or(0, str::len) + 32);
                member(&mut out, "name", &p.name);
                if let Some(arguments) = arguments {
                    out.extend_from_slice(b",\"arguments\":");
                    out.extend_from_slice(arguments.as_bytes());
                }
                if let Some(task) = &p.task {
                    member(&mut out, "task", task);
                }
            }
            Body::GetPrompt(p) => {
                out.reserve(p.name.len() + 64);
                member(&mut out, "name", &p.name);
                if let Some(arguments) = &p.arguments {
                    member(&mut out, "arguments", arguments);
                }
            }
            Body::Uri(p) => {
                out.reserve(p.uri.len() + 16);
                member(&mut out, "uri", &p.uri);
            }
            _ => return None,
        }
        out.push(b'}');
        Some(String::from_utf8(out).expect("JSON text is UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sealed `requestState` is bound to the canonical JSON of these members (their digest
    /// may not change between versions: a fleet mid-upgrade opens states the other version
    /// sealed); a tool's arguments are passed on as sent.
    #[test]
    fn the_bound_members_are_what_the_handler_acts_on() {
        let bound = |method, params| decode(method, Some(params)).unwrap().bound();
        assert_eq!(
            bound(
                "tools/call",
                r#"{"name":"a\"b","arguments":{"x": 1, "y":[1,2]},"task":{"ttl": 5},"_meta":{}}"#
            )
            .unwrap(),
            r#"{"name":"a\"b","arguments":{"x": 1, "y":[1,2]},"task":{"ttl":5}}"#
        );
        assert_eq!(
            bound("tools/call", r#"{"name":"add"}"#).unwrap(),
            r#"{"name":"add"}"#
        );
        // A prompt's arguments are a map (written in its own order): compared as a value.
        let prompt = bound(
            "prompts/get",
            r#"{"name":"p","arguments":{"b":"2", "a":"1"},"requestState":"s"}"#,
        )
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&prompt).unwrap(),
            serde_json::json!({"name": "p", "arguments": {"a": "1", "b": "2"}})
        );
        assert_eq!(
            bound("resources/read", r#"{"uri":"x://y/é"}"#).unwrap(),
            r#"{"uri":"x://y/é"}"#
        );
        assert_eq!(bound("tools/list", "{}"), None);
    }

    #[test]
    fn each_method_reads_its_own_members() {
        let p = decode(
            "tools/call",
            Some(r#"{"name":"add","arguments":{"a":1},"x":1e400}"#),
        );
        // An unknown member is skipped unread, whatever it holds.
        let p = p.expect("1e400 in an unknown member is skipped");
        assert_eq!(p.name(), Some("add"));
        let p = decode("prompts/get", Some(r#"{"name":"p","arguments":{"a":"b"}}"#)).unwrap();
        assert_eq!(p.name(), Some("p"));
        let p = decode("resources/subscribe", Some(r#"{"uri":"x://y"}"#)).unwrap();
        assert_eq!(p.uri(), Some("x://y"));
        let p = decode("tasks/get", Some(r#"{"taskId":"t"}"#)).unwrap();
        assert_eq!(p.task_id(), Some("t"));
        let p = decode("tools/list", None).unwrap();
        assert!(matches!(p.body, Body::None));
    }

    #[test]
    fn params_that_do_not_fit_are_invalid_and_keep_no_target() {
        for (method, params) in [
            ("tools/call", r#"{"name":5}"#),
            ("tools/call", r#"{"arguments":{}}"#),
            ("tools/call", r#"{"name":"a","name":"b"}"#),
            ("tools/call", r#"["add",{}]"#),
            (
                "prompts/get",
                r#"{"name":"p","arguments":{"a":"b"},"arguments":{}}"#,
            ),
            ("completion/complete", r#"{"ref":{"type":"ref/prompt"}}"#),
            ("subscriptions/listen", r#"{"notifications":5}"#),
        ] {
            let p = decode(method, Some(params)).expect(params);
            assert!(matches!(p.body, Body::Invalid(_)), "{method} {params}");
            assert_eq!(p.name(), None);
        }
    }

    #[test]
    fn what_serde_json_cannot_read_is_a_parse_error() {
        let deep = format!(
            r#"{{"name":"a","arguments":{{"x":{}1{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        for (method, params) in [
            ("tools/call", r#"{"name":"a","task":1e400}"#.to_owned()),
            (
                "prompts/get",
                r#"{"name":"a","arguments":{"x":1e400}}"#.to_owned(),
            ),
            (
                "tools/call",
                r#"{"_meta":{"progressToken":1e400},"name":"a"}"#.to_owned(),
            ),
            ("tools/call", deep.replace("arguments", "task")),
        ] {
            let e = decode(method, Some(&params)).err();
            assert!(e.is_some_and(|e| unreadable(&e)), "{method} {params}");
        }
    }

    #[test]
    fn meta_is_read_with_the_members() {
        let p = decode(
            "tools/call",
            Some(
                r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            ),
        )
        .unwrap();
        assert!(p.is_stateless());
        let p = decode(
            "ping",
            Some(r#"{"_m\u0065ta":{"io.modelcontextprotocol/protocolVersion":"x"}}"#),
        )
        .unwrap();
        assert!(p.is_stateless());
    }
}
