//! Running a server as a program: a fresh actix system, the root logger,
//! then Streamable HTTP or stdio until the end. The `actix-mcp` binary and
//! the builder's `run_*` methods share it.

use std::fmt;

use slog::Logger;

use crate::config::{ConfigError, LogConfig};
use crate::server::McpServer;
use crate::transport;

/// Which transport a program serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Streamable HTTP on `http.bind`, until SIGINT/SIGTERM.
    Http,
    /// stdin/stdout, until EOF or SIGINT/SIGTERM.
    Stdio,
}

/// Why a program stopped with an error: building the server (`make`'s
/// error), the root logger, or serving.
#[derive(Debug)]
pub enum RunError<E> {
    /// `make` failed.
    Make(E),
    /// The `log.*` configuration is invalid.
    Logger(ConfigError),
    /// Serving failed (a port in use, an I/O error).
    Serve(std::io::Error),
}

impl<E: fmt::Display> fmt::Display for RunError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Make(e) => e.fmt(f),
            RunError::Logger(e) => e.fmt(f),
            RunError::Serve(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Display + fmt::Debug> std::error::Error for RunError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Make(_) => None,
            RunError::Logger(e) => Some(e),
            RunError::Serve(e) => Some(e),
        }
    }
}

/// Builds the server with `make` inside a fresh actix system (it receives
/// the root logger: `log` if given, else one built from `log_config` whose
/// records name `service`, the program) and serves `transport` until the end.
///
/// Serving stdio ends the process (exit status 0, or 1 after printing the
/// error): a read of stdin may still be blocked in a runtime thread, which
/// nothing can cancel.
pub fn run<E: fmt::Display>(
    service: &str,
    log_config: &LogConfig,
    log: Option<Logger>,
    transport: Transport,
    make: impl FnOnce(Logger) -> Result<McpServer, E> + 'static,
) -> Result<(), RunError<E>> {
    let (log, guard) = match log {
        Some(l) => (l, None),
        None => {
            let (l, g) = crate::telemetry::logging::root_logger_for(log_config, service).map_err(RunError::Logger)?;
            (l, Some(g))
        }
    };
    let system = actix_rt::System::new();
    let result = system.block_on(async move {
        let server = make(log).map_err(RunError::Make)?;
        let served = match transport {
            Transport::Http => transport::http::serve(server).await,
            Transport::Stdio => transport::stdio::serve_std(server).await,
        };
        // The server's actors get their first poll inside the runtime even
        // when serving failed at once (a port in use): dropping the system
        // afterwards must not start them outside it.
        actix_rt::task::yield_now().await;
        served.map_err(RunError::Serve)
    });
    if transport == Transport::Stdio {
        drop(guard);
        std::process::exit(match &result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{e}");
                1
            }
        });
    }
    drop(system);
    drop(guard);
    result
}
