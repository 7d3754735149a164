//! Shutting an HTTP server down gracefully — the one [`serve`](super::serve)
//! runs, or an application's own with the endpoint mounted
//! ([`run_until`]): the drain, while requests are still served; the
//! subscriptions' completion results; the running requests' last chance;
//! then the listener of `metrics.bind`.

use std::future::Future;
use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use slog::info;

use crate::server::{shutdown_signal, McpServer, Signal};

/// Before the end of `http.shutdown_timeout_secs`, requests still running
/// are ended with an error response, this long before their connections
/// would be closed.
const ABORT_MARGIN: Duration = Duration::from_millis(500);

/// Runs `http` — an actix-web server whose `App`s mount `server` with
/// [`configure`](super::configure) (or [`configure_endpoint`](super::configure_endpoint))
/// — until `stop` resolves, then shuts it down as [`serve`](super::serve)
/// does at that signal, and resolves once it has stopped:
///
/// 1. at [`Signal::Terminate`], the drain: for `shutdown.drain_ms`,
///    `/readyz` answers 503 while every request is still served (MCP
///    responses with `Connection: close`); a second SIGINT or SIGTERM cuts
///    it short. [`Signal::Interrupt`] skips it.
/// 2. every subscription gets its completion result
///    ([`McpServer::shutdown`]); the gateway's upstreams end with the server.
/// 3. `http` stops accepting; its running requests have
///    `http.shutdown_timeout_secs` of `server`'s configuration, less half a
///    second, after which those still running answer -32603 "server
///    shutting down" ([`McpServer::abort_requests`]).
/// 4. the listener of `metrics.bind`, if any, stops.
/// 5. once `http` has stopped, the audit log is closed
///    ([`McpServer::close_audit`]): every record written and synced.
///
/// Build `http` with `.disable_signals()` — otherwise actix-web stops it on
/// its own at SIGINT or SIGTERM, without the drain — and with
/// `.shutdown_timeout(http.shutdown_timeout_secs)`. For the process's
/// signals pass [`shutdown_signal()`](crate::server::shutdown_signal); any
/// future of a [`Signal`] will do (a channel of your own, a test's).
pub async fn run_until(
    server: McpServer,
    http: Server,
    stop: impl Future<Output = Signal> + 'static,
) -> std::io::Result<()> {
    let handle = http.handle();
    let closing = server.clone();
    actix_rt::spawn(async move {
        let signal = stop.await;
        stop_gracefully(&server, &handle, signal).await;
    });
    let served = http.await;
    // The worker threads may still hold the server: the audit log is
    // closed here, not when the last handle goes.
    closing.close_audit();
    crate::telemetry::flush_spans();
    served
}

/// The shutdown after `signal`, of `http` serving `server` (see [`run_until`]).
async fn stop_gracefully(server: &McpServer, http: &ServerHandle, signal: Signal) {
    drain(server, signal).await;
    let open = server.shutdown().await;
    info!(server.logger(), "shutting down"; "subscriptions_closed" => open);
    // Running requests get the shutdown timeout to finish, less a margin in
    // which those still running answer an error before their connections
    // are closed.
    let grace = Duration::from_secs(server.config().http.shutdown_timeout_secs).saturating_sub(ABORT_MARGIN);
    let stopped = http.stop(true);
    let abort = async {
        tokio::time::sleep(grace).await;
        server.abort_requests();
        std::future::pending::<()>().await
    };
    tokio::select! {
        _ = stopped => {}
        _ = abort => {}
    }
    server.stop_metrics_listener().await;
}

/// The drain phase at SIGTERM: for `shutdown.drain_ms`, `/readyz` answers
/// 503 so that the load balancer takes the instance out of rotation, while
/// every request that still arrives is served, with `Connection: close`
/// (which retires the balancer's kept-alive connections). SIGINT skips it,
/// and a second signal cuts it short.
async fn drain(server: &McpServer, signal: Signal) {
    let ms = server.config().shutdown.drain_ms;
    if signal == Signal::Interrupt || ms == 0 {
        return;
    }
    server.begin_draining();
    info!(server.logger(), "draining: /readyz answers 503 while requests are still served"; "drain_ms" => ms);
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
        _ = shutdown_signal() => info!(server.logger(), "a second signal: the drain is cut short"),
    }
}
