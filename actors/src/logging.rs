//! The root slog logger, built from [`LogConfig`].
//! Output always goes to stderr: on stdio, stdout carries only MCP messages.

use slog::{o, Drain, Logger};

use crate::config::{parse_level, ConfigError, LogConfig};

/// Flushes buffered log records when dropped (keep it until the end of `main`).
pub struct LogGuard(#[allow(dead_code)] slog_async::AsyncGuard);

impl std::fmt::Debug for LogGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogGuard")
    }
}

/// Builds the root logger: terminal or JSON to stderr, filtered by level,
/// through an async drain so logging never blocks an actor. Records still
/// queued are written when the returned guard is dropped.
pub fn root_logger_with_guard(config: &LogConfig) -> Result<(Logger, LogGuard), ConfigError> {
    let level = parse_level(&config.level)?;
    let values = o!("service" => "actix-mcp");
    Ok(match config.format.as_str() {
        "json" => {
            // Buffered and flushed per record: each line reaches stderr in one
            // write, so lines from elsewhere (the `listening on` line) never
            // land inside a log record.
            let out = std::io::BufWriter::with_capacity(16 * 1024, std::io::stderr());
            let json = slog_json::Json::new(out).set_flush(true).add_default_keys().build().fuse();
            let (drain, guard) = slog_async::Async::new(json).chan_size(4096).build_with_guard();
            (Logger::root(drain.fuse().filter_level(level).fuse(), values), LogGuard(guard))
        }
        _ => {
            let decorator =
                slog_term::PlainDecorator::new(std::io::BufWriter::with_capacity(16 * 1024, std::io::stderr()));
            let term = slog_term::FullFormat::new(decorator).build().fuse();
            let (drain, guard) = slog_async::Async::new(term).chan_size(4096).build_with_guard();
            (Logger::root(drain.fuse().filter_level(level).fuse(), values), LogGuard(guard))
        }
    })
}

/// Builds the root logger (see [`root_logger_with_guard`]); records still
/// queued when the last clone of the logger is dropped are written then.
pub fn root_logger(config: &LogConfig) -> Result<Logger, ConfigError> {
    let (log, guard) = root_logger_with_guard(config)?;
    // Without a guard the drain flushes when the logger itself is dropped.
    std::mem::forget(guard);
    Ok(log)
}

/// A logger that drops everything (for tests and embedding without logs).
pub fn discard() -> Logger {
    Logger::root(slog::Discard, o!())
}
