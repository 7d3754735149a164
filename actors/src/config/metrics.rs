//! `[metrics]`: Prometheus metrics.

use serde::{Deserialize, Serialize};

/// `[metrics]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Record metrics and serve them. Default: true.
    pub enabled: bool,
    /// Empty (default): serve `path` on the main port. `ADDR:PORT`: on a
    /// listener of its own (recommended when the main port is reachable
    /// from outside: metrics then need no exposure beyond the scraper's
    /// network, and no authorization).
    pub bind: String,
    /// The path of the text exposition. Default: `/metrics`.
    pub path: String,
    /// Label `tools/call` durations with the tool's name
    /// (`gen_ai_tool_name`). Default: false: tool names are chosen by
    /// whoever registers tools, so they are left out unless asked for; when
    /// on, only names in the catalog are used (others read `_other`).
    pub tool_labels: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig { enabled: true, bind: String::new(), path: "/metrics".into(), tool_labels: false }
    }
}
