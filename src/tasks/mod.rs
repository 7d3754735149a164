//! The Tasks extension (`io.modelcontextprotocol/tasks`): a `tools/call`
//! may answer `resultType: "task"` with a task the client polls with
//! `tasks/get`, answers with `tasks/update` and stops with `tasks/cancel`.
//! This module is its wire: the identifier, the methods and their params,
//! the task shapes and the capability a client declares.

mod model;
mod time;

pub use model::{DetailedTask, Task, TaskIdParams, TaskStatus, UpdateTaskParams};
pub use time::iso8601;

use serde_json::{json, Map, Value};

use crate::model::capabilities::ClientCapabilities;

/// The extension's identifier, the key in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The status notification on a listen stream.
pub const NOTIFICATION: &str = "notifications/tasks";

/// Whether the client declared the extension for this request. The short
/// key `tasks` is taken as the same declaration (the conformance suite's
/// per-request opt-in sends `extensions: {tasks: {}}`).
pub fn declared(caps: &ClientCapabilities) -> bool {
    caps.extensions.as_ref().is_some_and(|e| e.contains_key(EXTENSION) || e.contains_key("tasks"))
}

/// The capabilities a non-declaring client lacks (the `data` of -32021).
pub fn required_capabilities() -> ClientCapabilities {
    let mut extensions = Map::new();
    extensions.insert(EXTENSION.into(), json!({}));
    ClientCapabilities { extensions: Some(extensions), ..Default::default() }
}

/// MissingRequiredClientCapability naming the extension (-32021), for
/// `what` needing it.
pub fn missing_extension(what: &str) -> crate::error::ProtocolError {
    crate::error::ProtocolError::MissingCapability {
        required: Box::new(required_capabilities()),
        message: format!("{what} needs the {EXTENSION} extension"),
    }
}

/// The server's declaration in `server/discover`: `{}` (no settings yet).
pub fn server_capability() -> (String, Value) {
    (EXTENSION.to_owned(), json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_key_declares_the_extension() {
        let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).unwrap();
        assert!(declared(&caps(json!({"extensions": {EXTENSION: {}}}))));
        assert!(declared(&caps(json!({"extensions": {"tasks": {}}}))));
        assert!(!declared(&caps(json!({"extensions": {"other": {}}}))));
        assert!(!declared(&caps(json!({"elicitation": {}}))));
        let required = serde_json::to_value(required_capabilities()).unwrap();
        assert_eq!(required, json!({"extensions": {EXTENSION: {}}}));
    }
}
