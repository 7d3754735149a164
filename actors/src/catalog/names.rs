//! What a catalog refuses in an item's name or URI.

use super::{CatalogError, Tool};

/// The specification's rule for tool names (and ours for prompt names):
/// 1 to 128 characters from `A-Z a-z 0-9 _ - .`.
pub(super) fn check_name(kind: &str, name: &str) -> Result<(), CatalogError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || name.len() > 128 || !name.chars().all(ok_char) {
        return Err(CatalogError(format!(
            "{kind} name {name:?}: 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'"
        )));
    }
    Ok(())
}

/// A tool's name, its `inputSchema` (a JSON Schema object of `"type":
/// "object"`, as the specification's schema requires) and its `x-mcp-header`
/// annotations.
pub(super) fn check_tool(tool: &Tool) -> Result<(), CatalogError> {
    check_name("tool", tool.name())?;
    let schema = &tool.def.input_schema;
    if schema.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err(CatalogError(format!(
            "tool {}: its inputSchema must be a JSON Schema object with \"type\": \"object\", not {}",
            tool.name(),
            shown(schema)
        )));
    }
    if let Err(e) = &tool.header_params {
        return Err(CatalogError(format!("tool {}: {e}", tool.name())));
    }
    Ok(())
}

pub(super) fn check_uri(uri: &str) -> Result<(), CatalogError> {
    if uri.is_empty() || uri.chars().any(char::is_whitespace) {
        return Err(CatalogError(format!("resource URI {uri:?}: not empty, no whitespace")));
    }
    Ok(())
}

/// A JSON value in a log line or an error: at most 80 characters of it.
pub(super) fn shown(v: &serde_json::Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
