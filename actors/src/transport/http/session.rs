//! Streamable HTTP for legacy sessions (2025-11-25 and earlier), on the same
//! endpoint: `initialize` opens a session (`Mcp-Session-Id`), messages carry
//! its id, a GET opens its notification stream, DELETE ends it. Server-to-
//! client requests (sampling, elicitation, roots) go out on the POST's SSE
//! stream and the client POSTs its answers back.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use mcp_protocol::jsonrpc::{Incoming, Request};
use mcp_protocol::RequestId;

use super::answer::{self, act, HttpDriver};
use super::error::HttpError;
use super::headers::{session_id, MCP_SESSION_ID};
use super::{auth, guard};
use crate::channels::outbound;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use crate::pipeline::intake::{Action, SessionRoute};
use crate::pipeline::legacy::store::StoreError;
use crate::pipeline::legacy::SessionHandle;
use crate::server::{McpServer, OpenError};
use crate::transport::sse;

/// `initialize` without stateless `_meta`: negotiates and opens a session.
pub(super) async fn initialize(
    server: &McpServer,
    r: Request,
    identity: Option<&Identity>,
) -> Result<HttpResponse, HttpError> {
    match server.open_session(&r, identity.map(Identity::key).as_deref()).await {
        Ok((session, body)) => Ok(HttpResponse::Ok()
            .content_type("application/json")
            .insert_header((MCP_SESSION_ID, session.id().to_owned()))
            .body(body)),
        Err(OpenError::Refused(e)) => Err(HttpError::with_status(StatusCode::BAD_REQUEST, Some(&r.id), e)),
        Err(OpenError::Full(full)) => Err(HttpError::with_status(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&r.id),
            mcp_protocol::ErrorData::internal(format!("Too many sessions (limit {})", full.max)),
        )),
        Err(OpenError::Unavailable(e)) => Err(HttpError::with_status(StatusCode::SERVICE_UNAVAILABLE, Some(&r.id), e)),
    }
}

/// A message POSTed with `Mcp-Session-Id`.
pub(super) async fn post(
    req: &HttpRequest,
    server: &McpServer,
    sid: &str,
    body: &[u8],
    identity: Option<&Arc<Identity>>,
) -> Result<HttpResponse, HttpError> {
    // The id of the request, for an error answered before it is read.
    let request_id = || mcp_protocol::decode(body, mcp_protocol::Expect::Session).request_id().cloned();
    let Some(session) = find(server, sid, identity.map(|i| &**i))
        .await
        .map_err(|e| HttpError::with_status(StatusCode::SERVICE_UNAVAILABLE, request_id().as_ref(), e))?
    else {
        return Err(HttpError::no_session(request_id().as_ref()));
    };
    let started = std::time::Instant::now();
    let driver = HttpDriver::new(req, server, identity);
    match server.intake().route_in_session(&driver, body) {
        SessionRoute::Session(message) => {
            check_version(req, &session, message_id(&message))?;
            in_session(server, &session, message, super::answer::facts_of(req, server, identity)).await
        }
        SessionRoute::Act(Action::Cancel { id, reason }) => {
            session.cancel(id, reason);
            Ok(HttpResponse::Accepted().finish())
        }
        // A request that names a stateless version is served statelessly.
        SessionRoute::Act(action) => act(&driver, action, started).await,
    }
}

/// The id of a request.
fn message_id(message: &Incoming) -> Option<&RequestId> {
    match message {
        Incoming::Request(r) => Some(&r.id),
        _ => None,
    }
}

/// The session `sid`, if it is open and the caller may use it: a session
/// opened with credentials is answered 404 for any other caller (issuer and
/// subject), as if it did not exist. An error when the session store
/// cannot be reached.
async fn find(
    server: &McpServer,
    sid: &str,
    identity: Option<&Identity>,
) -> Result<Option<SessionHandle>, mcp_protocol::ErrorData> {
    let Some(session) = server.find_session(sid).await? else { return Ok(None) };
    Ok(session.usable_by(identity.map(Identity::key).as_deref()).then_some(session))
}

/// A session store that cannot be reached: 503.
fn unavailable(e: mcp_protocol::ErrorData) -> HttpError {
    HttpError::with_status(StatusCode::SERVICE_UNAVAILABLE, None, e)
}

/// `MCP-Protocol-Version`, when sent, must be the session's.
fn check_version(req: &HttpRequest, session: &SessionHandle, id: Option<&RequestId>) -> Result<(), HttpError> {
    let Some(v) = req.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok()) else { return Ok(()) };
    let negotiated = session.version();
    if v.trim() != negotiated.as_str() {
        let message = format!("MCP-Protocol-Version {v:?} does not match the session's {negotiated}");
        return Err(HttpError::invalid(id, message));
    }
    Ok(())
}

async fn in_session(
    server: &McpServer,
    session: &SessionHandle,
    message: Incoming,
    facts: RequestFacts,
) -> Result<HttpResponse, HttpError> {
    match message {
        Incoming::Request(r) => {
            let id = r.id.clone();
            let (tx, rx) = outbound::channel(server.config().request.outbound_buffer);
            server.session_request_here(session, r, facts, tx).await;
            answer::reply(server.config(), id, rx, answer::Statuses::AlwaysOk, true).await
        }
        Incoming::Response(r) => match session.answer(r).await {
            Ok(()) => Ok(HttpResponse::Accepted().finish()),
            Err(e @ StoreError::Gone(_)) => Err(HttpError::with_status(StatusCode::GONE, None, e.to_error_data())),
            Err(e) => Err(unavailable(e.to_error_data())),
        },
        _ => {
            session.touch();
            Ok(HttpResponse::Accepted().finish())
        }
    }
}

/// GET with `Mcp-Session-Id`: the session's notification stream.
pub(super) async fn get(req: HttpRequest, server: web::Data<McpServer>) -> Result<HttpResponse, HttpError> {
    guard::admit(&req, &server)?;
    let Some(sid) = session_id(&req) else {
        return Err(HttpError::method_not_allowed(
            "GET needs an Mcp-Session-Id (legacy sessions only); stateless clients use subscriptions/listen",
        ));
    };
    let identity = auth::caller(&req, &server).await?;
    let Some(session) = find(&server, sid, identity.as_deref()).await.map_err(unavailable)? else {
        return Err(HttpError::no_session(None));
    };
    let (sink, frames) = sse::queue(server.config().hub.listener_buffer);
    let ready = server
        .start_session_stream(&session, Box::new(sink))
        .await
        .map_err(|e| HttpError::with_status(StatusCode::NOT_FOUND, None, e))?;
    match ready.await {
        Ok(Ok(())) => Ok(sse::listen_response(frames)),
        Ok(Err(e)) => Err(HttpError::with_status(StatusCode::SERVICE_UNAVAILABLE, None, e)),
        Err(_) => Err(HttpError::internal(None, "stream ended")),
    }
}

/// DELETE with `Mcp-Session-Id`: ends the session.
pub(super) async fn delete(req: HttpRequest, server: web::Data<McpServer>) -> Result<HttpResponse, HttpError> {
    guard::admit(&req, &server)?;
    let Some(sid) = session_id(&req) else {
        return Err(HttpError::method_not_allowed("DELETE needs an Mcp-Session-Id (legacy sessions only)"));
    };
    let identity = auth::caller(&req, &server).await?;
    if find(&server, sid, identity.as_deref()).await.map_err(unavailable)?.is_none()
        || !server.end_session_everywhere(sid).await.map_err(unavailable)?
    {
        return Err(HttpError::no_session(None));
    }
    slog::info!(server.logger(), "legacy session ended by the client"; "session" => sid);
    Ok(HttpResponse::Ok().finish())
}

/// Any other method: 405 with the methods the endpoint has.
pub(super) async fn not_allowed(req: HttpRequest) -> Result<HttpResponse, HttpError> {
    Err(HttpError::method_not_allowed(format!(
        "{} is not supported on the MCP endpoint; send JSON-RPC messages with POST",
        req.method()
    )))
}
