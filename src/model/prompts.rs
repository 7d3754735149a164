//! Prompts (spec: server/prompts).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::Content;
pub use super::role::Role;
use crate::raw_object::RawObject;

/// An argument a prompt accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// Name.
    pub name: String,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A prompt as listed by `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Unique name.
    pub name: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub arguments: Vec<PromptArgument>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Speaker.
    pub role: Role,
    /// Content block.
    pub content: Content,
}

impl PromptMessage {
    /// A user message.
    pub fn user(content: Content) -> Self {
        PromptMessage { role: Role::User, content }
    }
    /// An assistant message.
    pub fn assistant(content: Content) -> Self {
        PromptMessage { role: Role::Assistant, content }
    }
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    /// The prompt name.
    pub name: String,
    /// String arguments, as their JSON text (read with
    /// [`RawObject::to_map`]; kept as received for the audit log's digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<RawObject>,
    /// MRTR: responses to earlier input requests.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::mrtr::deserialize_present")]
    pub input_responses: Option<Value>,
    /// MRTR: opaque state of an earlier round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// A prompt of these messages, without a description.
    pub fn messages(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult { description: None, messages }
    }
    /// A prompt of one user text message.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::messages(vec![PromptMessage::user(Content::text(text))])
    }
    /// This prompt with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// One user text message.
impl From<String> for GetPromptResult {
    fn from(text: String) -> Self {
        Self::user_text(text)
    }
}

impl From<Vec<PromptMessage>> for GetPromptResult {
    fn from(messages: Vec<PromptMessage>) -> Self {
        Self::messages(messages)
    }
}
