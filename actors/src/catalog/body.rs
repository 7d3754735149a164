//! [`ResourceBody`]: what a simple resource reader returns — just the text
//! or the bytes; the URI and MIME type are the resource's own.

use base64::Engine;
use mcp_protocol::model::content::ResourceContents;

/// The contents of a resource without its URI and MIME type.
pub trait ResourceBody {
    /// The contents at `uri`, of type `mime_type`.
    fn into_contents(self, uri: String, mime_type: Option<String>) -> ResourceContents;
}

impl ResourceBody for String {
    fn into_contents(self, uri: String, mime_type: Option<String>) -> ResourceContents {
        ResourceContents::Text { uri, mime_type, text: self, meta: None }
    }
}

impl ResourceBody for &'static str {
    fn into_contents(self, uri: String, mime_type: Option<String>) -> ResourceContents {
        self.to_owned().into_contents(uri, mime_type)
    }
}

/// Bytes are sent as a base64 blob.
impl ResourceBody for Vec<u8> {
    fn into_contents(self, uri: String, mime_type: Option<String>) -> ResourceContents {
        ResourceContents::Blob {
            uri,
            mime_type,
            blob: base64::engine::general_purpose::STANDARD.encode(self),
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_bytes_take_the_resource_uri_and_type() {
        let t = "hi".into_contents("x://1".into(), Some("text/plain".into()));
        assert_eq!(t, ResourceContents::text("x://1", "text/plain", "hi"));
        let b = vec![0u8, 255].into_contents("x://2".into(), None);
        assert_eq!(b, ResourceContents::Blob { uri: "x://2".into(), mime_type: None, blob: "AP8=".into(), meta: None });
    }
}
