//! The root slog logger, built from [`LogConfig`].
//! Output always goes to stderr: on stdio, stdout carries only MCP messages.

use slog::{o, Drain, Level, Logger};

use crate::config::{ConfigError, LogConfig};

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

/// Builds the root logger: terminal or JSON to stderr, filtered by level,
/// through an async drain so logging never blocks an actor.
pub fn root_logger(config: &LogConfig) -> Result<Logger, ConfigError> {
    let level = parse_level(&config.level)?;
    let values = o!("service" => "actix-mcp");
    Ok(match config.format.as_str() {
        "json" => {
            let json = slog_json::Json::new(std::io::stderr()).add_default_keys().build().fuse();
            let drain = slog_async::Async::new(json).chan_size(4096).build().fuse();
            Logger::root(drain.filter_level(level).fuse(), values)
        }
        _ => {
            let decorator = slog_term::PlainDecorator::new(std::io::stderr());
            let term = slog_term::FullFormat::new(decorator).build().fuse();
            let drain = slog_async::Async::new(term).chan_size(4096).build().fuse();
            Logger::root(drain.filter_level(level).fuse(), values)
        }
    })
}

/// A logger that drops everything (for tests and embedding without logs).
pub fn discard() -> Logger {
    Logger::root(slog::Discard, o!())
}
