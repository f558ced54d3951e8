//! A result answered elsewhere (by an upstream server), passed on as it came.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// A result answered elsewhere, as it came: its members left as the JSON they came as (never
/// built into values), its `_meta` kept, without what belonged to its own hop (2026-07-28
/// `resultType` and cache hints, the upstream's `serverInfo`), which the era adapter adds for
/// this server.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) struct Forwarded {
    /// In key order, as a result built into a value was written before.
    body: BTreeMap<String, Box<RawValue>>,
    meta: Map<String, Value>,
    /// A 2026-07-28 result that is not `complete`, passed on as it is: an
    /// `InputRequiredResult` (its `inputRequests` and `requestState` are the upstream's, and
    /// so will the answers be) or a `CreateTaskResult` (`ttlMs` is then the task's).
    result_type: Option<&'static str>,
}

#[cfg_attr(not(feature = "client"), allow(dead_code))]
impl Forwarded {
    /// A result of these members, each the JSON it came as (a result that is not an object has
    /// none). `task`: the result of a `tasks/*` request (its `ttlMs` is the task's, not a
    /// cache hint of the upstream's hop).
    pub(crate) fn new(mut body: BTreeMap<String, Box<RawValue>>, task: bool) -> Forwarded {
        let result_type = match body.remove("resultType").and_then(|t| text(&t)).as_deref() {
            Some("input_required") => Some("input_required"),
            Some("task") => Some("task"),
            _ => None,
        };
        if result_type.is_none() && !task {
            for hop in ["ttlMs", "cacheScope"] {
                body.remove(hop);
            }
        }
        // The upstream's `serverInfo` (in every 2026-07-28 result) is dropped unbuilt; a member
        // nested past serde_json's limit, which cannot be built, is left out.
        let meta = body
            .remove("_meta")
            .and_then(|m| serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(m.get()).ok())
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| k != "io.modelcontextprotocol/serverInfo")
            .filter_map(|(k, v)| Some((k, serde_json::from_str(v.get()).ok()?)))
            .collect();
        Forwarded {
            body,
            meta,
            result_type,
        }
    }

    /// The task the result says the upstream created: a 2026-07-28 `CreateTaskResult`'s
    /// `taskId`, else a 2025-11-25 one's `task.taskId`.
    pub(crate) fn created_task(&self) -> Option<String> {
        if self.result_type == Some("task") {
            return self.body.get("taskId").and_then(|id| text(id));
        }
        let task: Value = serde_json::from_str(self.body.get("task")?.get()).ok()?;
        Some(task.get("taskId")?.as_str()?.to_owned())
    }
}

/// A member that is a string, as text.
fn text(raw: &RawValue) -> Option<String> {
    serde_json::from_str(raw.get()).ok()
}

impl serde::Serialize for Forwarded {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(s)
    }
}

impl super::handler::Outcome for Forwarded {
    fn shape_for(&mut self, version: ProtocolVersion) {
        if !version.has_structured_output() {
            self.body.remove("structuredContent");
        }
    }
    fn meta(&self) -> Option<&Map<String, Value>> {
        Some(&self.meta)
    }
    fn is_tool_error(&self) -> bool {
        self.body.get("isError").is_some_and(|e| e.get() == "true")
    }
    fn result_type(&self) -> Option<&'static str> {
        self.result_type
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::handler::Outcome;

    /// The members of the object `text`.
    fn raw(text: &str) -> BTreeMap<String, Box<RawValue>> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_result_passes_as_it_came_without_its_hops_members() {
        let result = raw(
            r#"{"structuredContent":{"b":1, "a":[2]},"content":[{"type":"text","text":"x"}],"ttlMs":5,"cacheScope":"public","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{},"k":"v"},"isError":true}"#,
        );
        let f = Forwarded::new(result, false);
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"content":[{"type":"text","text":"x"}],"isError":true,"structuredContent":{"b":1, "a":[2]}}"#
        );
        assert_eq!(
            f.meta(),
            Some(&serde_json::json!({"k": "v"}).as_object().unwrap().clone())
        );
        assert!(f.is_tool_error());
        assert_eq!(f.result_type(), None);
    }

    #[test]
    fn a_task_result_keeps_its_ttl_and_names_its_task() {
        let created = Forwarded::new(
            raw(r#"{"resultType":"task","taskId":"t1","ttlMs":9}"#),
            false,
        );
        assert_eq!(created.result_type(), Some("task"));
        assert_eq!(created.created_task().as_deref(), Some("t1"));
        assert_eq!(
            serde_json::to_string(&created).unwrap(),
            r#"{"taskId":"t1","ttlMs":9}"#
        );
        let legacy = Forwarded::new(raw(r#"{"task":{"taskId":"t2","ttlMs":9}}"#), false);
        assert_eq!(legacy.created_task().as_deref(), Some("t2"));
        let polled = Forwarded::new(raw(r#"{"taskId":"t3","ttlMs":9}"#), true);
        assert_eq!(
            serde_json::to_string(&polled).unwrap(),
            r#"{"taskId":"t3","ttlMs":9}"#
        );
        assert_eq!(polled.created_task(), None);
    }

    #[test]
    fn structured_content_is_left_out_for_a_version_without_it() {
        let mut f = Forwarded::new(raw(r#"{"content":[],"structuredContent":{}}"#), false);
        f.shape_for(ProtocolVersion::V2025_03_26);
        assert_eq!(serde_json::to_string(&f).unwrap(), r#"{"content":[]}"#);
    }
}
