//! Liveness and readiness for load balancers (`[health]`): `GET /healthz`
//! answers 200 while the process answers; `GET /readyz` answers 200 when
//! the instance should get traffic and 503 with the reasons when not. Both
//! bypass the `Host`/`Origin` guard and authorization (a kubelet's probe
//! names the pod's address as its host; they say only whether the process
//! is up and ready), and are never cached. Every other route of the main
//! port is guarded.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::server::McpServer;

/// `GET` liveness.
pub(super) async fn liveness() -> HttpResponse {
    HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(json!({"status": "ok"}))
}

/// `GET` readiness; under Redis Sentinel the body also says which node is
/// the master and when the last failover was.
pub(super) async fn readiness(server: web::Data<McpServer>) -> HttpResponse {
    let (mut res, mut body) = match server.readiness() {
        Ok(()) => (HttpResponse::Ok(), json!({"ready": true})),
        Err(why) => (HttpResponse::ServiceUnavailable(), json!({"ready": false, "reasons": why})),
    };
    if let Some(redis) = server.redis_status() {
        body["redis"] = redis;
    }
    res.insert_header((header::CACHE_CONTROL, "no-store")).json(body)
}
