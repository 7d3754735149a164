//! The fan-out triggers of the `everything` catalog as `mcp-load fanout`
//! uses them, and what the two fan-out floors (`echo-baseline --fanout`,
//! `fanout-floor`) answer with: the tools, the notifications they cause and
//! a listen stream's acknowledgement.

use serde_json::{json, Value};

/// The tool that makes the server send `resources/updated` for its `uri`.
pub const RESOURCE_TRIGGER: &str = "test_trigger_resource_update";
/// The tool that makes the server send `tools/list_changed`.
pub const TOOLS_TRIGGER: &str = "test_trigger_tool_change";
/// The notification [`RESOURCE_TRIGGER`] causes.
pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// The notification [`TOOLS_TRIGGER`] causes.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The notification a `tools/call` of trigger `name` with `arguments`
/// causes; `None` for any other tool.
pub fn notification_of(name: &str, arguments: &Value) -> Option<Value> {
    match name {
        RESOURCE_TRIGGER => {
            Some(json!({"jsonrpc": "2.0", "method": RESOURCES_UPDATED, "params": {"uri": arguments["uri"]}}))
        }
        TOOLS_TRIGGER => Some(json!({"jsonrpc": "2.0", "method": TOOLS_LIST_CHANGED, "params": {}})),
        _ => None,
    }
}

/// The acknowledgement that opens listen stream `id`.
pub fn acknowledgement(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_trigger_causes_its_notification() {
        let updated = notification_of(RESOURCE_TRIGGER, &json!({"uri": "test://watched-resource"})).unwrap();
        assert_eq!(updated["method"], RESOURCES_UPDATED);
        assert_eq!(updated["params"]["uri"], "test://watched-resource");
        assert_eq!(notification_of(TOOLS_TRIGGER, &json!({})).unwrap()["method"], TOOLS_LIST_CHANGED);
        assert_eq!(notification_of("echo", &json!({"text": "hi"})), None);
        assert_eq!(acknowledgement(&json!(7))["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    }
}
