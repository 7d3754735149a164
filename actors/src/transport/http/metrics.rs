//! `GET /metrics`: the Prometheus text exposition (`[metrics]`), on the main
//! port or on a listener of its own (`metrics.bind`). Gauges that are cheap
//! to read but not kept live (legacy sessions, the Redis link) are sampled
//! at each scrape.

use actix_web::http::header;
use actix_web::{web, App, HttpResponse, HttpServer};

use super::error::HttpError;
use crate::pipeline::intake::Refusal;
use crate::server::McpServer;
use crate::telemetry;

/// The exposition on the main port, behind the `Host`/`Origin` guard of the
/// MCP endpoint (a scraper names an allowed host, as Prometheus does with
/// its target's address; or use `metrics.bind`). With authorization on, it
/// is not public: the scraper presents credentials that grant
/// `metrics.scope`, unless `metrics.public` says otherwise.
pub(super) async fn guarded(req: actix_web::HttpRequest, server: web::Data<McpServer>) -> HttpResponse {
    if let Err(refused) = super::guard::admit(&req, &server) {
        return actix_web::ResponseError::error_response(&refused);
    }
    if let Err(refused) = scraper(&req, &server).await {
        return actix_web::ResponseError::error_response(&refused);
    }
    metrics(server).await
}

/// With authorization on (and `metrics.public` off), the scraper must be a
/// caller whose credentials grant `metrics.scope`.
async fn scraper(req: &actix_web::HttpRequest, server: &McpServer) -> Result<(), HttpError> {
    let (Some(auth), false) = (server.authorizer(), server.config().metrics.public) else { return Ok(()) };
    let Some(identity) = super::auth::caller(req, server).await? else { return Ok(()) };
    let scope = [server.config().metrics.scope.clone()];
    auth.permit(&identity, &scope).map_err(|e| {
        server.auth_refused(&e, None, Some(&identity));
        HttpError::refused(Refusal::auth(None, e), Some(auth))
    })
}

/// The exposition.
pub(super) async fn metrics(server: web::Data<McpServer>) -> HttpResponse {
    telemetry::legacy_sessions(server.session_count().await);
    if let Some(s) = server.backend_stats() {
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

/// The listener of `metrics.bind`: only the exposition, one worker.
pub(super) fn separate(server: McpServer) -> std::io::Result<(actix_web::dev::Server, Vec<std::net::SocketAddr>)> {
    let (bind, path) = (server.config().metrics.bind.clone(), server.config().metrics.path.clone());
    let data = web::Data::new(server);
    let http = HttpServer::new(move || App::new().app_data(data.clone()).route(&path, web::get().to(metrics)))
        .workers(1)
        .disable_signals()
        .bind(&bind)?;
    let addrs = http.addrs();
    Ok((http.run(), addrs))
}
