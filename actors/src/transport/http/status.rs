//! The live status page (`[status]`): one HTML page with no external
//! assets at `status.path`, refreshing itself from `{path}.json`.
//! Loopback clients only unless `status.allow_remote`.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::server::McpServer;
use crate::telemetry::status;

const PAGE: &str = include_str!("status.html");

fn allowed(req: &HttpRequest, server: &McpServer) -> bool {
    server.config().status.allow_remote || req.peer_addr().is_some_and(|a| a.ip().is_loopback())
}

/// `GET` the page.
pub(super) async fn page(req: HttpRequest, server: web::Data<McpServer>) -> HttpResponse {
    if !allowed(&req, &server) {
        return HttpResponse::Forbidden().body("the status page answers loopback clients only (status.allow_remote)\n");
    }
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((
            "Content-Security-Policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
        ))
        .body(PAGE)
}

/// `GET` the page's data.
pub(super) async fn data(req: HttpRequest, server: web::Data<McpServer>) -> HttpResponse {
    if !allowed(&req, &server) {
        return HttpResponse::Forbidden().finish();
    }
    let redis = server.backend_stats().map(|s| s.connected.load(std::sync::atomic::Ordering::Relaxed));
    match status::snapshot(redis, server.session_count().await) {
        Some(v) => HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(v),
        None => HttpResponse::NotFound().finish(),
    }
}
