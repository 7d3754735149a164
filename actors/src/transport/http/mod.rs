//! Streamable HTTP: one endpoint at `http.path` for both eras. POST takes
//! every message (`post`); GET and DELETE serve legacy sessions
//! (`session`). The entry points: [`configure`] mounts the endpoint and the
//! operational routes on an actix-web `App` (embedding;
//! [`configure_endpoint`] and [`configure_operations`] mount each part
//! alone), [`bind`] builds the server, [`serve`] runs it until
//! SIGINT/SIGTERM with graceful shutdown, and [`run_until`] gives an
//! application's own actix-web server that shutdown.

mod answer;
mod auth;
mod endpoint;
pub mod error;
pub mod guard;
mod headers;
mod health;
mod lifecycle;
#[cfg(feature = "metrics")]
mod metrics;
mod post;
mod session;
mod status;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;

use std::net::SocketAddr;

use actix_web::{web, App, HttpServer};
use slog::info;

pub use error::{status_for, HttpError};
pub use lifecycle::run_until;

use crate::server::{shutdown_signal, McpServer};

/// Registers everything `server` serves over HTTP on an actix-web `App`
/// or scope, for embedding (`App::new().configure(transport::http::configure(server))`):
/// [`configure_endpoint`] (the MCP endpoint at `http.path`) and
/// [`configure_operations`] (health, metrics, the status page), each at
/// the path its configuration names, under the `App` or scope it is given.
/// Routes of the application at the same paths are not replaced: actix-web
/// serves whichever was registered first. To put the operational routes
/// elsewhere, or leave them out, mount the two parts yourself. Set
/// `HttpServer::h1_allow_half_closed(false)` on the embedding server too,
/// so that a client closing its connection cancels at once.
pub fn configure(server: McpServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
    let operations = configure_operations(server.clone());
    let endpoint = configure_endpoint(server);
    move |cfg: &mut web::ServiceConfig| {
        operations(cfg);
        endpoint(cfg);
    }
}

/// Registers the MCP endpoint of `server` alone: `http.path` (every method
/// the protocol uses there) and, with authorization on, the
/// protected-resource metadata at `/.well-known/oauth-protected-resource`
/// and its path-inserted forms (clients look for it there, at the root).
pub fn configure_endpoint(server: McpServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
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

/// Registers the operational routes of `server` alone, each only when its
/// section is on: `GET health.liveness_path` and `health.readiness_path`
/// (`/healthz`, `/readyz`; no `Host`/`Origin` check, no authorization),
/// `GET metrics.path` (`/metrics`; not when `metrics.bind` gives metrics a
/// listener of their own; with authorization on, only to credentials with
/// `metrics.scope`, unless `metrics.public`; with it off, to anyone who
/// passes the `Host`/`Origin` check), and `GET status.path` with
/// `{status.path}.json` (loopback clients only, unless
/// `status.allow_remote`). Inside a `web::scope("/ops")` they answer under
/// `/ops`, behind whatever middleware wraps the scope.
pub fn configure_operations(server: McpServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
    move |cfg: &mut web::ServiceConfig| {
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
/// `log.format = "json"`) on stderr, and `metrics on http://ADDR/PATH` for
/// the listener of `metrics.bind`. At SIGTERM the server first drains for
/// `shutdown.drain_ms` (`/readyz` 503, requests still served); then it
/// stops accepting, every subscription gets its completion result, running
/// requests get `http.shutdown_timeout_secs` to finish (those still running
/// then answer -32603 "server shutting down"), and the server stops (see
/// [`run_until`], which gives an application's own actix-web server the same).
pub async fn serve(server: McpServer) -> std::io::Result<()> {
    let path = server.config().http.path.clone();
    // Listened for before the address is announced: a SIGTERM right after
    // it drains like any other.
    let stop = shutdown_signal();
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
    for addr in server.metrics_addrs() {
        announce(&server, "metrics on", &format!("http://{addr}{}", c.metrics.path));
    }
    run_until(server, http, stop).await
}
