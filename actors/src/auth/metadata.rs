//! [`ProtectedResource`]: the server's OAuth 2.0 Protected Resource
//! Metadata (RFC 9728) — its canonical URI, where the document is served,
//! and the document itself.

use serde_json::{json, Value};

/// The well-known path of the metadata document (RFC 9728 §3).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// What the server says about itself as a protected resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtectedResource {
    resource: String,
    metadata_url: String,
    authorization_servers: Vec<String>,
}

impl ProtectedResource {
    /// The metadata of the resource with canonical URI `resource` (no
    /// trailing slash), whose tokens come from `authorization_servers`.
    pub fn new(resource: &str, authorization_servers: Vec<String>) -> Self {
        let resource = resource.trim_end_matches('/').to_owned();
        let metadata_url = match url::Url::parse(&resource) {
            Ok(u) => {
                let path = u.path().trim_end_matches('/');
                format!("{}{WELL_KNOWN}{path}", u.origin().ascii_serialization())
            }
            Err(_) => format!("{resource}{WELL_KNOWN}"),
        };
        ProtectedResource { resource, metadata_url, authorization_servers }
    }

    /// The canonical URI (`resource`, and the `aud` tokens must carry).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where clients fetch the document (the path-inserted form, which
    /// they try first): the `resource_metadata` of every challenge.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The paths the document is served at: the root form and the
    /// path-inserted forms for `endpoint_path` and the resource's own path.
    pub fn paths(&self, endpoint_path: &str) -> Vec<String> {
        let mut paths = vec![WELL_KNOWN.to_owned()];
        let resource_path = url::Url::parse(&self.resource).map(|u| u.path().to_owned()).unwrap_or_default();
        for p in [endpoint_path, resource_path.as_str()] {
            let p = p.trim_end_matches('/');
            let full = format!("{WELL_KNOWN}{p}");
            if !p.is_empty() && !paths.contains(&full) {
                paths.push(full);
            }
        }
        paths
    }

    /// The document, listing `scopes` (never `offline_access`: refresh
    /// tokens are not a resource's requirement).
    pub fn document(&self, scopes: impl IntoIterator<Item = String>) -> Value {
        let mut supported: Vec<String> = Vec::new();
        for s in scopes {
            if s != "offline_access" && !supported.contains(&s) {
                supported.push(s);
            }
        }
        json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": supported,
            "bearer_methods_supported": ["header"],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_paths_and_document() {
        let p = ProtectedResource::new("https://MCP.example.com/public/mcp/", vec!["https://id.example.com".into()]);
        assert_eq!(p.resource(), "https://MCP.example.com/public/mcp");
        assert_eq!(p.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp");
        assert_eq!(
            p.paths("/mcp"),
            [
                WELL_KNOWN,
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource/public/mcp"
            ]
        );
        let doc = p.document(["mcp".to_string(), "offline_access".to_string(), "mcp".to_string()]);
        assert_eq!(doc["scopes_supported"], json!(["mcp"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert_eq!(doc["authorization_servers"], json!(["https://id.example.com"]));
        let root = ProtectedResource::new("http://127.0.0.1:8080", vec![]);
        assert_eq!(root.metadata_url(), "http://127.0.0.1:8080/.well-known/oauth-protected-resource");
        assert_eq!(root.paths("/mcp"), [WELL_KNOWN, "/.well-known/oauth-protected-resource/mcp"]);
    }
}
