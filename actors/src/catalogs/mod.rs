//! Built-in catalogs, selectable with `--catalog NAME`.

pub mod everything;

use std::sync::Arc;

use crate::catalog::Catalog;

/// Names of the built-in catalogs.
pub const NAMES: &[&str] = &["everything"];

/// Builds a built-in catalog by name.
pub fn build(name: &str) -> Result<Arc<Catalog>, String> {
    match name {
        "everything" => Ok(Arc::new(everything::catalog())),
        other => Err(format!("unknown catalog {other:?}; built-in catalogs: {}", NAMES.join(", "))),
    }
}
