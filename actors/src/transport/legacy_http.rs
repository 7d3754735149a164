//! Streamable HTTP for legacy sessions (2025-11-25 and earlier), on the same
//! endpoint: `initialize` opens a session (`Mcp-Session-Id`), requests carry
//! its id, a GET opens its notification stream, DELETE ends it. Server-to-
//! client requests (sampling, elicitation, roots) go out on the POST's SSE
//! stream and the client POSTs its answers back.

use std::sync::Arc;

use actix_web::http::{header, StatusCode};
use actix_web::{HttpRequest, HttpResponse};
use mcp_protocol::jsonrpc::{encode_error, encode_result, Incoming, Request};
use mcp_protocol::{ErrorCode, RequestId};

use super::http::{json_response, plain_error, respond_admitted};
use super::sse;
use super::sse_outlet::sse_outlet;
use crate::legacy::dispatch::{self, Reply};
use crate::legacy::Session;
use crate::server::McpServer;

/// The session header.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The `Mcp-Session-Id` of a request, if it has one.
pub fn session_id(req: &HttpRequest) -> Option<&str> {
    req.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok())
}

fn no_session(id: Option<&RequestId>) -> HttpResponse {
    plain_error(
        StatusCode::NOT_FOUND,
        id,
        ErrorCode::INVALID_REQUEST,
        "Session not found (expired or ended); initialize again".into(),
    )
}

/// `initialize` without stateless `_meta`: negotiates and opens a session.
pub async fn initialize(server: &McpServer, r: Request) -> HttpResponse {
    match dispatch::initialize(server, &r) {
        Err(e) => json_response(StatusCode::BAD_REQUEST, encode_error(Some(&r.id), &e)),
        Ok((state, result)) => match server.sessions().create(state) {
            Err(full) => plain_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(&r.id),
                ErrorCode::INTERNAL_ERROR,
                format!("Too many sessions (limit {})", full.max),
            ),
            Ok(session) => {
                slog::info!(server.logger(), "legacy session opened"; "session" => &session.id,
                    "version" => session.state().version.as_str(), "client" => &session.state().client_info.name);
                HttpResponse::Ok()
                    .content_type("application/json")
                    .insert_header((header::HeaderName::from_static(SESSION_HEADER), session.id.clone()))
                    .body(encode_result(&r.id, &result))
            }
        },
    }
}

/// A message POSTed with `Mcp-Session-Id`.
pub async fn post(req: &HttpRequest, server: &McpServer, sid: &str, incoming: Incoming) -> HttpResponse {
    let id = match &incoming {
        Incoming::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let Some(session) = server.sessions().get(sid) else { return no_session(id.as_ref()) };
    if let Some(v) = req.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok()) {
        let negotiated = session.state().version;
        if v.trim() != negotiated.as_str() {
            let message = format!("MCP-Protocol-Version {v:?} does not match the session's {negotiated}");
            return plain_error(StatusCode::BAD_REQUEST, id.as_ref(), ErrorCode::INVALID_REQUEST, message);
        }
    }
    match incoming {
        Incoming::Notification(n) => {
            dispatch::notification(&session, &n);
            HttpResponse::Accepted().finish()
        }
        Incoming::Response(r) => {
            dispatch::response(&session, r);
            HttpResponse::Accepted().finish()
        }
        Incoming::Request(r) => request(req, server, &session, r).await,
        _ => plain_error(StatusCode::BAD_REQUEST, None, ErrorCode::INVALID_REQUEST, "Unsupported message".into()),
    }
}

async fn request(req: &HttpRequest, server: &McpServer, session: &Arc<Session>, r: Request) -> HttpResponse {
    let id = r.id.clone();
    match dispatch::request(session, r).await {
        // The legacy era reports JSON-RPC errors in a 200 response.
        Reply::Now(Ok(result)) => json_response(StatusCode::OK, encode_result(&id, &result)),
        Reply::Now(Err(error)) => json_response(StatusCode::OK, encode_error(Some(&id), &error)),
        Reply::Run(admitted) => respond_admitted(req, server, *admitted, Some(session.clone())).await,
    }
}

/// GET with `Mcp-Session-Id`: the session's notification stream.
pub async fn get(req: &HttpRequest, server: &McpServer) -> HttpResponse {
    let Some(sid) = session_id(req) else {
        return not_allowed(
            "GET needs an Mcp-Session-Id (legacy sessions only); stateless clients use subscriptions/listen",
        );
    };
    let Some(session) = server.sessions().get(sid) else { return no_session(None) };
    let hub = &server.config().hub;
    let (tx, rx) = sse_outlet(hub.listener_buffer);
    let (_listener, ready) = server.start_legacy_listener(&session, Box::new(tx));
    match ready.await {
        Ok(Ok(())) => sse::listen_response(rx),
        Ok(Err(e)) => json_response(StatusCode::SERVICE_UNAVAILABLE, encode_error(None, &e)),
        Err(_) => {
            plain_error(StatusCode::INTERNAL_SERVER_ERROR, None, ErrorCode::INTERNAL_ERROR, "stream ended".into())
        }
    }
}

/// DELETE with `Mcp-Session-Id`: ends the session.
pub async fn delete(req: &HttpRequest, server: &McpServer) -> HttpResponse {
    let Some(sid) = session_id(req) else {
        return not_allowed("DELETE needs an Mcp-Session-Id (legacy sessions only)");
    };
    match server.sessions().remove(sid) {
        Some(_) => {
            slog::info!(server.logger(), "legacy session ended by the client"; "session" => sid);
            HttpResponse::Ok().finish()
        }
        None => no_session(None),
    }
}

/// 405 with the methods the endpoint has.
pub fn not_allowed(message: &str) -> HttpResponse {
    let mut resp = plain_error(StatusCode::METHOD_NOT_ALLOWED, None, ErrorCode::INVALID_REQUEST, message.to_owned());
    resp.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("POST, GET, DELETE"));
    resp
}
