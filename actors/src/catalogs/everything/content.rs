//! Tools that return each kind of content (and `echo`, which the load harness calls).

use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::tools::CallToolResult;

use crate::catalog::{Catalog, CatalogError, Tool};

use super::helpers::*;

pub(super) fn tools(c: &Catalog) -> Result<(), CatalogError> {
    c.add_tool(Tool::new("echo", "Echoes `text` back (the load harness calls it)", |a: EchoArgs, _| async move {
        Ok(CallToolResult::text(a.text))
    }))?;
    c.add_tool(simple("test_simple_text", "Returns a simple text response", || {
        CallToolResult::text("This is a simple text response for testing.")
    }))?;
    c.add_tool(simple("test_image_content", "Returns an image (1x1 PNG)", || {
        CallToolResult::success(vec![Content::image(PNG_BASE64, "image/png")])
    }))?;
    c.add_tool(simple("test_audio_content", "Returns a short WAV clip", || {
        CallToolResult::success(vec![Content::audio(b64(&wav_bytes()), "audio/wav")])
    }))?;
    c.add_tool(simple("test_embedded_resource", "Returns an embedded resource", || {
        CallToolResult::success(vec![Content::resource(ResourceContents::text(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        ))])
    }))?;
    c.add_tool(simple("test_multiple_content_types", "Returns text, an image and a resource", || {
        CallToolResult::success(vec![
            Content::text("Multiple content types test:"),
            Content::image(PNG_BASE64, "image/png"),
            Content::resource(ResourceContents::text(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            )),
        ])
    }))?;
    c.add_tool(simple("test_error_handling", "Always fails with a tool execution error", || {
        CallToolResult::error("This tool intentionally returns an error for testing")
    }))?;
    Ok(())
}
