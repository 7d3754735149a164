//! The fixture's MCP Apps view: `ui://everything/counter` shows the result
//! of `counter` (a count the server keeps) and calls `counter_increment`, a
//! tool only views call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mcp_protocol::apps::Visibility;
use mcp_protocol::model::tools::CallToolResult;
use mcp_protocol::model::Content;
use serde_json::json;

use crate::catalog::{Catalog, CatalogError, Tool, View};

/// The view's URI.
const COUNTER: &str = "ui://everything/counter";

const BODY: &str = r#"<p>Count: <output id="count">?</output></p>
<button id="more" disabled>Add one</button>
<script>
  const count = document.getElementById("count"), more = document.getElementById("more");
  const show = (r) => { count.textContent = (r.structuredContent || {}).count ?? mcpApp.textOf(r); };
  mcpApp.onToolResult(show);
  more.onclick = async () => show(await mcpApp.callTool("counter_increment", {}));
  mcpApp.connect().then(() => { more.disabled = false; });
</script>"#;

fn result(n: u64) -> CallToolResult {
    CallToolResult {
        content: vec![Content::text(format!("The count is {n}."))],
        structured_content: Some(json!({ "count": n })),
        is_error: None,
    }
}

pub(super) fn views(c: &Catalog) -> Result<(), CatalogError> {
    c.add_view(View::page(COUNTER, "Counter", "Counter", BODY).with_description("Shows and raises a count"))?;
    let count = Arc::new(AtomicU64::new(0));
    let n = count.clone();
    c.add_tool(
        Tool::no_args("counter", "Shows the count (in a view where the client renders one)", move |_ctx| {
            let v = n.load(Ordering::Relaxed);
            async move { Ok(result(v)) }
        })
        .with_view(COUNTER),
    )?;
    c.add_tool(
        Tool::no_args("counter_increment", "Adds one to the count (called by the counter view)", move |_ctx| {
            let v = count.fetch_add(1, Ordering::Relaxed) + 1;
            async move { Ok(result(v)) }
        })
        .with_view(COUNTER)
        .with_visibility([Visibility::App]),
    )
}
