//! The `fs` catalog's tools: `read_file`, `list_dir` and `search` (the last
//! two shown in the file browser view, see [`browser`](super::browser)). Every
//! path goes through the [`Jail`](super::Jail) and the file rules; failures
//! the model can act on are tool execution errors (`isError: true`).

use std::sync::Arc;

use mcp_protocol::model::content::{Content, ResourceContents};
use mcp_protocol::model::tools::{CallToolResult, ToolAnnotations};
use mcp_protocol::pagination::{decode_cursor, encode_cursor};
use serde::Deserialize;
use serde_json::json;

use super::{files, walk, Shared};
use crate::catalog::{Catalog, CatalogError, Tool};

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ReadFileArgs {
    /// Path relative to the served root.
    pub(crate) path: String,
}

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ListDirArgs {
    /// Directory relative to the served root (default: the root).
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// The `nextCursor` of the previous page.
    #[serde(default)]
    pub(crate) cursor: Option<String>,
}

/// Arguments of `search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchArgs {
    /// Text to find (a regular expression when `regex` is true).
    pub(crate) query: String,
    /// Treat `query` as a regular expression. Default: false (substring).
    #[serde(default)]
    pub(crate) regex: bool,
    /// Directory to search, relative to the root (default: the root).
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// Most matches to return (capped by the server's `fs.search_max_results`).
    #[serde(default)]
    pub(crate) max_results: Option<usize>,
}

const LIST_PAGE: usize = 100;

fn read_file(shared: &Shared, args: ReadFileArgs) -> CallToolResult {
    let path = match super::served_file(shared, &args.path) {
        Ok((path, _)) => path,
        Err(refused) => return refused,
    };
    let uri = shared.jail.uri_of(&path);
    match files::read_contents(&path, &uri, shared.config.max_file_bytes) {
        Ok(ResourceContents::Text { text, .. }) => CallToolResult::text(text),
        Ok(blob) => CallToolResult::success(vec![Content::resource(blob)]),
        Err(e) => CallToolResult::error(e),
    }
}

/// One entry of a listing: its name, kind and size, if it is served (a
/// directory the rules enter, a file they serve, a link that stays inside
/// the root and leads to something served).
fn entry_of(shared: &Shared, dir: &std::path::Path, name: &str) -> Option<(String, &'static str, u64)> {
    let path = dir.join(name);
    let child = shared.jail.relative(&path)?;
    if path.symlink_metadata().ok()?.file_type().is_symlink()
        && !shared.jail.resolve(&child).is_ok_and(|real| super::served(shared, &real) || real.is_dir())
    {
        return None; // leads outside the root, or to something not served
    }
    let meta = std::fs::metadata(&path).ok()?;
    if meta.is_dir() {
        shared.rules.enters(&child).then(|| (name.to_owned(), "directory", 0))
    } else {
        shared.rules.serves(&child).then(|| (name.to_owned(), "file", meta.len()))
    }
}

fn list_dir(shared: &Shared, args: ListDirArgs) -> CallToolResult {
    let rel = args.path.unwrap_or_default();
    let dir = if rel.is_empty() || rel == "." {
        shared.jail.root().to_path_buf()
    } else {
        match shared.jail.resolve(&rel) {
            Ok(p) => p,
            Err(e) => return CallToolResult::error(e.to_string()),
        }
    };
    let names = match shared.listings.names(&dir) {
        Ok(names) => names,
        Err(e) => return CallToolResult::error(format!("{rel:?}: {e}")),
    };
    let after = match args.cursor.as_deref().map(decode_cursor).transpose() {
        Ok(after) => after,
        Err(e) => return CallToolResult::error(e.to_string()),
    };
    let start = after.map_or(0, |after| names.partition_point(|n| n.as_str() <= after.as_str()));
    // Only this page's entries are looked at: stat, rules, links.
    let mut items = Vec::with_capacity(LIST_PAGE);
    let mut next_cursor = None;
    for name in &names[start..] {
        let Some(entry) = entry_of(shared, &dir, name) else { continue };
        if items.len() == LIST_PAGE {
            next_cursor = items.last().map(|(n, _, _): &(String, &str, u64)| encode_cursor(n));
            break;
        }
        items.push(entry);
    }
    let page = mcp_protocol::pagination::Page { items, next_cursor };
    let text: Vec<String> = page
        .items
        .iter()
        .map(|(n, k, size)| if *k == "directory" { format!("{n}/") } else { format!("{n}\t{size}") })
        .collect();
    let structured = json!({
        "path": shared.jail.relative(&dir).unwrap_or_default(),
        "entries": page.items.iter().map(|(n, k, size)| json!({"name": n, "kind": k, "size": size})).collect::<Vec<_>>(),
        "nextCursor": page.next_cursor,
    });
    CallToolResult {
        content: vec![Content::text(text.join("\n"))],
        structured_content: Some(structured),
        is_error: None,
    }
}

fn search(shared: &Shared, args: SearchArgs, cancel: &tokio_util::sync::CancellationToken) -> CallToolResult {
    let from = match args.path.as_deref().filter(|p| !p.is_empty() && *p != ".") {
        None => shared.jail.root().to_path_buf(),
        Some(p) => match shared.jail.resolve(p) {
            Ok(p) => p,
            Err(e) => return CallToolResult::error(e.to_string()),
        },
    };
    let matcher: Box<dyn Fn(&str) -> bool> = if args.regex {
        match regex::RegexBuilder::new(&args.query).size_limit(1 << 20).build() {
            Ok(re) => Box::new(move |line| re.is_match(line)),
            Err(e) => return CallToolResult::error(format!("invalid regular expression: {e}")),
        }
    } else {
        let q = args.query.clone();
        Box::new(move |line| line.contains(q.as_str()))
    };
    let limit = args.max_results.unwrap_or(shared.config.search_max_results).clamp(1, shared.config.search_max_results);
    let mut matches = Vec::new();
    let mut truncated = false;
    'files: for file in walk(shared, &from, &slog::Logger::root(slog::Discard, slog::o!())).files {
        if cancel.is_cancelled() {
            break;
        }
        // Only regular files, read bounded: a device or FIFO under the root
        // (or a link to one) is skipped, never read or waited on.
        let Ok(bytes) = files::read_regular(&file, shared.config.max_file_bytes) else { continue };
        let Ok(text) = String::from_utf8(bytes) else { continue };
        let rel = shared.jail.relative(&file).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if matcher(line) {
                if matches.len() == limit {
                    truncated = true;
                    break 'files;
                }
                let shown: String = line.chars().take(200).collect();
                matches.push(json!({"path": rel, "line": i + 1, "text": shown}));
            }
        }
    }
    let text: Vec<String> = matches
        .iter()
        .map(|m| format!("{}:{}: {}", m["path"].as_str().unwrap_or(""), m["line"], m["text"].as_str().unwrap_or("")))
        .collect();
    let summary = if matches.is_empty() { "no matches".to_string() } else { text.join("\n") };
    CallToolResult {
        content: vec![Content::text(summary)],
        structured_content: Some(json!({"matches": matches, "truncated": truncated})),
        is_error: None,
    }
}

/// Adds the tools to `catalog`.
pub(crate) fn add(catalog: &Catalog, shared: &Arc<Shared>) -> Result<(), CatalogError> {
    let s = shared.clone();
    catalog.add_tool(
        Tool::new(
            "read_file",
            "Reads a file under the served root (path relative to the root)",
            move |a: ReadFileArgs, _| {
                let s = s.clone();
                async move { Ok(read_file(&s, a)) }
            },
        )
        .with_annotations(ToolAnnotations::read_only()),
    )?;
    let s = shared.clone();
    catalog.add_tool(
        Tool::new(
            "list_dir",
            "Lists a directory under the served root, 100 entries per page",
            move |a: ListDirArgs, _| {
                let s = s.clone();
                async move { Ok(list_dir(&s, a)) }
            },
        )
        .with_annotations(ToolAnnotations::read_only())
        .with_view(super::browser::BROWSER),
    )?;
    let s = shared.clone();
    catalog.add_tool(
        Tool::new(
            "search",
            "Searches the served files for a substring or regular expression; returns path:line: text, bounded",
            move |a: SearchArgs, ctx| {
                let s = s.clone();
                async move {
                    let cancel = ctx.cancellation().clone();
                    // File I/O runs off the actor thread; cancellation stops it between files.
                    let result = actix_rt::task::spawn_blocking(move || search(&s, a, &cancel)).await;
                    Ok(result.unwrap_or_else(|e| CallToolResult::error(format!("search failed: {e}"))))
                }
            },
        )
        .with_annotations(ToolAnnotations::read_only())
        .with_view(super::browser::BROWSER),
    )?;
    Ok(())
}
