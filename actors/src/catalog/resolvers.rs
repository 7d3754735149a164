//! Items the catalog does not hold but can find: a resolver is asked about
//! a resource URI that matches no resource or template, or a tool name that
//! names no tool (a filesystem catalog's files, a gateway's upstream tools
//! that are callable without being listed).

use std::sync::Arc;

use super::error::HandlerError;
use super::{Catalog, Resource, Tool};

/// Resolves a URI that is neither a listed resource nor a template match:
/// `None` (not found), or the resource, or why it is refused.
pub type ResourceResolver = Arc<dyn Fn(&str) -> Option<Result<Resource, HandlerError>> + Send + Sync>;

/// Resolves a tool name the catalog does not hold: `None` (unknown), a
/// tool (not listed) that serves the call, or why no tool of that name can
/// serve it now (a sentence the caller gets instead of "Unknown tool").
pub type ToolResolver = Arc<dyn Fn(&str) -> Option<Result<Tool, HandlerError>> + Send + Sync>;

impl Catalog {
    /// Sets the resolver consulted for URIs that match no resource or template.
    pub fn set_resolver(&self, resolver: ResourceResolver) {
        self.resolver.store(Some(Arc::new(resolver)));
    }

    /// Asks the resolver about `uri` (see [`ResourceResolver`]).
    pub fn resolve(&self, uri: &str) -> Option<Result<Resource, HandlerError>> {
        self.resolver.load().as_deref().and_then(|r| r(uri))
    }

    /// Sets the resolver consulted for tool names the catalog does not hold.
    pub fn set_tool_resolver(&self, resolver: ToolResolver) {
        self.tool_resolver.store(Some(Arc::new(resolver)));
    }

    /// Asks the tool resolver about `name`; what it finds is never listed.
    pub(super) fn resolve_tool(&self, name: &str) -> Option<Result<Arc<Tool>, HandlerError>> {
        let resolver = self.tool_resolver.load_full()?;
        Some(resolver(name)?.map(|mut tool| {
            tool.listed = false;
            Arc::new(tool)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::model::tools::CallToolResult;
    use serde_json::json;

    #[test]
    fn an_unheld_tool_name_is_resolved_and_never_listed() {
        let catalog = Catalog::new();
        assert!(catalog.tool("hidden").is_none());
        catalog.set_tool_resolver(Arc::new(|name| match name {
            "hidden" => Some(Ok(Tool::raw(name, "found", json!({"type": "object"}), |_, _| async {
                Ok(CallToolResult::text("ok"))
            }))),
            "away" => Some(Err(HandlerError::invalid_params("Unknown tool: away (its server is down)"))),
            _ => None,
        }));
        assert_eq!(catalog.tool("hidden").unwrap().name(), "hidden");
        assert!(catalog.tool("other").is_none());
        assert!(catalog.list_tools(None, 10).unwrap().page.items.is_empty());
        // Why a name is unknown, when the resolver knows.
        assert!(catalog.tool("away").is_none());
        let why = |name| {
            let e = catalog.find_tool(name).map(|_| ()).unwrap_err();
            e.to_error_data(mcp_protocol::ProtocolVersion::V2026_07_28).message
        };
        assert_eq!(why("away"), "Invalid params: Unknown tool: away (its server is down)");
        assert_eq!(why("other"), "Invalid params: Unknown tool: other");
    }
}
