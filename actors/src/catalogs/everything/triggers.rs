//! Tools that change the catalog, so that listeners are told.

use mcp_protocol::model::prompts::GetPromptResult;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Map, Value};

use crate::catalog::{Catalog, CatalogError, Prompt, Tool};

use super::helpers::*;

/// Adds `name` if absent, removes it if present: a real change of a listed
/// item, which the catalog publishes as a list_changed event.
fn toggle_tool(c: &Catalog, name: &str) -> bool {
    if c.remove_tool(name).is_some() {
        return false;
    }
    c.replace_tool(simple(name, "Appears and disappears with test_trigger_tool_change", || {
        CallToolResult::text("dynamic tool")
    }))
    .is_ok()
}

fn toggle_prompt(c: &Catalog, name: &str) -> bool {
    if c.remove_prompt(name).is_some() {
        return false;
    }
    c.replace_prompt(Prompt::new(name, "Appears and disappears with test_trigger_prompt_change", |_, _| async {
        Ok(GetPromptResult { description: None, messages: vec![text_message("dynamic prompt".into())] })
    }))
    .is_ok()
}

pub(super) fn triggers(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(
        Tool::raw(
            "test_trigger_tool_change",
            "Adds or removes test_dynamic_tool, so tools/list_changed reaches subscribers",
            no_args(),
            |_, ctx| async move {
                let added = toggle_tool(ctx.catalog(), "test_dynamic_tool");
                Ok(CallToolResult::text(format!("test_dynamic_tool {}", if added { "added" } else { "removed" })))
            },
        )
        .unlisted(),
    )?;
    c.add_tool(
        Tool::raw(
            "test_trigger_prompt_change",
            "Adds or removes test_dynamic_prompt, so prompts/list_changed reaches subscribers",
            no_args(),
            |_, ctx| async move {
                let added = toggle_prompt(ctx.catalog(), "test_dynamic_prompt");
                Ok(CallToolResult::text(format!("test_dynamic_prompt {}", if added { "added" } else { "removed" })))
            },
        )
        .unlisted(),
    )?;
    c.add_tool(
        Tool::raw(
            "test_trigger_resource_update",
            "Publishes notifications/resources/updated for a URI (default test://watched-resource)",
            json!({"type": "object", "properties": {"uri": {"type": "string"}}}),
            |args: Map<String, Value>, ctx| async move {
                let uri = args.get("uri").and_then(Value::as_str).unwrap_or("test://watched-resource").to_owned();
                ctx.catalog().notify_resource_updated(&uri);
                Ok(CallToolResult::text(format!("updated {uri}")))
            },
        )
        .unlisted(),
    )?;
    Ok(())
}
