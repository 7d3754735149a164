//! Tools an upstream serves without listing them (a server may keep tools
//! out of its list and still answer their calls): a call of a name the
//! catalog does not hold goes to the upstream whose prefix it starts with,
//! else to the upstream without a prefix, under the rest of the name.

use std::sync::{Arc, Mutex};

use mcp_protocol::model::tools;
use serde_json::json;

use super::forward::{self, Link};
use crate::catalog::Catalog;

/// Where one upstream's unlisted tools go: its prefix and, while it is up,
/// its link.
pub(crate) struct Route {
    /// The prefix and separator its names start with (empty: none).
    pub(crate) head: String,
    pub(crate) link: Mutex<Option<Arc<Link>>>,
}

impl Route {
    pub(crate) fn new(prefix: &str, separator: &str) -> Arc<Route> {
        let head = if prefix.is_empty() { String::new() } else { format!("{prefix}{separator}") };
        Arc::new(Route { head, link: Mutex::new(None) })
    }

    /// Sets (or, with `None`, clears) the link of its upstream.
    pub(crate) fn set(&self, link: Option<Arc<Link>>) {
        *self.link.lock().expect("route lock") = link;
    }
}

/// Lets `catalog` find the tools `routes` lead to.
pub(crate) fn install(catalog: &Catalog, routes: Vec<Arc<Route>>) {
    catalog.set_tool_resolver(Arc::new(move |name| {
        // A prefixed upstream first; the one without a prefix takes the rest.
        let route = routes.iter().filter(|r| name.starts_with(&r.head)).max_by_key(|r| r.head.len())?;
        let link = route.link.lock().expect("route lock").clone()?;
        let own = name[route.head.len()..].to_owned();
        let def = tools::Tool {
            name: own,
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            meta: None,
        };
        // Its upstream's scopes apply as to its listed tools.
        Some(forward::tool(&link, def, name.to_owned()).with_scopes(link.scopes().to_vec()))
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_without_its_upstream_finds_nothing() {
        let catalog = Catalog::new();
        install(&catalog, vec![Route::new("a", "__"), Route::new("", "__")]);
        assert!(catalog.tool("a__echo").is_none());
        assert!(catalog.tool("echo").is_none());
    }
}
