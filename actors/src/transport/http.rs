//! Streamable HTTP (2026-07-28): one POST endpoint.
//!
//! Per request, in order: `Host`/`Origin` (403) → body size (413) →
//! JSON-RPC envelope (-32700/-32600, 400) → `_meta` (-32602 / HeaderMismatch /
//! UnsupportedProtocolVersion, 400) → `Mcp-Method` (HeaderMismatch, 400) →
//! method (-32601, 404) → params (-32602, 400) → `Mcp-Name` and
//! `Mcp-Param-*` (HeaderMismatch, 400) → a request actor. The reply is
//! `application/json` when the result is ready before any notification and
//! within `stream_after_ms`, else an SSE stream. `subscriptions/listen` is
//! answered with an SSE stream that stays open, fed by a listener actor.

use std::time::Duration;

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use futures::StreamExt;
use mcp_protocol::header::{decode_value, matches_body};
use mcp_protocol::jsonrpc::{self, encode_error, Incoming};
use mcp_protocol::meta::VersionHeader;
use mcp_protocol::request::ClientRequest;
use mcp_protocol::{ErrorCode, ErrorData, ProtocolError, RequestId};
use slog::debug;

use std::sync::Arc;

use super::sse_outlet::sse_outlet;
use super::{guard, legacy_http, sse};
use crate::intake::{self, Admitted, Refusal};
use crate::legacy::dispatch;
use crate::legacy::Session;
use crate::outbound::Outbound;
use crate::server::McpServer;

/// The HTTP status for a JSON-RPC error code (`None`: success).
pub fn status_for(code: Option<i32>) -> StatusCode {
    match code {
        None => StatusCode::OK,
        Some(-32601) => StatusCode::NOT_FOUND,
        Some(-32603) => StatusCode::INTERNAL_SERVER_ERROR,
        Some(-32700 | -32600 | -32602 | -32020 | -32021 | -32022 | -32001 | -32003) => StatusCode::BAD_REQUEST,
        Some(_) => StatusCode::OK,
    }
}

pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> HttpResponse {
    HttpResponse::build(status).content_type("application/json").body(body)
}

fn refuse(r: Refusal) -> HttpResponse {
    json_response(status_for(Some(r.error.code.0)), r.encode())
}

pub(crate) fn plain_error(
    status: StatusCode,
    id: Option<&RequestId>,
    code: ErrorCode,
    message: String,
) -> HttpResponse {
    json_response(status, encode_error(id, &ErrorData::new(code, message)))
}

/// Registers the MCP endpoint of `server` at its configured path.
pub fn configure(server: McpServer) -> impl Fn(&mut web::ServiceConfig) + Clone {
    move |cfg: &mut web::ServiceConfig| {
        let path = server.config().http.path.clone();
        cfg.service(
            web::resource(path)
                .app_data(web::Data::new(server.clone()))
                .route(web::post().to(post))
                .route(web::get().to(get))
                .route(web::delete().to(delete))
                .default_service(web::to(not_allowed)),
        );
    }
}

/// The 403 for a request refused by the Host/Origin guard, if it is.
fn refused(req: &HttpRequest, server: &McpServer) -> Option<HttpResponse> {
    let http = &server.config().http;
    let reason = guard::check(req, &http.allowed_hosts, &http.allowed_origins).err()?;
    debug!(server.logger(), "refused by host/origin guard"; "reason" => &reason);
    Some(plain_error(StatusCode::FORBIDDEN, None, ErrorCode::INVALID_REQUEST, format!("Forbidden: {reason}")))
}

async fn get(req: HttpRequest, server: web::Data<McpServer>) -> HttpResponse {
    if let Some(resp) = refused(&req, &server) {
        return resp;
    }
    legacy_http::get(&req, &server).await
}

async fn delete(req: HttpRequest, server: web::Data<McpServer>) -> HttpResponse {
    if let Some(resp) = refused(&req, &server) {
        return resp;
    }
    legacy_http::delete(&req, &server).await
}

async fn not_allowed(req: HttpRequest) -> HttpResponse {
    legacy_http::not_allowed(&format!(
        "{} is not supported on the MCP endpoint; send JSON-RPC messages with POST",
        req.method()
    ))
}

async fn read_body(req: &HttpRequest, mut payload: web::Payload, limit: usize) -> Result<web::BytesMut, HttpResponse> {
    let too_large = || {
        plain_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("Request body exceeds the limit of {limit} bytes"),
        )
    };
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = web::BytesMut::with_capacity(declared.unwrap_or(1024).min(limit));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| {
            plain_error(StatusCode::BAD_REQUEST, None, ErrorCode::PARSE_ERROR, format!("Could not read the body: {e}"))
        })?;
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

// Header names built once: looking a header up by a `&str` name that is
// not a standard one allocates a `HeaderName` for every request.
const MCP_METHOD: header::HeaderName = header::HeaderName::from_static("mcp-method");
const MCP_NAME: header::HeaderName = header::HeaderName::from_static("mcp-name");
const MCP_PROTOCOL_VERSION: header::HeaderName = header::HeaderName::from_static("mcp-protocol-version");

fn header_str(req: &HttpRequest, name: impl header::AsHeaderName) -> Option<&[u8]> {
    req.headers().get(name).map(|v| v.as_bytes())
}

fn mismatch(header: &str, header_value: Option<String>, body_value: String) -> ProtocolError {
    ProtocolError::HeaderMismatch { header: header.into(), header_value, body_value }
}

/// `Mcp-Method` must be present and equal the body's method (case-sensitive).
fn check_method_header(req: &HttpRequest, method: &str) -> Result<(), ProtocolError> {
    match header_str(req, MCP_METHOD).map(<[u8]>::trim_ascii) {
        Some(v) if v == method.as_bytes() => Ok(()),
        other => Err(mismatch("Mcp-Method", other.map(|v| String::from_utf8_lossy(v).into_owned()), method.to_owned())),
    }
}

/// `Mcp-Name` must mirror `params.name` / `params.uri` where the method has one,
/// and each `Mcp-Param-*` of the called tool must mirror its argument.
fn check_name_headers(req: &HttpRequest, server: &McpServer, request: &ClientRequest) -> Result<(), ProtocolError> {
    if let Some(body) = request.name_for_header() {
        let header = header_str(req, MCP_NAME).map(decode_value);
        match header {
            Some(Ok(v)) if v == body => {}
            Some(Ok(v)) => return Err(mismatch("Mcp-Name", Some(v), body.to_owned())),
            Some(Err(_)) => return Err(mismatch("Mcp-Name", Some("<undecodable>".into()), body.to_owned())),
            None => return Err(mismatch("Mcp-Name", None, body.to_owned())),
        }
    }
    if let ClientRequest::CallTool(call) = request {
        let Some(tool) = server.catalog().tool(&call.name) else {
            return Ok(());
        };
        let empty = serde_json::Map::new();
        let args = call.arguments.as_ref().unwrap_or(&empty);
        for param in tool.header_params() {
            let name = param.header_name();
            let body = param.value_in(args);
            let header = header_str(req, name.as_str()).map(decode_value);
            match (header, body) {
                (None, None) => {}
                (Some(Ok(h)), Some(b)) if matches_body(&h, b) => {}
                (Some(Ok(h)), Some(b)) => return Err(mismatch(&name, Some(h), b.to_string())),
                (Some(Ok(h)), None) => return Err(mismatch(&name, Some(h), "<absent>".into())),
                (Some(Err(_)), b) => {
                    return Err(mismatch(
                        &name,
                        Some("<invalid>".into()),
                        b.map_or("<absent>".into(), |b| b.to_string()),
                    ))
                }
                (None, Some(b)) => return Err(mismatch(&name, None, b.to_string())),
            }
        }
    }
    Ok(())
}

async fn post(req: HttpRequest, payload: web::Payload, server: web::Data<McpServer>) -> HttpResponse {
    if let Some(resp) = refused(&req, &server) {
        return resp;
    }
    let http = &server.config().http;
    if let Some(ct) = req.headers().get(header::CONTENT_TYPE) {
        let ct = ct.to_str().unwrap_or("").to_ascii_lowercase();
        if !ct.starts_with("application/json") {
            return plain_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                ErrorCode::INVALID_REQUEST,
                format!("Content-Type must be application/json, not {ct:?}"),
            );
        }
    }
    let body = match read_body(&req, payload, http.max_body_bytes).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    // The legacy paths are boxed: their futures are large and rare, and the
    // stateless path's future stays small enough for the allocator's caches.
    let decoded = match (legacy_http::session_id(&req), jsonrpc::decode(&body)) {
        (Some(sid), Ok(incoming)) => return Box::pin(legacy_http::post(&req, &server, sid, incoming)).await,
        (_, decoded) => decoded,
    };
    let request = match decoded {
        Ok(Incoming::Request(r)) if dispatch::is_legacy_initialize(&r) => {
            return Box::pin(legacy_http::initialize(&server, r)).await
        }
        Ok(Incoming::Request(r)) => r,
        Ok(Incoming::Notification(_)) => return HttpResponse::Accepted().finish(),
        Ok(Incoming::Response(r)) => {
            let message = "Clients must not send responses on this endpoint".to_string();
            return plain_error(StatusCode::BAD_REQUEST, Some(&r.id), ErrorCode::INVALID_REQUEST, message);
        }
        Ok(_) => {
            return plain_error(StatusCode::BAD_REQUEST, None, ErrorCode::INVALID_REQUEST, "Unsupported message".into())
        }
        Err(e) => {
            let profile = mcp_protocol::ProtocolVersion::V2026_07_28.profile();
            return refuse(Refusal::new(e.id, &e.error, profile));
        }
    };
    match admit(&req, &server, request) {
        Ok(admitted) if matches!(admitted.request, ClientRequest::Listen(_)) => listen(&server, admitted),
        Ok(admitted) => respond_admitted(&req, &server, admitted, None).await,
        Err(refusal) => refuse(refusal),
    }
}

fn admit(req: &HttpRequest, server: &McpServer, request: jsonrpc::Request) -> Result<Admitted, Refusal> {
    let header = match header_str(req, MCP_PROTOCOL_VERSION) {
        None => VersionHeader::Missing,
        Some(v) => VersionHeader::Present(std::str::from_utf8(v).unwrap_or("")),
    };
    let meta = intake::validate_meta(&request, header, server.service().stateless_versions())?;
    let profile = meta.version.profile();
    check_method_header(req, &request.method).map_err(|e| Refusal::new(Some(request.id.clone()), &e, profile))?;
    let admitted = intake::parse(request, meta)?;
    check_name_headers(req, server, &admitted.request)
        .map_err(|e| Refusal::new(Some(admitted.id.clone()), &e, profile))?;
    Ok(admitted)
}

/// `subscriptions/listen`: an SSE stream that stays open, fed by a listener
/// actor. The stream starts at once; its first event is the acknowledgement,
/// sent once the hub has registered the listener (or, if the hub refused it
/// after all, the error response).
fn listen(server: &McpServer, admitted: Admitted) -> HttpResponse {
    if let Err(refusal) = server.hub_occupancy().check() {
        let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, refusal.to_string());
        return json_response(StatusCode::SERVICE_UNAVAILABLE, encode_error(Some(&admitted.id), &error));
    }
    let (tx, rx) = sse_outlet(server.config().hub.listener_buffer);
    let _ = server.start_listener(&admitted, Box::new(tx));
    sse::listen_response(rx)
}

/// Runs an admitted request in a request actor (started at once) and
/// replies with JSON or SSE; `legacy` is the session of a legacy-era request
/// (its errors are sent with HTTP 200, as that era did, and its
/// server-to-client requests use the session). The returned future holds
/// only the reply's channel, not the request.
pub(crate) fn respond_admitted<'a>(
    req: &'a HttpRequest,
    server: &'a McpServer,
    admitted: Admitted,
    legacy: Option<Arc<Session>>,
) -> impl std::future::Future<Output = HttpResponse> + 'a {
    let config = server.config();
    let (tx, rx) = crate::outbound::outlet(config.request.outbound_buffer);
    let id = admitted.id.clone();
    let addr = server.start_request_in(admitted, tx, legacy.as_ref().map(|s| s.pending.clone()));
    if let Some(session) = &legacy {
        session.track(id.clone(), addr);
    }
    reply(req, config, id, rx, legacy.is_some())
}

/// The response when it is ready within `stream_after_ms` and came alone,
/// else an SSE stream.
async fn reply(
    req: &HttpRequest,
    config: &crate::config::Config,
    id: RequestId,
    mut rx: crate::outbound::OutletRx,
    legacy: bool,
) -> HttpResponse {
    let keep_alive = Duration::from_millis(config.http.sse_keep_alive_ms.max(1));
    match tokio::time::timeout(Duration::from_millis(config.http.stream_after_ms), rx.recv()).await {
        Ok(Some(first)) => match *first {
            Outbound::Final { bytes, error_code } => {
                let status = if legacy { StatusCode::OK } else { status_for(error_code) };
                HttpResponse::build(status).content_type("application/json").body(bytes)
            }
            notification => sse::response_stream(req, Some(notification), rx, keep_alive),
        },
        Ok(None) => plain_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(&id),
            ErrorCode::INTERNAL_ERROR,
            "The request ended without a response".into(),
        ),
        Err(_) => sse::response_stream(req, None, rx, keep_alive),
    }
}
