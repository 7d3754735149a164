//! `[status]`: the live status page for operators.

use serde::{Deserialize, Serialize};

/// `[status]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StatusConfig {
    /// Serve the page at `path` and its data at `{path}.json`. Default: false.
    pub enabled: bool,
    /// Default: `/status`.
    pub path: String,
    /// Answer clients that are not on loopback too (otherwise they get
    /// 403). Default: false.
    pub allow_remote: bool,
}

impl Default for StatusConfig {
    fn default() -> Self {
        StatusConfig { enabled: false, path: "/status".into(), allow_remote: false }
    }
}
