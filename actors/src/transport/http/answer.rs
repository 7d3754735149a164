//! The HTTP driver of the intake: one POSTed message with its headers and
//! caller ([`HttpDriver`]), and the HTTP answer to each [`Action`] (a
//! request actor's reply, a listen stream, a refusal with its status, 202).

use std::sync::Arc;

use actix_web::{HttpMessage, HttpRequest, HttpResponse};

use super::error::HttpError;
use super::headers::{request_headers, HttpHeaders};
use super::reply;
use crate::facts::extensions::Extensions;
use crate::facts::head::Headers;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use crate::pipeline::intake::{Action, Admitted, Driver, ListenAdmission};
use crate::pipeline::legacy::era::Era;
use crate::server::McpServer;
use crate::transport::sse;

/// One POSTed message, as the intake sees it: its headers, and the caller
/// the server authenticated from them.
pub(super) struct HttpDriver<'r> {
    req: &'r HttpRequest,
    server: &'r McpServer,
    headers: HttpHeaders<'r>,
    identity: Option<&'r Arc<Identity>>,
}

impl<'r> HttpDriver<'r> {
    pub(super) fn new(req: &'r HttpRequest, server: &'r McpServer, identity: Option<&'r Arc<Identity>>) -> Self {
        HttpDriver { req, server, headers: HttpHeaders(req), identity }
    }
}

impl Driver for HttpDriver<'_> {
    fn headers(&self) -> Option<&dyn Headers> {
        Some(&self.headers)
    }

    fn caller(&self) -> Option<&Identity> {
        self.identity.map(|i| &**i)
    }

    fn facts(&self) -> RequestFacts {
        facts_of(self.req, self.server, self.identity)
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

/// The HTTP answer to what the intake decided.
pub(super) async fn act(server: &McpServer, action: Action) -> Result<HttpResponse, HttpError> {
    match action {
        Action::Refuse(refusal) => Err(HttpError::refused(refusal)),
        Action::Run(admitted) => reply::run(server, admitted, Era::Stateless).await,
        Action::Listen(admitted, admission) => Ok(listen(server, *admitted, admission)),
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
fn listen(server: &McpServer, admitted: Admitted, admission: ListenAdmission) -> HttpResponse {
    let (sink, frames) = sse::queue(server.config().hub.listener_buffer);
    server.start_listen(admitted.id, admission, Box::new(sink));
    sse::listen_response(frames)
}
