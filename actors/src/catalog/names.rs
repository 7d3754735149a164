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

pub(super) fn check_tool(tool: &Tool) -> Result<(), CatalogError> {
    check_name("tool", tool.name())?;
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
