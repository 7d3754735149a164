//! The catalog's own tests: ordering, cursors, events, refusals and hints.

use super::*;
use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::model::CacheHints;
use serde_json::json;

fn tool(name: &str) -> Tool {
    Tool::raw(name, "d", json!({"type": "object"}), |_, _| async { Ok(CallToolResult::text("x")) })
}

#[test]
fn lists_in_name_order_with_stable_cursors() {
    let c = Catalog::new();
    for n in ["c", "a", "e", "b", "d"] {
        c.add_tool(tool(n)).unwrap();
    }
    c.add_tool(tool("hidden").unlisted()).unwrap();
    let p1 = c.list_tools(None, 2).unwrap().page;
    assert_eq!(p1.items.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    // an item removed before the next page does not shift it
    c.remove_tool("a");
    let p2 = c.list_tools(p1.next_cursor.as_deref(), 2).unwrap().page;
    assert_eq!(p2.items.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["c", "d"]);
    let p3 = c.list_tools(p2.next_cursor.as_deref(), 2).unwrap().page;
    assert_eq!(p3.items.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["e"]);
    assert!(p3.next_cursor.is_none());
    assert!(c.tool("hidden").is_some());
    assert!(c.list_tools(Some("garbage!"), 2).is_err());
}

#[test]
fn listed_changes_are_published() {
    let c = Catalog::new();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    c.watch(move |e, _key| s2.lock().unwrap().push(e.clone()));
    c.add_tool(tool("a")).unwrap();
    c.add_tool(tool("hidden").unlisted()).unwrap();
    c.remove_tool("hidden");
    c.remove_tool("a");
    c.remove_tool("a");
    c.notify_resource_updated("x://1");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Event::ToolsListChanged, Event::ToolsListChanged, Event::ResourceUpdated { uri: "x://1".into() }]
    );
}

#[test]
fn refuses_invalid_header_annotations() {
    let bad = Tool::raw(
        "t",
        "d",
        json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
        |_, _| async { Ok(CallToolResult::text("x")) },
    );
    assert!(Catalog::new().add_tool(bad).is_err());
}

#[test]
fn adding_refuses_a_taken_name_or_a_bad_one_and_replacing_is_explicit() {
    let c = Catalog::new();
    c.add_tool(tool("a")).unwrap();
    assert!(c.add_tool(tool("a")).unwrap_err().0.contains("already there"));
    assert!(c.replace_tool(tool("a")).unwrap().is_some(), "replace returns the old tool");
    for bad in ["", "has space", "comma,", &"x".repeat(129)] {
        assert!(c.add_tool(tool(bad)).is_err(), "{bad:?}");
    }
    assert!(c.add_tool(tool(&"x".repeat(128))).is_ok());
    c.add_resource(Resource::text("x://1", "one", "text/plain", "1")).unwrap();
    assert!(c.add_resource(Resource::text("x://1", "again", "text/plain", "1")).is_err());
    assert!(c.add_resource(Resource::text("", "empty", "text/plain", "1")).is_err());
    assert!(c.replace_resource(Resource::text("x://1", "again", "text/plain", "1")).unwrap().is_some());
}

#[test]
fn page_hints_take_shortest_ttl_and_private_scope() {
    use mcp_protocol::model::CacheScope;
    let c = Catalog::new();
    c.add_tool(tool("a").with_cache(CacheHints::new(1000, CacheScope::Public))).unwrap();
    c.add_tool(tool("b").with_cache(CacheHints::new(10, CacheScope::Private))).unwrap();
    let l = c.list_tools(None, 10).unwrap();
    assert_eq!(l.cache, Some(CacheHints::new(10, CacheScope::Private)));
}
