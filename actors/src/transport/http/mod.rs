//! Streamable HTTP: one endpoint at `http.path` for both eras. POST takes
//! every message (`post`); GET and DELETE serve legacy sessions
//! (`session`). The entry points: [`configure`] mounts the endpoint on an
//! actix-web `App` (embedding), [`bind`] builds the server, [`serve`] runs
//! it until SIGINT/SIGTERM with graceful shutdown.

mod answer;
mod auth;
mod endpoint;
pub mod error;
pub mod guard;
mod headers;
mod health;
#[cfg(feature = "metrics")]
mod metrics;
mod post;
mod session;
mod status;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;

use std::net::SocketAddr;
use std::time::Duration;

use actix_web::{web, App, HttpServer};
use slog::info;

pub use error::{status_for, HttpError};

use crate::server::{shutdown_signal, McpServer, Signal};

/// Before the end of `http.shutdown_timeout_secs`, requests still running
/// are ended with an error response, this long before their connections
/// would be closed.
const ABORT_MARGIN: Duration = Duration::from_millis(500);

/// Registers the MCP endpoint of `server` at its configured path, for
/// embedding (`App::new().configure(transport::http::configure(server))`),
/// the liveness and readiness endpoints (`[health]`), and with authorization
/// on, the protected-resource metadata at
/// `/.well-known/oauth-protected-resource` and its path-inserted forms.
/// Set `HttpServer::h1_allow_half_closed(false)` on the embedding server
/// too, so that a client closing its connection cancels at once.
pub fn configure(server: McpServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
    // A gateway's stdio upstreams keep their connections on the workers'
    // threads, which register as each builds its `App` (below).
    #[cfg(feature = "gateway")]
    if let Some(gateway) = server.gateway() {
        gateway.workers_expected();
    }
    move |cfg: &mut web::ServiceConfig| {
        #[cfg(feature = "gateway")]
        if let Some(gateway) = server.gateway() {
            gateway.worker_started();
        }
        let path = server.config().http.path.clone();
        #[cfg(feature = "metrics")]
        if server.config().metrics.enabled && server.config().metrics.bind.is_empty() {
            let m = &server.config().metrics;
            cfg.service(
                web::resource(m.path.clone())
                    .app_data(web::Data::new(server.clone()))
                    .route(web::get().to(metrics::guarded)),
            );
        }
        let st = &server.config().status;
        if st.enabled {
            let data = web::Data::new(server.clone());
            cfg.service(web::resource(st.path.clone()).app_data(data.clone()).route(web::get().to(status::page)));
            cfg.service(web::resource(format!("{}.json", st.path)).app_data(data).route(web::get().to(status::data)));
        }
        let health = &server.config().health;
        if health.enabled {
            cfg.service(web::resource(health.liveness_path.clone()).route(web::get().to(health::liveness)));
            cfg.service(
                web::resource(health.readiness_path.clone())
                    .app_data(web::Data::new(server.clone()))
                    .route(web::get().to(health::readiness)),
            );
        }
        if let Some(auth) = server.authorizer() {
            for p in auth.protected_resource().paths(&path) {
                cfg.service(
                    web::resource(p)
                        .app_data(web::Data::new(server.clone()))
                        .route(web::get().to(auth::metadata))
                        .route(web::head().to(auth::metadata)),
                );
            }
        }
        cfg.service(
            web::resource(path).app_data(web::Data::new(server.clone())).route(web::route().to(endpoint::endpoint)),
        );
    }
}

/// Binds the HTTP server to `http.bind` and returns it (not yet awaited)
/// with the bound addresses. Signals are left to the caller (see
/// [`serve`]) so that shutdown can end subscriptions first.
pub fn bind(server: McpServer) -> std::io::Result<(actix_web::dev::Server, Vec<SocketAddr>)> {
    let c = server.config().http.clone();
    let config = configure(server);
    let builder = HttpServer::new(move || App::new().configure(config.clone()))
        .shutdown_timeout(c.shutdown_timeout_secs)
        .max_connections(c.max_connections)
        // Stream events are small writes that must leave at once.
        .tcp_nodelay(true)
        // A client closing its side of the connection has gone: stop at
        // once, so a closed response stream cancels its request and frees
        // its subscription now rather than at the next keep-alive write.
        .h1_allow_half_closed(false)
        .disable_signals();
    // A failure to bind names the address (the OS's "Address already in
    // use" alone does not say which).
    let at = |e: std::io::Error| std::io::Error::new(e.kind(), format!("cannot listen on {}: {e}", c.bind));
    let mut builder = match () {
        #[cfg(feature = "tls")]
        () if c.tls.enabled() => builder.bind_rustls_0_23(&c.bind, tls::server_config(&c.tls)?).map_err(at)?,
        () => {
            #[cfg(feature = "h2c")]
            let bound = if c.h2c { builder.bind_auto_h2c(&c.bind) } else { builder.bind(&c.bind) };
            #[cfg(not(feature = "h2c"))]
            let bound = builder.bind(&c.bind);
            bound.map_err(at)?
        }
    };
    if c.workers > 0 {
        builder = builder.workers(c.workers);
    }
    let addrs = builder.addrs();
    Ok((builder.run(), addrs))
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

/// Prints `WHAT URL` on stderr in one write, so that it cannot interleave
/// with log output; under `log.format = "json"` as a JSON record like the
/// log's (`{"msg":"listening on http://…","url":"http://…","level":"INFO"}`),
/// so that every line a log collector reads is JSON.
fn announce(server: &McpServer, what: &str, url: &str) {
    let line = if server.config().log.format == crate::config::LogFormat::Json {
        let record = serde_json::json!({"msg": format!("{what} {url}"), "url": url, "level": "INFO",
            "service": server.service().info().name});
        format!("{record}\n")
    } else {
        format!("{what} {url}\n")
    };
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
}

/// Serves HTTP until SIGINT or SIGTERM, printing
/// `listening on http://ADDR/PATH` (`https://` with TLS; a JSON record under
/// `log.format = "json"`) on stderr. At SIGTERM the server first drains
/// for `shutdown.drain_ms` (`/readyz` 503, requests still served); then it stops accepting, every
/// subscription gets its completion result, running requests get
/// `http.shutdown_timeout_secs` to finish (those still running then answer
/// -32603 "server shutting down"), and the server stops.
pub async fn serve(server: McpServer) -> std::io::Result<()> {
    let path = server.config().http.path.clone();
    let (http, addrs) = bind(server.clone())?;
    for addr in &addrs {
        let scheme = if server.config().http.tls.enabled() { "https" } else { "http" };
        announce(&server, "listening on", &format!("{scheme}://{addr}{path}"));
    }
    let c = server.config();
    info!(server.logger(), "serving Streamable HTTP"; "addrs" => format!("{addrs:?}"), "path" => &path,
        "server" => &server.service().info().name, "serves" => server.service().catalog().summary(), "versions" => c.server.versions.join(","), "backend" => c.hub.backend.as_str(),
        "auth" => c.auth.mode.as_str(), "tls" => c.http.tls.enabled(), "metrics" => c.metrics.enabled,
        "otel" => crate::telemetry::spans_exported(),
        "version" => env!("CARGO_PKG_VERSION"));
    if c.auth.enabled() {
        info!(server.logger(), "authorization"; "mode" => c.auth.mode.as_str(), "resource" => c.canonical_resource(),
            "issuers" => c.auth.issuers.join(","));
    }
    if crate::telemetry::spans_exported() {
        info!(server.logger(), "exporting spans"; "otlp_endpoint" => &c.otel.endpoint);
    }
    #[cfg(feature = "metrics")]
    if server.config().metrics.enabled && !server.config().metrics.bind.is_empty() {
        let m = &server.config().metrics;
        let (metrics_http, metrics_addrs) = metrics::separate(server.clone())?;
        for addr in &metrics_addrs {
            announce(&server, "metrics on", &format!("http://{addr}{}", m.path));
        }
        let stop = metrics_http.handle();
        actix_rt::spawn(metrics_http);
        actix_rt::spawn(async move {
            shutdown_signal().await;
            stop.stop(true).await;
        });
    }
    let handle = http.handle();
    actix_rt::spawn(async move {
        drain(&server, shutdown_signal().await).await;
        let open = server.shutdown().await;
        info!(server.logger(), "shutting down"; "subscriptions_closed" => open);
        // Running requests get the shutdown timeout to finish, less a
        // margin in which those still running answer an error before their
        // connections are closed.
        let grace = Duration::from_secs(server.config().http.shutdown_timeout_secs).saturating_sub(ABORT_MARGIN);
        let stop = handle.stop(true);
        let abort = async {
            tokio::time::sleep(grace).await;
            server.abort_requests();
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = stop => {}
            _ = abort => {}
        }
    });
    let served = http.await;
    crate::telemetry::flush_spans();
    served
}
