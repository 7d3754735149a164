//! Shutting down: readiness fails first (and at SIGTERM the HTTP server
//! drains, still serving), subscriptions end with their completion result,
//! then running requests are answered "server shutting down"; and the
//! signal that starts it.

use std::time::{Duration, Instant};

use super::McpServer;
use crate::hub::Shutdown;

impl McpServer {
    /// Starts draining: readiness answers 503 from now on, so that a load
    /// balancer takes the instance out of rotation, while requests are
    /// still served (HTTP answers them with `Connection: close`).
    pub fn begin_draining(&self) {
        self.inner.draining.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether the server is draining or shutting down.
    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Ends every running request with an error response (-32603 "server
    /// shutting down"): the last step of a graceful shutdown, so that no
    /// request is cut off without an answer.
    pub fn abort_requests(&self) {
        self.inner.stopping.cancel();
    }

    /// Closes the audit log, if one is configured: every record queued so
    /// far is written and synced and the closing head logged, before the
    /// process ends (see [`crate::audit::AuditLog::close`]). Call it after
    /// the requests are done; [`crate::transport::http::run_until`] and the
    /// stdio server do.
    pub fn close_audit(&self) {
        if let Some(audit) = self.service().audit() {
            audit.close();
        }
    }

    /// Ends every subscription gracefully (each listen stream receives its
    /// completion result, each events stream its final result) and waits
    /// until they are gone, at most `hub.drain_ms`.
    /// Returns how many were open. Readiness fails from now on, and the
    /// gateway's upstreams are not started again when their connections
    /// end (they end with the server).
    pub async fn shutdown(&self) -> usize {
        // Readiness fails first, so a load balancer stops sending new work
        // before the listeners get their completion result.
        self.begin_draining();
        // Upstream connections that end from now on end with the server.
        #[cfg(feature = "gateway")]
        if let Some(gateway) = self.gateway() {
            gateway.closing();
        }
        let open = self.inner.hub.send(Shutdown).await.unwrap_or(0);
        // Events streams end with their final result at the same moment.
        let service = self.service();
        service.close_event_streams();
        let open = open + service.open_event_streams();
        let deadline = Instant::now() + Duration::from_millis(self.inner.config.hub.drain_ms);
        while Instant::now() < deadline && (self.hub_stats().await.listeners > 0 || service.open_event_streams() > 0) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // The listen streams' spans ended with them.
        crate::telemetry::flush_spans();
        open
    }
}

/// The signal that asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C): someone at a terminal; no drain.
    Interrupt,
    /// SIGTERM: an orchestrator; the HTTP server drains first.
    Terminate,
}

/// Resolves at SIGINT or SIGTERM, with which it was. The signals are
/// listened for from the call on, not from the first poll: a signal that
/// arrives in between is not lost, nor does it end the process at once (as
/// it would with no handler yet). Call it within the runtime.
pub fn shutdown_signal() -> impl std::future::Future<Output = Signal> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (term, int) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt()));
        async move {
            match (term, int) {
                (Ok(mut term), Ok(mut int)) => tokio::select! {
                    _ = int.recv() => Signal::Interrupt,
                    _ = term.recv() => Signal::Terminate,
                },
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                    Signal::Interrupt
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
            Signal::Interrupt
        }
    }
}
