//! The Prometheus exposition (`[metrics]`) as the server renders it, and
//! the listener of `metrics.bind`: started when the server is built, so
//! that it listens whichever way the server is then served — by
//! [`serve`](crate::transport::http::serve), or mounted in an application's
//! own actix-web server with [`configure`](crate::transport::http::configure),
//! which then leaves `/metrics` off the application's port. Gauges that are
//! cheap to read but not kept live (legacy sessions, the Redis link) are
//! sampled at each scrape.

use std::net::SocketAddr;
use std::sync::Arc;

use actix::Addr;
use actix_web::dev::ServerHandle;

use super::build_error::BuildError;
use super::McpServer;
use crate::config::Config;
use crate::hub::BackendStats;
use crate::pipeline::legacy::SessionRegistry;

/// The running listener of `metrics.bind`.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(super) struct MetricsListener {
    handle: ServerHandle,
    addrs: Vec<SocketAddr>,
}

impl McpServer {
    /// The addresses the listener of `metrics.bind` listens on (empty
    /// without one). It starts when the server is built — embedded in an
    /// application's actix-web server or not — and stops at the end of
    /// [`serve`](crate::transport::http::serve) or
    /// [`run_until`](crate::transport::http::run_until), else with the
    /// actix system.
    pub fn metrics_addrs(&self) -> &[SocketAddr] {
        match &self.inner.metrics_listener {
            Some(listener) => &listener.addrs,
            None => &[],
        }
    }

    /// Stops the listener of `metrics.bind`, if there is one, once the
    /// scrapes in progress are answered.
    pub(crate) async fn stop_metrics_listener(&self) {
        if let Some(listener) = &self.inner.metrics_listener {
            listener.handle.stop(true).await;
        }
    }

    /// The exposition now (for `/metrics` on the main port, once the
    /// scraper is admitted).
    #[cfg(feature = "metrics")]
    pub(crate) async fn metrics_exposition(&self) -> actix_web::HttpResponse {
        exposition::render(self.session_count().await, self.backend_stats().map(|s| &**s))
    }
}

/// The listener of `metrics.bind`, when metrics are on and it is set,
/// sampling `sessions` and `backend` (parts of the server being built). An
/// address it cannot listen on is an error naming the key. Started last,
/// once nothing else of the build can fail: no address is held for a
/// server that was not built.
#[allow(unused_variables)]
pub(super) fn start_listener(
    config: &Config,
    sessions: &Addr<SessionRegistry>,
    backend: &Option<Arc<BackendStats>>,
    log: &slog::Logger,
) -> Result<Option<MetricsListener>, BuildError> {
    let m = &config.metrics;
    if !m.enabled || m.bind.is_empty() {
        return Ok(None);
    }
    #[cfg(feature = "metrics")]
    {
        let sampled = exposition::Sampled { sessions: sessions.clone(), backend: backend.clone() };
        let (handle, addrs) = exposition::listen(m, sampled)
            .map_err(|e| BuildError::Serve(format!("metrics.bind {:?}: cannot listen: {e}", m.bind)))?;
        slog::info!(log, "metrics listener started"; "addrs" => format!("{addrs:?}"), "path" => &m.path);
        Ok(Some(MetricsListener { handle, addrs }))
    }
    // `metrics.enabled` without the feature is refused before this.
    #[cfg(not(feature = "metrics"))]
    {
        Ok(None)
    }
}

#[cfg(feature = "metrics")]
mod exposition {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use actix::Addr;
    use actix_web::dev::ServerHandle;
    use actix_web::http::header;
    use actix_web::{web, App, HttpResponse, HttpServer};

    use crate::config::MetricsConfig;
    use crate::hub::BackendStats;
    use crate::pipeline::legacy::registry::Count;
    use crate::pipeline::legacy::SessionRegistry;
    use crate::telemetry;

    /// The exposition, with the gauges sampled now: `sessions` legacy
    /// sessions open, and the hub backend's link.
    pub(super) fn render(sessions: usize, backend: Option<&BackendStats>) -> HttpResponse {
        telemetry::legacy_sessions(sessions);
        if let Some(s) = backend {
            use std::sync::atomic::Ordering::Relaxed;
            telemetry::backend_link(&telemetry::BackendLink {
                connected: s.connected.load(Relaxed),
                outages: s.outages.load(Relaxed),
                resyncs: s.resyncs.load(Relaxed),
                published: s.published.load(Relaxed),
                received: s.received.load(Relaxed),
                deduplicated: s.deduplicated.load(Relaxed),
            });
        }
        match telemetry::rendered() {
            Some(text) => HttpResponse::Ok()
                .insert_header((header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8"))
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .body(text),
            None => HttpResponse::NotFound().body("another metrics recorder is installed in this process\n"),
        }
    }

    /// What the listener samples at each scrape.
    #[derive(Clone)]
    pub(super) struct Sampled {
        pub(super) sessions: Addr<SessionRegistry>,
        pub(super) backend: Option<Arc<BackendStats>>,
    }

    /// `GET` on the listener: the exposition, unguarded (the listener faces
    /// the scraper's network only).
    async fn scraped(sampled: web::Data<Sampled>) -> HttpResponse {
        let sessions = sampled.sessions.send(Count).await.unwrap_or(0);
        render(sessions, sampled.backend.as_deref())
    }

    /// Starts the listener — only the exposition at `metrics.path`, one
    /// worker — on the actix system's arbiter: its handle and the addresses
    /// it listens on.
    pub(super) fn listen(config: &MetricsConfig, sampled: Sampled) -> std::io::Result<(ServerHandle, Vec<SocketAddr>)> {
        let path = config.path.clone();
        let data = web::Data::new(sampled);
        let http = HttpServer::new(move || App::new().app_data(data.clone()).route(&path, web::get().to(scraped)))
            .workers(1)
            .disable_signals()
            .bind(&config.bind)?;
        let addrs = http.addrs();
        let http = http.run();
        let handle = http.handle();
        actix_rt::System::current().arbiter().spawn(async move {
            let _ = http.await;
        });
        Ok((handle, addrs))
    }
}
