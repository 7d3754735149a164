//! Built-in catalogs, selectable with `--catalog NAME`.

pub mod everything;
pub mod fs;

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::config::Config;

/// Names of the built-in catalogs.
pub const NAMES: &[&str] = &["fs", "everything"];

/// Builds the built-in catalog the configuration names.
pub fn build(config: &Config, log: &slog::Logger) -> Result<Arc<Catalog>, String> {
    match config.catalog.name.as_str() {
        "everything" => Ok(Arc::new(everything::catalog())),
        "fs" => fs::build(&config.fs, log),
        other => Err(format!("unknown catalog {other:?}; built-in catalogs: {}", NAMES.join(", "))),
    }
}
