//! Tools (spec: server/tools).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::content::Content;
use crate::raw_object::RawObject;

/// A tool as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Unique name.
    pub name: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (empty when a server gave none).
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Metadata for clients and extensions (e.g. an MCP Apps `ui://` link).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Hints about a tool's behaviour (spec: `ToolAnnotations`). Clients must
/// treat them as untrusted unless they trust the server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// A changing tool may destroy data (default true; meaningful when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It talks to an open world of external entities (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// A tool that only reads (`readOnlyHint: true`).
    pub fn read_only() -> Self {
        ToolAnnotations { read_only_hint: Some(true), ..Self::default() }
    }
    /// A tool that changes things, destructively or not.
    pub fn changes(destructive: bool) -> Self {
        ToolAnnotations { read_only_hint: Some(false), destructive_hint: Some(destructive), ..Self::default() }
    }
    /// These annotations, idempotent or not.
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.idempotent_hint = Some(yes);
        self
    }
    /// These annotations, reaching an open world (the web, other systems) or not.
    pub fn open_world(mut self, yes: bool) -> Self {
        self.open_world_hint = Some(yes);
        self
    }
    /// These annotations with a title.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool name.
    pub name: String,
    /// The arguments, as their JSON text (parsed by the tool into its own
    /// argument type); absent is the same as `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<RawObject>,
    /// MRTR: responses to the input requests of an earlier round.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::mrtr::deserialize_present")]
    pub input_responses: Option<Value>,
    /// MRTR: the opaque state of an earlier round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<Content>,
    /// Structured result matching `outputSchema`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool ran and failed (a tool execution error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    /// A successful result with these blocks.
    pub fn success(content: Vec<Content>) -> Self {
        CallToolResult { content, ..Default::default() }
    }
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![Content::text(text)])
    }
    /// A tool execution error the model can read and correct.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult { content: vec![Content::text(message)], is_error: Some(true), ..Default::default() }
    }
    /// A result with structured content (and its JSON text as content).
    pub fn structured(value: Value) -> Self {
        CallToolResult { content: vec![Content::json(&value)], structured_content: Some(value), is_error: None }
    }
    /// The same result with `value` as its structured content, its content
    /// kept: text for the model and for clients without views, data for a
    /// view (MCP Apps) to draw.
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }
}
