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

/// Resolves a tool name the catalog does not hold: `None` (unknown), or a
/// tool (not listed) that serves the call.
pub type ToolResolver = Arc<dyn Fn(&str) -> Option<Tool> + Send + Sync>;

impl Catalog {
    /// Sets the resolver consulted for URIs that match no resource or template.
    pub fn set_resolver(&self, resolver: ResourceResolver) {
        *self.resolver.write().unwrap_or_else(|p| p.into_inner()) = Some(resolver);
    }

    /// Asks the resolver about `uri` (see [`ResourceResolver`]).
    pub fn resolve(&self, uri: &str) -> Option<Result<Resource, HandlerError>> {
        let resolver = self.resolver.read().unwrap_or_else(|p| p.into_inner()).clone();
        resolver.and_then(|r| r(uri))
    }

    /// Sets the resolver consulted for tool names the catalog does not hold.
    pub fn set_tool_resolver(&self, resolver: ToolResolver) {
        *self.tool_resolver.write().unwrap_or_else(|p| p.into_inner()) = Some(resolver);
    }

    /// Asks the tool resolver about `name`; what it finds is never listed.
    pub(super) fn resolve_tool(&self, name: &str) -> Option<Arc<Tool>> {
        let resolver = self.tool_resolver.read().unwrap_or_else(|p| p.into_inner()).clone()?;
        let mut tool = resolver(name)?;
        tool.listed = false;
        Some(Arc::new(tool))
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
        catalog.set_tool_resolver(Arc::new(|name| {
            (name == "hidden").then(|| {
                Tool::raw(name, "found", json!({"type": "object"}), |_, _| async { Ok(CallToolResult::text("ok")) })
            })
        }));
        assert_eq!(catalog.tool("hidden").unwrap().name(), "hidden");
        assert!(catalog.tool("other").is_none());
        assert!(catalog.list_tools(None, 10).unwrap().page.items.is_empty());
    }
}
