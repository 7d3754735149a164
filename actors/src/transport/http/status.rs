//! The live status page (`[status]`): one HTML page with no external
//! assets at `status.path`, refreshing itself from `{path}.json`.
//! Loopback clients only unless `status.allow_remote`, and behind the same
//! `Host`/`Origin` guard as the MCP endpoint (a page a browser reads must
//! not be readable through DNS rebinding).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use serde_json::{json, Value};

use super::guard;
use crate::server::McpServer;
use crate::telemetry::status;

const PAGE: &str = include_str!("status.html");

fn allowed(req: &HttpRequest, server: &McpServer) -> bool {
    server.config().status.allow_remote || req.peer_addr().is_some_and(|a| a.ip().is_loopback())
}

/// `GET` the page.
pub(super) async fn page(req: HttpRequest, server: web::Data<McpServer>) -> HttpResponse {
    if let Err(refused) = guard::admit(&req, &server) {
        return refused.error_response();
    }
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
    if let Err(refused) = guard::admit(&req, &server) {
        return refused.error_response();
    }
    if !allowed(&req, &server) {
        return HttpResponse::Forbidden().finish();
    }
    let redis = server.backend_stats().map(|s| s.connected.load(std::sync::atomic::Ordering::Relaxed));
    match status::snapshot(redis, server.session_count().await) {
        Some(mut v) => {
            v["auth"] = auth_status(&server);
            #[cfg(feature = "gateway")]
            if let Some(gateway) = server.gateway() {
                v["upstreams"] = gateway.status_json();
            }
            v["tls"] = json!(server.config().http.tls.enabled());
            v["config"] = server.generation_json();
            if let Some(redis) = server.redis_status() {
                v["redis"] = redis;
            }
            HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(v)
        }
        None => HttpResponse::NotFound().finish(),
    }
}

/// Authorization as the page shows it: the mode and, for OAuth, each
/// issuer's key set (keys held, age, failures in a row, the last error).
fn auth_status(server: &McpServer) -> Value {
    let mode = server.config().auth.mode.as_str();
    match server.authorizer() {
        None => json!({"mode": mode}),
        Some(a) => json!({"mode": mode, "issuers": a.health().unwrap_or(Value::Null)}),
    }
}
