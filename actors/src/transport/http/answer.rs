//! What the POST handlers share: routing a message through the dispatcher
//! with this request's headers, and answering the routes of the stateless
//! era (a request actor's reply, a listen stream, a refusal, 202).

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use mcp_protocol::Message;

use super::error::{status_for, HttpError};
use super::headers::{request_headers, HttpHeaders};
use super::reply;
use crate::facts::extensions::Extensions;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use crate::hub::listener::ListenerKind;
use crate::pipeline::intake::{self, Action, Admitted, Caller, ConnectionEra, Route};
use crate::pipeline::legacy::era::Era;
use crate::server::{ListenAdmission, ListenRefusal, McpServer};
use crate::transport::sse;

/// Routes a message through the dispatcher.
pub(super) fn route(
    req: &HttpRequest,
    server: &McpServer,
    message: Message<'_>,
    era: ConnectionEra,
    identity: Option<&Arc<Identity>>,
) -> Route {
    let headers = HttpHeaders(req);
    let caller = match (server.authorizer(), identity) {
        (Some(authorizer), Some(identity)) => Some(Caller { identity, authorizer }),
        _ => None,
    };
    let service = server.service();
    let conn = intake::Connection {
        versions: service.stateless_versions(),
        catalog: service.catalog(),
        headers: Some(&headers),
        era,
        caller,
    };
    with_facts(intake::route(&conn, message), req, server, identity)
}

/// An admitted request, given its headers, caller and extensions.
fn with_facts(route: Route, req: &HttpRequest, server: &McpServer, identity: Option<&Arc<Identity>>) -> Route {
    match route {
        Route::Stateless(Action::Run(mut admitted)) => {
            admitted.facts = facts_of(req, server, identity);
            Route::Stateless(Action::Run(admitted))
        }
        Route::Stateless(Action::Listen(mut admitted)) => {
            admitted.facts = facts_of(req, server, identity);
            Route::Stateless(Action::Listen(admitted))
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

/// Answers what the intake decided for a message of the stateless era
/// (`caller`: the authenticated caller, for the report of a refusal).
pub(super) async fn stateless(
    server: &McpServer,
    action: Action,
    caller: Option<&Identity>,
) -> Result<HttpResponse, HttpError> {
    match action {
        Action::Forbidden { id, error } => Err(super::auth::forbidden(server, id.as_ref(), &error, caller)),
        Action::Run(admitted) => reply::run(server, admitted, Era::Stateless).await,
        Action::Listen(admitted) => listen(server, *admitted),
        Action::Refuse(refusal) => Err(HttpError::refused(refusal)),
        // Cancellation over HTTP is the client closing the response stream.
        Action::Cancel { .. } | Action::Notification(_) => Ok(HttpResponse::Accepted().finish()),
        Action::Unexpected(r) => {
            Err(HttpError::invalid(Some(&r.id), "Clients must not send responses on this endpoint"))
        }
    }
}

/// `subscriptions/listen`: an SSE stream that stays open, fed by a listener
/// actor. The stream starts at once; its first event is the acknowledgement,
/// sent once the hub has registered the listener (or, if the hub refused it
/// after all, the error response).
fn listen(server: &McpServer, admitted: Admitted) -> Result<HttpResponse, HttpError> {
    let id = Some(&admitted.id);
    let ListenAdmission { filter, expires_in } = server.admit_listen(&admitted).map_err(|refused| match refused {
        ListenRefusal::Busy(e) => HttpError::with_status(StatusCode::SERVICE_UNAVAILABLE, id, e),
        ListenRefusal::Invalid(e) => HttpError::with_status(status_for(Some(e.code.0)), id, e),
        ListenRefusal::Forbidden(e) => super::auth::forbidden(server, id, &e, admitted.facts.identity.as_deref()),
    })?;
    let (sink, frames) = sse::queue(server.config().hub.listener_buffer);
    let kind = ListenerKind::Listen(admitted.id);
    let _ = server.start_listener_until(kind, filter, Box::new(sink), expires_in);
    Ok(sse::listen_response(frames))
}
