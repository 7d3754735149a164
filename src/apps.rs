//! The MCP Apps extension (`io.modelcontextprotocol/ui`): interactive views
//! (`ui://` HTML documents) that hosts render next to a tool's result.
//!
//! What reaches a server is ordinary MCP: the extension in the capabilities,
//! `_meta.ui` on view resources and on tools, and `tools/call` /
//! `resources/read` that a host makes on a view's behalf. The view ↔ host
//! channel (`ui/initialize`, `ui/notifications/tool-result`, …) is
//! `postMessage` inside the host and never reaches the server.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::model::capabilities::ClientCapabilities;

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of a view: a whole HTML5 document.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
/// The URI scheme of views.
pub const SCHEME: &str = "ui://";
/// The `_meta` key of a tool's and a view's settings.
pub const META_KEY: &str = "ui";
/// The older flat `_meta` key of a tool's view, which hosts still read.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// Who may call a tool (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model (the agent) sees and calls it.
    Model,
    /// Views of this server call it (through the host).
    App,
}

/// What a client declared of the extension.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ClientSupport {
    /// The view MIME types it renders (`text/html;profile=mcp-app`).
    #[serde(default, rename = "mimeTypes")]
    pub mime_types: Vec<String>,
}

impl ClientSupport {
    /// Whether it renders views of this extension's HTML profile: its
    /// `mimeTypes` lists `text/html;profile=mcp-app` (the extension asks
    /// clients to; a declaration without it renders nothing of ours).
    pub fn renders_views(&self) -> bool {
        self.mime_types.iter().any(|m| m == VIEW_MIME)
    }
}

/// The client's declaration of the extension, if it made one.
pub fn client_support(caps: &ClientCapabilities) -> Option<ClientSupport> {
    let value = caps.extensions.as_ref()?.get(EXTENSION)?;
    Some(ClientSupport::deserialize(value).unwrap_or_default())
}

/// `capabilities.extensions["io.modelcontextprotocol/ui"]` of a server
/// that serves views: the MIME types of its views.
pub fn server_capability() -> (String, Value) {
    (EXTENSION.to_owned(), json!({ "mimeTypes": [VIEW_MIME] }))
}

/// The refusal of an app-only tool called by a client that did not declare
/// the extension (-32021 on 2026-07-28, with the capability it lacks).
pub fn app_only(tool: &str) -> crate::error::ProtocolError {
    let mut extensions = Map::new();
    extensions.insert(EXTENSION.into(), json!({ "mimeTypes": [VIEW_MIME] }));
    crate::error::ProtocolError::MissingCapability {
        required: Box::new(ClientCapabilities { extensions: Some(extensions), ..Default::default() }),
        message: format!(
            "tool {tool} is callable only from an MCP Apps view (visibility [\"app\"]); \
             it needs the {EXTENSION} extension"
        ),
    }
}

/// Whether `text` is an HTML document (it opens with a doctype or an
/// `<html>` element, after any whitespace and comments).
pub fn is_html_document(text: &str) -> bool {
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    while let Some(after) = rest.strip_prefix("<!--") {
        let Some(end) = after.find("-->") else { return false };
        rest = after[end + 3..].trim_start();
    }
    let head: String = rest.chars().take(14).collect::<String>().to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn support_is_read_from_the_client_capabilities() {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"extensions": {EXTENSION: {"mimeTypes": [VIEW_MIME]}}})).unwrap();
        assert!(client_support(&caps).unwrap().renders_views());
        let other: ClientCapabilities =
            serde_json::from_value(json!({"extensions": {EXTENSION: {"mimeTypes": ["text/uri-list"]}}})).unwrap();
        assert!(!client_support(&other).unwrap().renders_views());
        let bare: ClientCapabilities = serde_json::from_value(json!({"extensions": {EXTENSION: {}}})).unwrap();
        assert!(!client_support(&bare).unwrap().renders_views(), "no mimeTypes, no views");
        assert!(client_support(&ClientCapabilities::default()).is_none());
    }

    #[test]
    fn html_documents_are_told_apart() {
        assert!(is_html_document("<!DOCTYPE html><html></html>"));
        assert!(is_html_document("\n  <!-- view -->\n<html lang=en>"));
        assert!(!is_html_document("<div>fragment</div>"));
        assert!(!is_html_document("{\"json\": true}"));
        assert!(!is_html_document("<!-- never closed <html>"));
    }

    #[test]
    fn visibility_is_lowercase_on_the_wire() {
        assert_eq!(serde_json::to_value([Visibility::Model, Visibility::App]).unwrap(), json!(["model", "app"]));
    }
}
