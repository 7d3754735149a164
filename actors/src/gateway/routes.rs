//! Tools an upstream serves without listing them (a server may keep tools
//! out of its list and still answer their calls): a call of a name the
//! catalog does not hold goes to the upstream whose prefix it starts with,
//! else to the upstream without a prefix, under the rest of the name — if
//! that upstream's `allow_tools` and `deny_tools` let it through (a name
//! they leave out is unknown, exactly as a name nothing serves), with its
//! `scopes`. While the upstream is down the caller is told so.

use std::sync::{Arc, Mutex};

use mcp_protocol::model::tools;
use serde_json::json;

use super::forward::{self, Link};
use super::names::Names;
use super::status::UpstreamStatus;
use crate::catalog::error::HandlerError;
use crate::catalog::Catalog;

/// Where one upstream's unlisted tools go: its names and, while it is up,
/// its link.
pub(crate) struct Route {
    names: Names,
    link: Mutex<Option<Arc<Link>>>,
    /// Where the upstream stands, for a caller while it is down.
    status: Arc<Mutex<UpstreamStatus>>,
}

impl Route {
    pub(crate) fn new(names: Names, status: Arc<Mutex<UpstreamStatus>>) -> Arc<Route> {
        Arc::new(Route { names, link: Mutex::new(None), status })
    }

    /// Sets (or, with `None`, clears) the link of its upstream.
    pub(crate) fn set(&self, link: Option<Arc<Link>>) {
        *self.link.lock().expect("route lock") = link;
    }

    /// The tool serving a call of `name` (`own` upstream), or why there is none now.
    fn resolve(&self, name: &str, own: &str) -> Result<crate::catalog::Tool, HandlerError> {
        // A tool left out of the list for its definition is not reached by name either.
        let refused =
            self.status.lock().unwrap_or_else(|p| p.into_inner()).refused.get(&format!("tool:{name}")).cloned();
        if let Some(why) = refused {
            return Err(HandlerError::invalid_params(format!("Tool {name} is not served: {why}")));
        }
        let link = self.link.lock().expect("route lock").clone();
        let Some(link) = link else {
            let status = self.status.lock().unwrap_or_else(|p| p.into_inner()).unavailable();
            return Err(HandlerError::invalid_params(format!("Unknown tool: {name} ({status})")));
        };
        let def = tools::Tool {
            name: own.to_owned(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            meta: None,
        };
        // Its upstream's scopes apply as to its listed tools.
        Ok(forward::tool(&link, def, name.to_owned()).with_scopes(link.scopes().to_vec()))
    }
}

/// Lets `catalog` find the tools `routes` lead to (the routes of the
/// upstreams running at the time of each call).
pub(crate) fn install(catalog: &Catalog, routes: Arc<arc_swap::ArcSwap<Vec<Arc<Route>>>>) {
    catalog.set_tool_resolver(Arc::new(move |name| {
        let routes = routes.load();
        // A prefixed upstream first; the one without a prefix takes the rest.
        let route = routes.iter().filter(|r| name.starts_with(r.names.head())).max_by_key(|r| r.names.head().len())?;
        let own = &name[route.names.head().len()..];
        route.names.allows_tool(own).then(|| route.resolve(name, own))
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GatewayConfig, UpstreamConfig};

    #[test]
    fn a_route_without_its_upstream_says_so_and_a_filtered_name_is_unknown() {
        let ups = [
            UpstreamConfig {
                name: "a".into(),
                command: "x".into(),
                deny_tools: vec!["rm".into()],
                ..Default::default()
            },
            UpstreamConfig { name: "b".into(), command: "x".into(), prefix: Some(String::new()), ..Default::default() },
        ];
        let g = GatewayConfig::default();
        let route = |u: &UpstreamConfig| {
            Route::new(Names::new(u, &ups, &g), Arc::new(Mutex::new(UpstreamStatus::new(&u.name, true))))
        };
        let catalog = Catalog::new();
        install(&catalog, Arc::new(arc_swap::ArcSwap::from_pointee(vec![route(&ups[0]), route(&ups[1])])));
        let why = |name: &str| {
            let e = catalog.find_tool(name).map(|_| ()).unwrap_err();
            e.to_error_data(mcp_protocol::ProtocolVersion::V2026_07_28).message
        };
        assert!(catalog.tool("a__echo").is_none());
        assert!(why("a__echo").contains("Unknown tool: a__echo (upstream a is starting"), "{}", why("a__echo"));
        assert!(why("echo").contains("(upstream b is starting"), "{}", why("echo"));
        assert!(why("a__rm").ends_with("Unknown tool: a__rm"), "denied: unknown, as if nothing served it");
    }
}
