//! Multi round-trip requests (spec: basic/patterns/mrtr, client/*): the
//! input a server may ask of the client inside an `InputRequiredResult`, and
//! the client's answers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::capabilities::ClientCapabilities;

/// Deserializes a present field as `Some`, keeping an explicit `null` as
/// `Some(Value::Null)` (so "absent" and "null" stay distinguishable).
pub fn deserialize_present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Method names of the requests a server sends a client.
pub mod method {
    /// `elicitation/create`.
    pub const ELICITATION_CREATE: &str = "elicitation/create";
    /// `sampling/createMessage`.
    pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
    /// `roots/list`.
    pub const ROOTS_LIST: &str = "roots/list";
}

/// One request for client input (`InputRequest`): elicitation, sampling or roots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`.
    #[serde(rename = "elicitation/create")]
    Elicit(ElicitParams),
    /// `sampling/createMessage`: params as the spec's `CreateMessageRequestParams`.
    #[serde(rename = "sampling/createMessage")]
    Sample(Map<String, Value>),
    /// `roots/list`.
    #[serde(rename = "roots/list")]
    ListRoots(Map<String, Value>),
}

impl InputRequest {
    /// The method of this request.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => method::ELICITATION_CREATE,
            InputRequest::Sample(_) => method::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => method::ROOTS_LIST,
        }
    }

    /// The capabilities the client must declare for this request.
    pub fn required_capabilities(&self) -> ClientCapabilities {
        match self {
            InputRequest::Elicit(_) => ClientCapabilities::elicitation(),
            InputRequest::Sample(_) => ClientCapabilities::sampling(),
            InputRequest::ListRoots(_) => ClientCapabilities::roots(),
        }
    }

    /// A form elicitation.
    pub fn elicit_form(message: impl Into<String>, requested_schema: Value) -> Self {
        InputRequest::Elicit(ElicitParams { mode: Some("form".into()), message: message.into(), requested_schema })
    }

    /// A sampling request with one user text message.
    pub fn sample_text(prompt: impl Into<String>, max_tokens: u32) -> Self {
        let mut m = Map::new();
        m.insert(
            "messages".into(),
            serde_json::json!([{"role": "user", "content": {"type": "text", "text": prompt.into()}}]),
        );
        m.insert("maxTokens".into(), Value::from(max_tokens));
        InputRequest::Sample(m)
    }

    /// A `roots/list` request.
    pub fn list_roots() -> Self {
        InputRequest::ListRoots(Map::new())
    }
}

/// Params of a form elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// `form` (the default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to show the user.
    pub message: String,
    /// A flat object schema of primitive properties.
    pub requested_schema: Value,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Declined explicitly.
    Decline,
    /// Dismissed.
    Cancel,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (when accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// A submitted string value, if accepted.
    pub fn string(&self, field: &str) -> Option<&str> {
        (self.action == ElicitAction::Accept).then_some(())?;
        self.content.as_ref()?.get(field)?.as_str()
    }
}

/// The client's answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// `assistant`.
    pub role: String,
    /// The sampled content (a block or an array of blocks).
    pub content: Value,
    /// The model used.
    pub model: String,
    /// Why sampling stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// The text of a single text content block.
    pub fn text(&self) -> Option<&str> {
        self.content.get("text").and_then(Value::as_str)
    }
}

/// A root the client exposes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The client's answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_requests_have_the_wire_shape() {
        let e = InputRequest::elicit_form(
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["method"], "elicitation/create");
        assert_eq!(v["params"]["requestedSchema"]["type"], "object");
        assert_eq!(
            serde_json::to_value(InputRequest::list_roots()).unwrap(),
            json!({"method": "roots/list", "params": {}})
        );
        let s = serde_json::to_value(InputRequest::sample_text("Q?", 100)).unwrap();
        assert_eq!(s["params"]["maxTokens"], 100);
        assert_eq!(e.method(), "elicitation/create");
        assert_eq!(e.required_capabilities(), ClientCapabilities::elicitation());
    }

    #[test]
    fn results_parse_and_reject_wrong_shapes() {
        let r: ElicitResult =
            serde_json::from_value(json!({"action": "accept", "content": {"name": "Alice"}})).unwrap();
        assert_eq!(r.string("name"), Some("Alice"));
        assert!(serde_json::from_value::<ElicitResult>(json!(12345)).is_err());
        assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
        let s: CreateMessageResult = serde_json::from_value(
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"}),
        )
        .unwrap();
        assert_eq!(s.text(), Some("Paris"));
        let roots: ListRootsResult =
            serde_json::from_value(json!({"roots": [{"uri": "file:///r", "name": "R"}]})).unwrap();
        assert_eq!(roots.roots.len(), 1);
    }
}
