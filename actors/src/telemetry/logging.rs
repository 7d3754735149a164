//! The root slog logger, built from [`LogConfig`].
//! Output always goes to stderr: on stdio, stdout carries only MCP messages.

use slog::{o, Drain, Logger};

use crate::config::{parse_level, ConfigError, LogConfig, LogFormat};

/// Flushes buffered log records when dropped (keep it until the end of `main`).
pub struct LogGuard(#[allow(dead_code)] slog_async::AsyncGuard);

impl std::fmt::Debug for LogGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogGuard")
    }
}

/// Builds the root logger of the `actix-mcp` program (see
/// [`root_logger_for`]).
pub fn root_logger_with_guard(config: &LogConfig) -> Result<(Logger, LogGuard), ConfigError> {
    root_logger_for(config, "actix-mcp")
}

/// Builds the root logger of the program named `service` (every record
/// carries `service`): terminal or JSON to stderr, filtered by level,
/// through an async drain so logging never blocks an actor. Records still
/// queued are written when the returned guard is dropped.
pub fn root_logger_for(config: &LogConfig, service: &str) -> Result<(Logger, LogGuard), ConfigError> {
    root_logger_into(config, service, std::io::stderr())
}

/// [`root_logger_for`] writing to `out`.
fn root_logger_into<W: std::io::Write + Send + 'static>(
    config: &LogConfig,
    service: &str,
    out: W,
) -> Result<(Logger, LogGuard), ConfigError> {
    let level = parse_level(&config.level)?;
    let values = o!("service" => service.to_owned());
    Ok(match config.format {
        LogFormat::Json => {
            // Buffered and flushed per record: each line reaches stderr in one
            // write, so lines from elsewhere (the `listening on` line) never
            // land inside a log record.
            let out = std::io::BufWriter::with_capacity(16 * 1024, out);
            let json = slog_json::Json::new(out).set_flush(true).add_default_keys().build().fuse();
            let (drain, guard) = slog_async::Async::new(json).chan_size(4096).build_with_guard();
            (Logger::root(drain.fuse().filter_level(level).fuse(), values), LogGuard(guard))
        }
        LogFormat::Term => {
            let text = super::text_log::TextDrain::new(std::io::BufWriter::with_capacity(16 * 1024, out)).fuse();
            let (drain, guard) = slog_async::Async::new(text).chan_size(4096).build_with_guard();
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

/// At most `per_window` log lines per window of time, for lines that a
/// client can cause at will (refusals): past it lines are counted, not
/// written, and the next line written says how many were left out. A
/// window begins with the first line written in it (not when the limit
/// was made), so that with one line per window any two lines written are
/// at least a window apart.
#[derive(Debug)]
pub struct RateLimit {
    per_window: u32,
    window: std::time::Duration,
    state: std::sync::Mutex<RateState>,
}

#[derive(Debug)]
struct RateState {
    /// When the window began (at the first line written in it); `None`
    /// before any line.
    started: Option<std::time::Instant>,
    written: u32,
    suppressed: u64,
}

impl RateLimit {
    /// A limit of `per_window` lines per `window`.
    pub fn new(per_window: u32, window: std::time::Duration) -> Self {
        let state = RateState { started: None, written: 0, suppressed: 0 };
        RateLimit { per_window, window, state: std::sync::Mutex::new(state) }
    }

    /// Whether a line may be written now: `Some(n)` with the number of
    /// lines left out since the last one written, `None` to leave it out.
    pub fn admit(&self) -> Option<u64> {
        self.admit_at(std::time::Instant::now())
    }

    /// [`RateLimit::admit`] at `now`.
    pub(crate) fn admit_at(&self, now: std::time::Instant) -> Option<u64> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.started.is_none_or(|at| now.saturating_duration_since(at) >= self.window) {
            s.started = Some(now);
            s.written = 0;
        }
        if s.written >= self.per_window {
            s.suppressed += 1;
            return None;
        }
        s.written += 1;
        Some(std::mem::take(&mut s.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn records_name_the_program() {
        let out = Shared::default();
        let config = LogConfig { format: LogFormat::Json, ..LogConfig::default() };
        let (log, guard) = root_logger_into(&config, "weather", out.clone()).unwrap();
        slog::info!(log, "started");
        drop(log);
        drop(guard);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let record: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!((record["service"].as_str(), record["msg"].as_str()), (Some("weather"), Some("started")), "{text}");
    }

    #[test]
    fn a_rate_limit_counts_what_it_leaves_out() {
        let limit = RateLimit::new(2, Duration::from_secs(1));
        let t0 = Instant::now();
        assert_eq!(limit.admit_at(t0), Some(0));
        assert_eq!(limit.admit_at(t0), Some(0));
        assert_eq!(limit.admit_at(t0), None);
        assert_eq!(limit.admit_at(t0 + Duration::from_millis(500)), None);
        assert_eq!(limit.admit_at(t0 + Duration::from_secs(1)), Some(2), "the next line says two were left out");
        assert_eq!(limit.admit_at(t0 + Duration::from_secs(1)), Some(0));
    }
}
