//! What a server says about itself when a connection begins.

use serde::Deserialize;
use serde_json::Value;

use crate::meta::{RELATED_REQUEST_KEY, SERVER_INFO_KEY};
use crate::model::{Implementation, ServerCapabilities};

/// What a server said about itself when the connection began.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The protocol version spoken.
    pub version: String,
    /// Whether the connection is stateless (2026-07-28) or a legacy session.
    pub stateless: bool,
    /// `serverInfo` (name, version, title), when the server gave a readable one.
    pub info: Option<Implementation>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for models, if given.
    pub instructions: Option<String>,
    /// The versions `server/discover` listed (empty for a legacy server).
    pub supported_versions: Vec<String>,
}

/// The members of a `server/discover` or `initialize` result read here,
/// each lenient: one of the wrong shape reads as absent.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Said {
    capabilities: Value,
    instructions: Value,
    supported_versions: Value,
    server_info: Value,
    #[serde(rename = "_meta")]
    meta: Value,
}

impl ServerInfo {
    /// What a `server/discover` result says (`serverInfo` in its `_meta`),
    /// speaking `version`.
    pub fn from_discover(result: &Value, version: &str) -> Self {
        Self::read(result, version, true)
    }

    /// What an `initialize` result says (`serverInfo` in the result).
    pub fn from_initialize(result: &Value, version: &str) -> Self {
        Self::read(result, version, false)
    }

    fn read(result: &Value, version: &str, stateless: bool) -> Self {
        let said = Said::deserialize(result).unwrap_or_default();
        let info = match stateless {
            true => said.meta.get(SERVER_INFO_KEY).cloned().unwrap_or(Value::Null),
            false => said.server_info,
        };
        ServerInfo {
            version: version.to_owned(),
            stateless,
            info: serde_json::from_value(info).ok(),
            capabilities: serde_json::from_value(said.capabilities).unwrap_or_default(),
            instructions: serde_json::from_value(said.instructions).ok(),
            supported_versions: serde_json::from_value(said.supported_versions).unwrap_or_default(),
        }
    }

    /// The server's name from `serverInfo`, if it gave one.
    pub fn name(&self) -> Option<&str> {
        self.info.as_ref().map(|i| i.name.as_str())
    }

    /// Whether the server declared this extension in its capabilities.
    pub fn has_extension(&self, name: &str) -> bool {
        self.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(name))
    }

    /// Whether the server names, in its requests, the request they are
    /// part of (declared as an experimental capability).
    pub fn names_related_requests(&self) -> bool {
        self.capabilities.experimental.as_ref().is_some_and(|e| e.contains_key(RELATED_REQUEST_KEY))
    }

    /// Whether the server sends log messages (and so may be asked for a level).
    pub fn logs(&self) -> bool {
        self.capabilities.logging.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_results_are_read_and_odd_members_ignored() {
        let d = json!({"supportedVersions": ["2026-07-28"], "capabilities": {"extensions": {"x/y": {}}},
            "instructions": "hi", "_meta": {SERVER_INFO_KEY: {"name": "s", "version": "1"}}});
        let s = ServerInfo::from_discover(&d, "2026-07-28");
        assert!(s.stateless && s.has_extension("x/y") && !s.logs());
        assert_eq!((s.name(), s.instructions.as_deref()), (Some("s"), Some("hi")));
        let i = json!({"protocolVersion": "2025-11-25", "capabilities": {"logging": {}},
            "serverInfo": {"name": "legacy"}, "instructions": 5});
        let s = ServerInfo::from_initialize(&i, "2025-11-25");
        assert!(!s.stateless && s.logs());
        // A serverInfo without its version is not an Implementation.
        assert_eq!((s.name(), s.instructions.as_deref()), (None, None));
    }
}
