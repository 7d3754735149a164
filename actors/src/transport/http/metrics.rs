//! `GET /metrics` on the main port: the Prometheus text exposition
//! (`[metrics]`) behind the `Host`/`Origin` guard and, with authorization
//! on, a scope. The listener of `metrics.bind`, when there is one instead,
//! is the server's own (started when it is built).

use actix_web::{web, HttpResponse};

use super::error::HttpError;
use crate::pipeline::intake::Refusal;
use crate::server::McpServer;

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
    server.metrics_exposition().await
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
