//! Content blocks (spec: `ContentBlock`) and resource contents.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::annotations::Annotations;

/// Text of a resource, or its bytes in base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Metadata for clients and extensions (e.g. an MCP Apps view's `ui`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<serde_json::Map<String, Value>>,
    },
    /// Binary contents.
    Blob {
        /// The resource URI.
        uri: String,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 of the bytes.
        blob: String,
        /// Metadata for clients and extensions.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<serde_json::Map<String, Value>>,
    },
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text { uri: uri.into(), mime_type: Some(mime_type.into()), text: text.into(), meta: None }
    }
    /// Binary contents, already base64-encoded.
    pub fn blob(uri: impl Into<String>, mime_type: impl Into<String>, blob_base64: impl Into<String>) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: blob_base64.into(),
            meta: None,
        }
    }
    /// The same contents with `_meta[key] = value`.
    #[must_use]
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        let (ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. }) = &mut self;
        meta.get_or_insert_with(Default::default).insert(key.into(), value);
        self
    }
    /// The URI of these contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

/// One content block of a tool result or prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Hints for the client (audience, priority, last change).
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An image, base64.
    Image {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Hints for the client (audience, priority, last change).
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Audio, base64.
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Hints for the client (audience, priority, last change).
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An embedded resource.
    Resource {
        /// The contents.
        resource: ResourceContents,
        /// Hints for the client (audience, priority, last change).
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// URI.
        uri: String,
        /// Name.
        name: String,
        /// Description.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Hints for the client (audience, priority, last change).
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into(), annotations: None }
    }
    /// An image block from base64 data.
    pub fn image(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image { data: data_base64.into(), mime_type: mime_type.into(), annotations: None }
    }
    /// An audio block from base64 data.
    pub fn audio(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio { data: data_base64.into(), mime_type: mime_type.into(), annotations: None }
    }
    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource { resource: contents, annotations: None }
    }
    /// A link to a resource the client may read.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            annotations: None,
        }
    }
    /// This block with annotations (audience, priority, last change).
    pub fn with_annotations(mut self, value: Annotations) -> Self {
        match &mut self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::Resource { annotations, .. }
            | Content::ResourceLink { annotations, .. } => *annotations = Some(value),
        }
        self
    }
    /// The block's annotations, if any.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::Resource { annotations, .. }
            | Content::ResourceLink { annotations, .. } => annotations.as_ref(),
        }
    }
    /// A JSON value rendered as pretty text (for tools without structured output).
    pub fn json(value: &Value) -> Self {
        Content::text(value.to_string())
    }
}
