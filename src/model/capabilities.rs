//! Client and server capabilities (spec: `ClientCapabilities`, `ServerCapabilities`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object, as the schema's `JSONObject`.
pub type JsonObject = Map<String, Value>;

/// What a client declares in `_meta["io.modelcontextprotocol/clientCapabilities"]`.
///
/// An empty object means no optional capability; nothing is inferred from
/// earlier requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Present if the client can answer `elicitation/create`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Present if the client can answer `sampling/createMessage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// Present if the client can answer `roots/list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// Experimental, non-standard capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions the client supports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

impl ClientCapabilities {
    /// These capabilities, less the input ones (`elicitation`, `sampling`,
    /// `roots`) `other` does not declare: a request narrowing its session's
    /// set never widens it.
    pub fn narrowed_to(&self, other: &ClientCapabilities) -> Self {
        let keep = |mine: &Option<JsonObject>, theirs: &Option<JsonObject>| mine.clone().filter(|_| theirs.is_some());
        ClientCapabilities {
            elicitation: keep(&self.elicitation, &other.elicitation),
            sampling: keep(&self.sampling, &other.sampling),
            roots: keep(&self.roots, &other.roots),
            ..self.clone()
        }
    }

    /// Capabilities with only `sampling`.
    pub fn sampling() -> Self {
        ClientCapabilities { sampling: Some(Map::new()), ..Default::default() }
    }
    /// Capabilities with only `elicitation`.
    pub fn elicitation() -> Self {
        ClientCapabilities { elicitation: Some(Map::new()), ..Default::default() }
    }
    /// Capabilities with only `roots`.
    pub fn roots() -> Self {
        ClientCapabilities { roots: Some(Map::new()), ..Default::default() }
    }

    /// The capabilities in `required` that `self` lacks (top-level keys only),
    /// or `None` when every one is declared.
    pub fn missing(&self, required: &ClientCapabilities) -> Option<ClientCapabilities> {
        let mut out = ClientCapabilities::default();
        let mut any = false;
        if required.elicitation.is_some() && self.elicitation.is_none() {
            out.elicitation = required.elicitation.clone();
            any = true;
        }
        if required.sampling.is_some() && self.sampling.is_none() {
            out.sampling = required.sampling.clone();
            any = true;
        }
        if required.roots.is_some() && self.roots.is_none() {
            out.roots = required.roots.clone();
            any = true;
        }
        any.then_some(out)
    }
}

/// `{listChanged?: bool}`, the shape of the tools and prompts capabilities.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// Whether the server sends list_changed notifications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The resources capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether per-resource update subscriptions are supported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What the server declares in `server/discover`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Present if the server offers tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Present if the server offers resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Present if the server answers `completion/complete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server sends log messages (per-request `logLevel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Experimental capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Extensions the server supports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_lists_only_undeclared() {
        let declared: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        let mut need = ClientCapabilities::sampling();
        need.elicitation = Some(Map::new());
        let missing = declared.missing(&need).unwrap();
        assert_eq!(serde_json::to_value(missing).unwrap(), json!({"sampling": {}}));
        assert!(declared.missing(&ClientCapabilities::elicitation()).is_none());
    }

    #[test]
    fn unknown_capabilities_are_tolerated() {
        let c: ClientCapabilities =
            serde_json::from_value(json!({"roots": {"listChanged": true}, "x-new": {}})).unwrap();
        assert!(c.roots.is_some());
    }

    #[test]
    fn narrowing_keeps_only_what_both_declare() {
        let session = ClientCapabilities { roots: Some(Map::new()), ..ClientCapabilities::sampling() };
        let narrowed = session.narrowed_to(&ClientCapabilities::sampling());
        assert_eq!(narrowed, ClientCapabilities::sampling());
        assert_eq!(ClientCapabilities::default().narrowed_to(&session), ClientCapabilities::default());
    }
}
