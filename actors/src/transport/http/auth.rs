//! Authorization on the HTTP endpoint: the caller of each request (401
//! with a challenge when there is none), the scopes of the item a request
//! uses (403 with a step-up challenge), and the protected-resource metadata
//! document (RFC 9728), served without authorization.

use std::sync::Arc;

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use mcp_protocol::RequestId;

use super::error::HttpError;
use super::headers::HttpHeaders;
use crate::auth::{AuthError, Authorizer};
use crate::facts::identity::Identity;
use crate::server::McpServer;

/// The caller of a request when authorization is on (`Ok(None)` when it is
/// off), from the request's head alone: a request without valid
/// credentials is refused before a byte of its body is read, so its
/// refusal carries no request id. Refusals are reported to the operator.
pub(super) async fn caller(req: &HttpRequest, server: &McpServer) -> Result<Option<Arc<Identity>>, HttpError> {
    let Some(auth) = server.authorizer() else { return Ok(None) };
    let headers = HttpHeaders(req);
    let head = headers.head();
    auth.authenticate(&head).await.map(Some).map_err(|e| {
        let token = crate::auth::bearer_token(&head).ok().flatten();
        refusal(server, auth, None, &e, token, None)
    })
}

/// The HTTP answer to a caller whose credentials lack a scope the request
/// needs: [`refusal`]'s 403 with a step-up challenge (a server without
/// authorization, which refuses no one so, answers a plain 403).
pub(super) fn forbidden(
    server: &McpServer,
    id: Option<&RequestId>,
    e: &AuthError,
    caller: Option<&Identity>,
) -> HttpError {
    match server.authorizer() {
        Some(auth) => refusal(server, auth, id, e, None, caller),
        None => HttpError::with_status(StatusCode::FORBIDDEN, id, mcp_protocol::ErrorData::internal(e.for_client())),
    }
}

/// The HTTP answer to an authorization refusal, reported to the operator
/// first ([`Authorizer::report`]: the presented `token` or the known
/// `caller` name who was refused; an unreachable issuer's detail stays in
/// the log).
pub(super) fn refusal(
    server: &McpServer,
    auth: &Authorizer,
    id: Option<&RequestId>,
    e: &AuthError,
    token: Option<&str>,
    caller: Option<&Identity>,
) -> HttpError {
    auth.report(server.logger(), e, token, caller);
    let (status, prefix) = match e {
        AuthError::Missing | AuthError::InvalidToken(_) => (StatusCode::UNAUTHORIZED, "Unauthorized"),
        AuthError::InvalidRequest(_) => (StatusCode::BAD_REQUEST, "Bad request"),
        AuthError::InsufficientScope(_) => (StatusCode::FORBIDDEN, "Forbidden"),
        AuthError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "Unavailable"),
    };
    HttpError::unauthorized(status, id, format!("{prefix}: {}", e.for_client()), auth.challenge(e))
}

/// GET of the protected-resource metadata (any origin may read it).
pub(super) async fn metadata(server: web::Data<McpServer>) -> HttpResponse {
    let Some(auth) = server.authorizer() else { return HttpResponse::NotFound().finish() };
    HttpResponse::Ok()
        .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"))
        .insert_header((header::CACHE_CONTROL, "max-age=300"))
        .json(auth.document(server.service().catalog()))
}
