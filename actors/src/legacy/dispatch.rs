//! What a legacy session does with one message, for both transports: the
//! session-level methods are answered at once, shared methods become a
//! request for a request actor, answers to server-to-client requests reach
//! the handler waiting for them.

use std::sync::Arc;

use mcp_protocol::jsonrpc::{Notification, Request, Response};
use mcp_protocol::legacy::{initialize_result, negotiate, InitializeParams, LegacyRequest, SessionState};
use mcp_protocol::meta::{RequestMeta, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION_KEY};
use mcp_protocol::request::ClientNotification;
use mcp_protocol::{ErrorCode, ErrorData};
use serde_json::{json, Value};

use super::Session;
use crate::intake::Admitted;
use crate::server::McpServer;

/// Whether a request is a legacy `initialize` (no stateless `_meta`).
pub fn is_legacy_initialize(r: &Request) -> bool {
    r.method == "initialize" && RequestMeta::peek_version(r.params.as_ref()).is_none()
}

/// Whether a request carries stateless `_meta` (then it is served statelessly
/// even on a connection that also has a legacy session, e.g. stdio).
pub fn is_stateless(r: &Request) -> bool {
    r.params.as_ref().and_then(|p| p.get("_meta")).and_then(|m| m.get(PROTOCOL_VERSION_KEY)).is_some()
}

/// How a legacy request is answered.
#[derive(Debug)]
pub enum Reply {
    /// Answered now.
    Now(Result<Value, ErrorData>),
    /// Runs in a request actor.
    Run(Box<Admitted>),
}

/// Handles `initialize`: negotiates a legacy version and returns the session
/// state and the result, or the error (a modern-only server names its versions).
pub fn initialize(server: &McpServer, r: &Request) -> Result<(SessionState, Value), ErrorData> {
    let params = match LegacyRequest::from_parts("initialize", r.params.clone()) {
        Ok(LegacyRequest::Initialize(p)) => p,
        Ok(_) => unreachable!("initialize parses as Initialize"),
        Err(e) => return Err(e.to_error_data(mcp_protocol::ProtocolVersion::V2025_11_25.profile())),
    };
    let InitializeParams { protocol_version, .. } = &params;
    let served = server.service().versions();
    let Some(version) = negotiate(protocol_version, served) else {
        let supported: Vec<&str> = served.iter().map(|v| v.as_str()).collect();
        return Err(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "Unsupported protocol version {protocol_version}: this server serves only stateless MCP ({}); \
                 send requests with _meta instead of initialize",
                supported.join(", ")
            ),
        )
        .with_data(json!({"supported": supported, "requested": protocol_version})));
    };
    let state = SessionState::new(version, &params);
    let service = server.service();
    let result = initialize_result(
        version,
        &service.capabilities(),
        service.info(),
        Some(server.config().server.instructions.as_str()).filter(|s| !s.is_empty()),
    );
    Ok((state, result))
}

/// Handles a request in a session.
pub async fn request(session: &Arc<Session>, r: Request) -> Reply {
    let state = session.state();
    let profile = state.version.profile();
    let progress_token =
        r.params.as_ref().and_then(|p| p.get("_meta")).and_then(|m| m.get(PROGRESS_TOKEN_KEY)).cloned();
    match LegacyRequest::from_parts(&r.method, r.params) {
        Err(e) => Reply::Now(Err(e.to_error_data(profile))),
        Ok(LegacyRequest::Initialize(_)) => {
            Reply::Now(Err(ErrorData::new(ErrorCode::INVALID_REQUEST, "The session is already initialized")))
        }
        Ok(LegacyRequest::Ping) => Reply::Now(Ok(json!({}))),
        Ok(LegacyRequest::SetLevel(level)) => {
            session.update(|s| s.log_level = Some(level));
            Reply::Now(Ok(json!({})))
        }
        Ok(LegacyRequest::Subscribe(uri)) => {
            session.update(|s| {
                s.subscriptions.insert(uri);
            });
            session.refresh_stream().await;
            Reply::Now(Ok(json!({})))
        }
        Ok(LegacyRequest::Unsubscribe(uri)) => {
            session.update(|s| {
                s.subscriptions.remove(&uri);
            });
            session.refresh_stream().await;
            Reply::Now(Ok(json!({})))
        }
        Ok(LegacyRequest::Shared(request)) => {
            let meta = RequestMeta {
                version: state.version,
                client_info: Some(state.client_info),
                client_capabilities: state.client_capabilities,
                log_level: state.log_level,
                progress_token: progress_token.filter(|t| t.is_string() || t.is_number()),
            };
            Reply::Run(Box::new(Admitted { id: r.id, meta, request }))
        }
        Ok(_) => {
            Reply::Now(Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {}", r.method))))
        }
    }
}

/// Handles a client notification in a session.
pub fn notification(session: &Session, n: &Notification) {
    match n.method.as_str() {
        "notifications/initialized" => session.update(|s| s.initialized = true),
        _ => {
            if let Ok(ClientNotification::Cancelled { request_id, reason }) =
                ClientNotification::from_parts(&n.method, n.params.as_ref())
            {
                session.cancel(&request_id, reason);
            }
        }
    }
}

/// Hands a client's answer to the handler waiting for it.
pub fn response(session: &Session, r: Response) -> bool {
    session.pending.complete(&r.id, r.outcome)
}
