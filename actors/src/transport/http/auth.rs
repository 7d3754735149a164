//! Authorization on the HTTP endpoint: the caller of each request (401
//! with a challenge when there is none; the intake checks the scopes of
//! the item a request uses), and the protected-resource metadata document
//! (RFC 9728), served without authorization.

use std::sync::Arc;

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};

use super::error::HttpError;
use super::headers::HttpHeaders;
use crate::facts::head::{Header, Headers};
use crate::facts::identity::Identity;
use crate::pipeline::intake::{self, Refusal};
use crate::server::McpServer;
use crate::telemetry::span::NetworkTransport;

/// The caller of a request when authorization is on (`Ok(None)` when it is
/// off), from the request's head alone: a request without valid
/// credentials is refused before a byte of its body is read, so its
/// refusal carries no request id. Refusals are reported to the operator.
pub(super) async fn caller(req: &HttpRequest, server: &McpServer) -> Result<Option<Arc<Identity>>, HttpError> {
    authenticate(req, server).await.map_err(|r| HttpError::refused(r, server.authorizer().map(|a| &**a)))
}

/// [`caller`] of a POSTed message: a refusal is also an MCP operation
/// refused before any handler ran, of the method its `Mcp-Method` header
/// names (the body is not read), in the operation metrics.
pub(super) async fn caller_of_message(
    req: &HttpRequest,
    server: &McpServer,
) -> Result<Option<Arc<Identity>>, HttpError> {
    let started = std::time::Instant::now();
    authenticate(req, server).await.map_err(|refusal| {
        let headers = HttpHeaders(req);
        let method = headers.get(Header::Method).ok().flatten().and_then(|v| std::str::from_utf8(v).ok());
        let refusal = refusal.labelled(method.map_or(intake::OTHER, intake::method_label), None);
        server.count_refusal(&refusal, NetworkTransport::Tcp, started);
        HttpError::refused(refusal, server.authorizer().map(|a| &**a))
    })
}

async fn authenticate(req: &HttpRequest, server: &McpServer) -> Result<Option<Arc<Identity>>, Refusal> {
    let Some(auth) = server.authorizer() else { return Ok(None) };
    let headers = HttpHeaders(req);
    let head = headers.head();
    auth.authenticate(&head).await.map(Some).map_err(|e| {
        let token = crate::auth::bearer_token(&head).ok().flatten();
        server.auth_refused(&e, token, None);
        Refusal::auth(None, e)
    })
}

/// GET of the protected-resource metadata (any origin may read it).
pub(super) async fn metadata(server: web::Data<McpServer>) -> HttpResponse {
    let Some(auth) = server.authorizer() else { return HttpResponse::NotFound().finish() };
    HttpResponse::Ok()
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .insert_header((header::CACHE_CONTROL, "max-age=300"))
        .json(auth.document(server.service().catalog()))
}
