//! Tools that stream progress or log messages, or need a client capability.

use std::time::Duration;

use mcp_protocol::model::capabilities::ClientCapabilities;
use mcp_protocol::model::logging::LoggingLevel;
use mcp_protocol::model::tools::CallToolResult;
use serde_json::{json, Value};

use crate::catalog::{Catalog, CatalogError, Tool};

use super::helpers::*;

pub(super) fn tools(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(
        "test_tool_with_progress",
        "Reports progress 0, 50, 100 of 100, then returns the progress token",
        no_args(),
        |_, ctx| async move {
            for p in [0.0, 50.0, 100.0] {
                ctx.progress(p, Some(100.0), Some(&format!("{p}% done"))).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let token = ctx.meta().progress_token.clone().map_or("no progress token".to_string(), |t| match t {
                Value::String(s) => s,
                other => other.to_string(),
            });
            Ok(CallToolResult::text(token))
        },
    ))?;
    c.add_tool(Tool::raw(
        "test_logging_tool",
        "Sends three info log messages when the request sets a log level",
        no_args(),
        |_, ctx| async move {
            for (i, m) in
                ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate()
            {
                ctx.log(LoggingLevel::Info, Some("test_logging_tool"), json!(m)).await;
                if i < 2 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Ok(CallToolResult::text("Logging test completed"))
        },
    ))?;
    c.add_tool(Tool::raw(
        "test_tool_with_logging",
        "Sends three info log messages about 50 ms apart",
        no_args(),
        |_, ctx| async move {
            for m in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                ctx.log(LoggingLevel::Info, Some("test_tool_with_logging"), json!(m)).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(CallToolResult::text("Tool with logging completed"))
        },
    ))?;
    Ok(())
}

/// Tools that need a client capability, or stream without asking.
pub(super) fn capability_tools(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::raw(
        "test_missing_capability",
        "Requires the client's sampling capability",
        no_args(),
        |_, ctx| async move {
            ctx.require_capabilities(&ClientCapabilities::sampling())?;
            Ok(CallToolResult::text("The client declared the sampling capability for this request."))
        },
    ))?;
    c.add_tool(Tool::raw(
        "test_streaming_elicitation",
        "Streams a notification, then answers; never sends a server-to-client request",
        no_args(),
        |_, ctx| async move {
            ctx.log(LoggingLevel::Info, Some("test_streaming_elicitation"), json!("working")).await;
            let declared = ctx.client_capabilities().elicitation.is_some();
            Ok(CallToolResult::text(format!(
                "Streaming response complete (elicitation declared: {declared}); input is requested through results, not requests."
            )))
        },
    ))?;
    Ok(())
}
