//! The gateway: other MCP servers served through this one. Each
//! `[[upstreams]]` entry gets an [`Upstream`] actor that starts the server
//! (stdio) or connects to it (Streamable HTTP, either era) with
//! [`crate::client`], and serves its items from the shared catalog — tools
//! and prompts as `PREFIX__name`, resources under their own URIs — so that
//! everything this server does for its own items (both eras, listen
//! streams, authorization and scopes, metrics, several instances over
//! Redis) it does for theirs.
//!
//! ```no_run
//! use actix_mcp::catalog::Catalog;
//! use actix_mcp::config::{Config, UpstreamConfig};
//! use actix_mcp::gateway::Gateway;
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # actix_rt::System::new().block_on(async {
//! let mut config = Config::default();
//! config.upstreams.push(UpstreamConfig::parse_flag("everything=npx -y @modelcontextprotocol/server-everything")?);
//! let catalog = Arc::new(Catalog::new());
//! let log = slog::Logger::root(slog::Discard, slog::o!());
//! let gateway = Gateway::start(&config, &catalog, &log);
//! assert_eq!(gateway.statuses()[0].name, "everything");
//! # Ok(()) })
//! # }
//! ```

mod claims;
mod connect;
mod control;
mod fleet;
mod flow;
mod forward;
mod homes;
mod mirror;
mod names;
mod pins;
mod routes;
mod status;
mod upstream;

use std::sync::{Arc, Mutex};

pub use fleet::FleetChange;
pub use pins::approve as approve_pins;
pub use status::{UpstreamState, UpstreamStatus};
pub use upstream::Upstream;

use crate::catalog::Catalog;
use crate::config::Config;

/// The running upstreams of a server. Dropping it does not stop them; they
/// stop with the actix system (or [`Gateway::stop`]). Clones share them: a
/// [`Gateway::reload`] through one is seen by all.
#[derive(Clone)]
pub struct Gateway {
    fleet: Arc<Mutex<fleet::Fleet>>,
    /// Why an upstream was refused at start-up, once one is.
    refused: tokio::sync::watch::Receiver<Option<String>>,
}

/// The pins of `gateway.pins` (`None`: none set), read from the file.
fn load_pins(config: &Config) -> Result<Option<Arc<pins::Pins>>, String> {
    match config.gateway.pins.as_str() {
        "" => Ok(None),
        path => pins::Pins::load(std::path::Path::new(path)).map(|p| Some(Arc::new(p))),
    }
}

/// The gateway part of a reload, checked before anything changes.
pub struct GatewayReload {
    upstreams: Vec<crate::config::UpstreamConfig>,
    pins: Option<Arc<pins::Pins>>,
}

impl Gateway {
    /// Starts one [`Upstream`] actor per configured upstream, serving into
    /// `catalog`, and registers with it (its shared state), where readiness
    /// and the status page look. Must run inside an actix system.
    pub fn start(config: &Config, catalog: &Arc<Catalog>, log: &slog::Logger) -> Gateway {
        let (refusals, refused) = tokio::sync::watch::channel(None);
        let pins = load_pins(config).unwrap_or_else(|e| {
            // A start-up error: unpinned definitions must not be served.
            let _ = refusals.send(Some(format!("gateway.pins: {e}")));
            None
        });
        let mut fleet = fleet::Fleet::new(catalog, &config.gateway, log);
        fleet.start_all(&config.upstreams, pins, &refusals);
        Gateway { fleet: Arc::new(Mutex::new(fleet)), refused }
    }

    /// The gateway part of reloading `config`: the pins file read again (an
    /// error when it cannot be read or is not a pins file).
    pub fn prepare_reload(config: &Config) -> Result<GatewayReload, String> {
        let pins = load_pins(config).map_err(|e| format!("gateway.pins: {e}"))?;
        Ok(GatewayReload { upstreams: config.upstreams.clone(), pins })
    }

    /// Runs the upstreams of `reload` from now on: an unchanged upstream
    /// goes on (screened again when the pins changed), a removed or changed
    /// one is stopped — its items leave at once, its calls in flight finish
    /// first — and an added or changed one is started.
    pub fn reload(&self, reload: GatewayReload) -> FleetChange {
        self.fleet().reload(&reload.upstreams, reload.pins)
    }

    /// An HTTP server's workers are about to start and call
    /// [`Gateway::worker_started`]: a stdio upstream opening before the
    /// first has waits for it (at most two seconds), so that its
    /// connection lives on a worker's thread. [`crate::transport::http::configure`]
    /// calls both; an embedder mounting the endpoint another way may too.
    pub fn workers_expected(&self) {
        self.fleet().homes.expect();
    }

    /// The current thread is an HTTP worker's (call it from the `App`
    /// factory): stdio upstreams may keep their connection here, so that a
    /// call forwarded from this worker reads and writes the upstream's
    /// pipes on its own thread instead of crossing to another and back.
    /// Upstreams are spread over the workers registered when they open.
    pub fn worker_started(&self) {
        self.fleet().homes.register_current();
    }

    fn fleet(&self) -> std::sync::MutexGuard<'_, fleet::Fleet> {
        self.fleet.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resolves when an upstream is refused at start-up — its first listing
    /// found a resource URI or template another upstream serves — with why
    /// (naming both); never otherwise. The binary exits with it.
    pub async fn refusal(&self) -> String {
        let mut refused = self.refused.clone();
        let why = refused.wait_for(Option::is_some).await.map(|why| why.clone().unwrap_or_default());
        match why {
            Ok(why) => why,
            Err(_) => std::future::pending().await,
        }
    }

    /// Where each upstream stands, in configuration order.
    pub fn statuses(&self) -> Vec<UpstreamStatus> {
        self.fleet().running.iter().map(|r| r.status.lock().expect("status lock").clone()).collect()
    }

    /// The upstreams as the status page shows them: name, state (`up`,
    /// `starting`, `down`), version or reason, restarts, items served, the
    /// last start's duration, resources subscribed to, requests forwarded
    /// (finished, failed, mean latency).
    pub fn status_json(&self) -> serde_json::Value {
        let rows = self.statuses().into_iter().map(|s| {
            let (state, detail) = match s.state {
                UpstreamState::Starting => ("starting", serde_json::Value::Null),
                UpstreamState::Up { version } => ("up", serde_json::json!({ "version": version })),
                UpstreamState::Down { reason } => ("down", serde_json::json!({ "reason": reason })),
            };
            serde_json::json!({
                "name": s.name, "required": s.required, "state": state, "detail": detail,
                "restarts": s.restarts, "items": s.items,
                "connect_ms": s.connect_time.map(|d| d.as_millis() as u64),
                "subscriptions": s.subscriptions,
                "calls": s.calls, "errors": s.errors, "refused": s.refused,
                "mean_ms": (s.calls > 0).then(|| s.call_time.as_secs_f64() * 1000.0 / s.calls as f64),
            })
        });
        serde_json::Value::Array(rows.collect())
    }

    /// Resolves once every required upstream's first start has settled —
    /// it is up, or down because its start failed or timed out (each start
    /// is bounded by the upstream's `timeout_ms`). A stdio server waits for
    /// it before reading its input, as `/readyz` holds HTTP traffic back.
    pub async fn started(&self) {
        let settled = |s: &UpstreamStatus| !s.required || s.restarts > 0 || s.state != UpstreamState::Starting;
        while !self.statuses().iter().all(settled) {
            actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Whether every required upstream is up.
    pub fn ready(&self) -> bool {
        self.statuses().iter().all(|s| !s.required || matches!(s.state, UpstreamState::Up { .. }))
    }

    /// The server is shutting down ([`McpServer::shutdown`](crate::McpServer::shutdown)
    /// says so): an upstream whose connection ends from now on — a stdio
    /// one's ends with the HTTP worker it lives on — is not started again,
    /// and its end is logged at INFO, not as a fault.
    pub fn closing(&self) {
        self.fleet().closing.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Stops every upstream: their items leave the catalog, their
    /// processes end.
    pub fn stop(&self) {
        for r in &self.fleet().running {
            r.addr.do_send(control::Stop);
        }
    }
}
