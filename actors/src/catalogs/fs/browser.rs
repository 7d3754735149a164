//! The file browser: an MCP Apps view (`ui://fs/browser`) that hosts show
//! with the results of `list_dir` and `search`, in which a person browses
//! the served directory, previews a file and searches. Its previews come
//! from `preview_file`, a tool only views call (visibility `app`); like
//! every tool of the catalog it goes through the jail and the file rules.

use std::sync::Arc;

use mcp_protocol::apps::Visibility;
use mcp_protocol::model::tools::{CallToolResult, ToolAnnotations};
use mcp_protocol::model::Content;
use serde::Deserialize;
use serde_json::json;

use super::{files, Shared};
use crate::catalog::{Catalog, CatalogError, Tool, View};

/// The view's URI.
pub const BROWSER: &str = "ui://fs/browser";

/// At most this many bytes of a file are shown in a preview.
const PREVIEW_BYTES: usize = 64 * 1024;

/// Arguments of `preview_file`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct PreviewArgs {
    /// Path relative to the served root.
    pub(crate) path: String,
}

/// The start of a file, for the view: its text (when UTF-8) or its type.
fn preview(shared: &Shared, args: PreviewArgs) -> CallToolResult {
    let (path, rel) = match super::served_file(shared, &args.path) {
        Ok(served) => served,
        Err(refused) => return refused,
    };
    let bytes = match files::read_regular(&path, shared.config.max_file_bytes) {
        Ok(b) => b,
        Err(e) => return CallToolResult::error(format!("{:?}: {e}", args.path)),
    };
    let size = bytes.len();
    let mut end = size.min(PREVIEW_BYTES);
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => {
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            Some(text[..end].to_owned())
        }
        Err(_) => None,
    };
    let structured = json!({"path": rel, "size": size, "mimeType": files::mime_of(&path), "text": text,
        "truncated": text.is_some() && end < size});
    CallToolResult {
        content: vec![Content::text(format!("{rel} ({size} bytes)"))],
        structured_content: Some(structured),
        is_error: None,
    }
}

/// Adds the view and `preview_file`.
pub(crate) fn add(catalog: &Catalog, shared: &Arc<Shared>) -> Result<(), CatalogError> {
    let body = include_str!("browser.html");
    catalog.add_view(
        View::page(BROWSER, "File browser", "Files", body)
            .with_description("Browse, preview and search the served files")
            .prefers_border(true)
            // Hosts find it through the tools; resources/list stays the files.
            .unlisted(),
    )?;
    let s = shared.clone();
    catalog.add_tool(
        Tool::new("preview_file", "The start of a served file, for the file browser", move |a: PreviewArgs, _| {
            let s = s.clone();
            async move { Ok(preview(&s, a)) }
        })
        .with_annotations(ToolAnnotations::read_only())
        .with_view(BROWSER)
        .with_visibility([Visibility::App]),
    )
}
