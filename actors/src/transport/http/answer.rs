//! What the POST handlers share: routing a message through the dispatcher
//! with this request's headers, and answering the routes of the stateless
//! era (a request actor's reply, a listen stream, a refusal, 202).

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use mcp_protocol::jsonrpc::Incoming;
use mcp_protocol::{ErrorData, Message};

use super::error::{status_for, HttpError};
use super::headers::{request_headers, HttpHeaders};
use super::reply;
use crate::facts::extensions::Extensions;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use crate::hub::listener::ListenerKind;
use crate::pipeline::intake::{self, Admitted, Route};
use crate::pipeline::legacy::era::Era;
use crate::server::McpServer;
use crate::transport::sse;

/// Routes a message through the dispatcher.
pub(super) fn route(
    req: &HttpRequest,
    server: &McpServer,
    message: Message<'_>,
    in_session: bool,
    identity: Option<&Arc<Identity>>,
) -> Route {
    let headers = HttpHeaders(req);
    let routed = intake::route(&connection(server, &headers, in_session), message);
    with_facts(routed, req, server, identity)
}

/// What the dispatcher needs of this request's connection.
fn connection<'a>(server: &'a McpServer, headers: &'a HttpHeaders<'a>, in_session: bool) -> intake::Connection<'a> {
    let service = server.service();
    intake::Connection {
        versions: service.stateless_versions(),
        catalog: service.catalog(),
        headers: Some(headers),
        in_session,
    }
}

/// An admitted request, given its headers, caller and extensions.
fn with_facts(route: Route, req: &HttpRequest, server: &McpServer, identity: Option<&Arc<Identity>>) -> Route {
    match route {
        Route::Run(mut admitted) => {
            admitted.facts = facts_of(req, server, identity);
            Route::Run(admitted)
        }
        Route::Listen(mut admitted) => {
            admitted.facts = facts_of(req, server, identity);
            Route::Listen(admitted)
        }
        other => other,
    }
}

/// The request's headers, the caller the server authenticated, and the
/// [`Extensions`](crate::facts::extensions::Extensions) a middleware attached to
/// it (moved out of the actix-web request; so is an `Arc<Identity>` a
/// middleware attached, when the server authenticated no one).
///
/// With authorization on, the `Authorization` header is left out: the
/// server consumed the token, and a handler must not pass it on.
pub(super) fn facts_of(req: &HttpRequest, server: &McpServer, identity: Option<&Arc<Identity>>) -> RequestFacts {
    // The server's own credential check keeps the token from handlers.
    let skip = server.authorizer().is_some().then_some(&actix_web::http::header::AUTHORIZATION);
    let headers = Some(request_headers(req.headers(), skip));
    let trace = trace_of(req);
    // Most requests carry no extensions: look before borrowing mutably.
    let attached = {
        let e = req.extensions();
        e.contains::<Extensions>() || e.contains::<Arc<Identity>>()
    };
    if !attached {
        return RequestFacts { headers, identity: identity.cloned(), extensions: Extensions::default(), trace };
    }
    let mut ext = req.extensions_mut();
    let attached = ext.remove::<Arc<Identity>>();
    let extensions = ext.remove::<Extensions>().unwrap_or_default();
    RequestFacts { headers, identity: identity.cloned().or(attached), extensions, trace }
}

/// The trace context of the W3C headers; a malformed one is ignored.
fn trace_of(req: &HttpRequest) -> Option<mcp_protocol::trace::TraceContext> {
    use actix_web::http::header::HeaderName;
    // Names made once: looking up by `&str` parses the name on every request.
    const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
    const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");
    const BAGGAGE: HeaderName = HeaderName::from_static("baggage");
    let h = req.headers();
    let text = |name: &HeaderName| h.get(name).and_then(|v| v.to_str().ok());
    let traceparent = text(&TRACEPARENT)?;
    mcp_protocol::trace::TraceContext::from_parts(Some(traceparent), text(&TRACESTATE), text(&BAGGAGE))
}

/// Answers a route of the stateless era.
pub(super) async fn stateless(server: &McpServer, route: Route) -> Result<HttpResponse, HttpError> {
    match route {
        Route::Run(admitted) => reply::run(server, admitted, Era::Stateless).await,
        Route::Listen(admitted) => listen(server, *admitted),
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
    let filter = server
        .listen_filter(&admitted)
        .map_err(|e| HttpError::with_status(status_for(Some(e.code.0)), Some(&admitted.id), e))?;
    // With authorization on: only resources the token may read, and the
    // stream ends (with its completion result) when the token expires.
    let mut expires_in = None;
    if let (Some(auth), Some(identity)) = (server.authorizer(), admitted.facts.identity.as_deref()) {
        let catalog = server.service().catalog();
        for uri in &filter.resource_subscriptions {
            let scopes = catalog.read_scopes(uri);
            if !scopes.is_empty() {
                auth.permit(identity, &scopes)
                    .map_err(|e| super::auth::refusal(server, auth, Some(&admitted.id), &e, None, Some(identity)))?;
            }
        }
        expires_in = identity.expires_in();
    }
    let (sink, frames) = sse::queue(server.config().hub.listener_buffer);
    let kind = ListenerKind::Listen(admitted.id);
    let _ = server.start_listener_until(kind, filter, Box::new(sink), expires_in);
    Ok(sse::listen_response(frames))
}
