//! POST: every JSON-RPC message a client sends.
//!
//! Per request, in order: `Host`/`Origin` (403) → `Content-Type` (415) →
//! body size (413) → the dispatcher: JSON-RPC envelope (-32700/-32600, 400)
//! → `_meta` (-32602 / HeaderMismatch / UnsupportedProtocolVersion, 400) →
//! `Mcp-Method` (HeaderMismatch, 400) → method (-32601, 404) → params
//! (-32602, 400) → `Mcp-Name` and `Mcp-Param-*` (HeaderMismatch, 400) → a
//! request actor. `subscriptions/listen` is answered with an SSE stream that
//! stays open, fed by a listener actor. A message with `Mcp-Session-Id`
//! belongs to a legacy session (`session`).

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use futures::StreamExt;
use mcp_protocol::jsonrpc::{self, DecodeError, Incoming};
use mcp_protocol::ErrorData;

use super::error::HttpError;
use super::headers::{session_id, HttpHeaders};
use super::{guard, reply, session};
use crate::era::Era;
use crate::intake::{self, Admitted, Route};
use crate::listener::ListenerKind;
use crate::server::McpServer;
use crate::transport::sse;

/// The POST handler.
pub(super) async fn post(
    req: HttpRequest,
    payload: web::Payload,
    server: web::Data<McpServer>,
) -> Result<HttpResponse, HttpError> {
    guard::admit(&req, &server)?;
    if let Some(ct) = req.headers().get(header::CONTENT_TYPE) {
        let ct = ct.to_str().unwrap_or("").to_ascii_lowercase();
        if !ct.starts_with("application/json") {
            return Err(HttpError::unsupported_media_type(&ct));
        }
    }
    let body = read_body(&req, payload, server.config().http.max_body_bytes).await?;
    let decoded = jsonrpc::decode(&body);
    // The legacy paths are boxed: their futures are large and rare, and the
    // stateless path's future stays small enough for the allocator's caches.
    if let Some(sid) = session_id(&req) {
        return Box::pin(session::post(&req, &server, sid, decoded)).await;
    }
    match route(&req, &server, decoded, false) {
        Route::Initialize(r) => Box::pin(session::initialize(&server, r)).await,
        other => stateless(&server, other).await,
    }
}

/// Routes a message through the dispatcher.
pub(super) fn route(
    req: &HttpRequest,
    server: &McpServer,
    decoded: Result<Incoming, DecodeError>,
    in_session: bool,
) -> Route {
    let service = server.service();
    let headers = HttpHeaders(req);
    let conn = intake::Connection {
        versions: service.stateless_versions(),
        catalog: service.catalog(),
        headers: Some(&headers),
        in_session,
    };
    intake::route(&conn, decoded)
}

/// Answers a route of the stateless era.
pub(super) async fn stateless(server: &McpServer, route: Route) -> Result<HttpResponse, HttpError> {
    match route {
        Route::Run(admitted) => reply::run(server, admitted, Era::Stateless).await,
        Route::Listen(admitted) => listen(server, admitted),
        Route::Refuse(refusal) => Err(HttpError::refused(refusal)),
        // Cancellation over HTTP is the client closing the response stream.
        Route::Cancel { .. } | Route::Notification(_) => Ok(HttpResponse::Accepted().finish()),
        Route::Unexpected(r) => {
            Err(HttpError::invalid(Some(&r.id), "Clients must not send responses on this endpoint"))
        }
        Route::Initialize(r) | Route::Session(Incoming::Request(r)) => {
            Err(HttpError::internal(Some(&r.id), "a legacy message reached the stateless path"))
        }
        Route::Session(_) => Err(HttpError::internal(None, "a legacy message reached the stateless path")),
    }
}

/// `subscriptions/listen`: an SSE stream that stays open, fed by a listener
/// actor. The stream starts at once; its first event is the acknowledgement,
/// sent once the hub has registered the listener (or, if the hub refused it
/// after all, the error response).
fn listen(server: &McpServer, admitted: Admitted) -> Result<HttpResponse, HttpError> {
    if let Err(refusal) = server.hub_occupancy().check() {
        let error = ErrorData::internal(refusal.to_string());
        return Err(HttpError::with_status(StatusCode::SERVICE_UNAVAILABLE, Some(&admitted.id), error));
    }
    let (sink, frames) = sse::queue(server.config().hub.listener_buffer);
    let filter = server.listen_filter(&admitted);
    let _ = server.start_listener(ListenerKind::Listen(admitted.id), filter, Box::new(sink));
    Ok(sse::listen_response(frames))
}

async fn read_body(req: &HttpRequest, mut payload: web::Payload, limit: usize) -> Result<web::BytesMut, HttpError> {
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(HttpError::too_large(limit));
    }
    let mut body = web::BytesMut::with_capacity(declared.unwrap_or(1024).min(limit));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(HttpError::unreadable)?;
        if body.len() + chunk.len() > limit {
            return Err(HttpError::too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
