//! One occurrence of an event type: what a poll returns, a stream pushes and
//! a webhook posts.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One occurrence of an event type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Occurrence {
    /// Unique per occurrence (a source's own stable id where it has one).
    pub event_id: String,
    /// The event type's name.
    pub name: String,
    /// When it happened: ISO 8601, UTC.
    pub timestamp: String,
    /// The payload, per the type's `payloadSchema`.
    pub data: Map<String, Value>,
    /// The position just after this occurrence (a poll's answer carries
    /// the position to poll from next besides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Metadata outside the payload's schema.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Occurrence {
    /// An occurrence of `name` at `at_ms` milliseconds since the epoch.
    pub fn new(event_id: impl Into<String>, name: impl Into<String>, at_ms: u64, data: Map<String, Value>) -> Self {
        Occurrence {
            event_id: event_id.into(),
            name: name.into(),
            timestamp: crate::tasks::iso8601(at_ms),
            data,
            cursor: None,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_occurrence_has_the_wire_names_and_an_iso_timestamp() {
        let data = json!({"id": 1}).as_object().unwrap().clone();
        let o = Occurrence::new("e1", "email.received", 1_767_225_600_250, data);
        let wire = serde_json::to_value(&o).unwrap();
        assert_eq!(
            wire,
            json!({"eventId": "e1", "name": "email.received", "timestamp": "2026-01-01T00:00:00.250Z",
                "data": {"id": 1}})
        );
    }
}
