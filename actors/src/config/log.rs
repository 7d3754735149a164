//! `[log]`: slog output format and level.

use serde::{Deserialize, Serialize};
use slog::Level;

use super::error::ConfigError;
use super::LogFormat;

/// `[log]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// `term` (human) or `json`. Default: `term`.
    pub format: LogFormat,
    /// `trace`, `debug`, `info`, `warning`, `error` or `critical`. Default: `info`.
    pub level: String,
    /// A request running longer than this many ms is logged at INFO with
    /// its method and duration (requests are otherwise logged at DEBUG).
    /// Default: 1000.
    pub slow_ms: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { format: LogFormat::Term, level: "info".into(), slow_ms: 1000 }
    }
}

/// Parses a level name (`warn` is accepted for `warning`).
pub fn parse_level(name: &str) -> Result<Level, ConfigError> {
    match name {
        "trace" => Ok(Level::Trace),
        "debug" => Ok(Level::Debug),
        "info" => Ok(Level::Info),
        "warning" | "warn" => Ok(Level::Warning),
        "error" => Ok(Level::Error),
        "critical" => Ok(Level::Critical),
        other => Err(ConfigError(format!("log.level {other:?} is not a level"))),
    }
}
