//! Built-in catalogs, selectable with `--catalog NAME`.

pub mod everything;
#[cfg(feature = "fs")]
#[cfg_attr(docsrs, doc(cfg(feature = "fs")))]
pub mod fs;

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::config::Config;

/// Names of the built-in catalogs.
pub const NAMES: &[&str] = &["fs", "everything", "none"];

/// Builds the built-in catalog the configuration names (none named: `fs`,
/// or an empty one when upstreams are configured).
pub fn build(config: &Config, log: &slog::Logger) -> Result<Arc<Catalog>, String> {
    let name = match config.catalog.name.as_str() {
        "" if config.upstreams.is_empty() => "fs",
        "" => "none",
        named => named,
    };
    match name {
        "everything" => Ok(Arc::new(everything::catalog())),
        #[cfg(feature = "fs")]
        "fs" => fs::build(&config.fs, log),
        #[cfg(not(feature = "fs"))]
        "fs" => {
            let _ = log;
            Err(crate::config::needs_feature("the fs catalog", "fs").0)
        }
        "none" => Ok(Arc::new(Catalog::new())),
        other => Err(format!("unknown catalog {other:?}; built-in catalogs: {}", NAMES.join(", "))),
    }
}
