//! The HTTP driver of the intake: one POSTed message with its headers and
//! caller ([`HttpDriver`]), and the HTTP answer to each [`Action`] (a
//! request actor's reply, a listen stream, a refusal with its status, 202).
//!
//! The reply to a request that runs in a request actor: `application/json`
//! when the response is ready within `http.stream_after_ms` and came alone,
//! else an SSE stream of its notifications and then the response.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use mcp_protocol::RequestId;
use tokio::sync::mpsc;

use super::error::{status_for, HttpError};
use super::headers::{request_headers, HttpHeaders};
use crate::channels::outbound::{self, Outbound, OutboundRx};
use crate::config::Config;
use crate::facts::extensions::Extensions;
use crate::facts::head::Headers;
use crate::facts::identity::Identity;
use crate::facts::RequestFacts;
use crate::pipeline::intake::{Action, Admitted, Driver, ListenAdmission};
use crate::pipeline::legacy::era::Era;
use crate::server::McpServer;
use crate::telemetry::span::NetworkTransport;
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

/// The HTTP answer to what the intake decided about the message `driver`
/// had at `started`; a refusal is reported to the server's observer.
pub(super) async fn act(driver: &HttpDriver<'_>, action: Action, started: Instant) -> Result<HttpResponse, HttpError> {
    let server = driver.server;
    match action {
        Action::Refuse(refusal) => {
            server.refused(&refusal, driver.caller(), NetworkTransport::Tcp, started);
            Err(HttpError::refused(refusal, server.authorizer().map(|a| &**a)))
        }
        Action::Run(admitted) => run(server, admitted, Era::Stateless).await,
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

/// Runs an admitted request in a request actor and replies. The actor
/// starts in this task ([`RequestActor::start_here`](crate::pipeline::request::RequestActor::start_here)): a handler that
/// answers at once is answered within this poll. The returned future holds
/// only the reply's channel and the boxed actor, not the request.
pub(super) fn run(
    server: &McpServer,
    admitted: Box<Admitted>,
    era: Era,
) -> impl std::future::Future<Output = Result<HttpResponse, HttpError>> + '_ {
    let (tx, rx) = outbound::channel(server.config().request.outbound_buffer);
    let id = admitted.id.clone();
    let statuses = Statuses::of(&era);
    // An events stream's heartbeats are notifications, not SSE comments.
    let comments = !matches!(admitted.request, mcp_protocol::ClientRequest::StreamEvents(_));
    let actor = server.request_actor(admitted, era, tx, None).start_here();
    async move {
        actor.await;
        reply(server.config(), id, rx, statuses, comments).await
    }
}

/// Which HTTP status a JSON-RPC error response goes with, by era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Statuses {
    /// Stateless: the status of its code ([`status_for`]).
    ByCode,
    /// A legacy session: always 200, as that era did.
    AlwaysOk,
}

impl Statuses {
    /// The rule of `era`.
    pub(super) fn of(era: &Era) -> Self {
        match era {
            Era::Stateless => Statuses::ByCode,
            Era::Legacy(_) => Statuses::AlwaysOk,
        }
    }
}

/// `Content-Type: application/json`, made once: naming it by a string
/// would parse and copy it into a new header value for every response.
const JSON_CONTENT_TYPE: (HeaderName, HeaderValue) = (CONTENT_TYPE, HeaderValue::from_static("application/json"));

/// The response when it is ready within `stream_after_ms` and came alone,
/// else an SSE stream, with keep-alive `comments` in its quiet or not.
pub(super) async fn reply(
    config: &Config,
    id: RequestId,
    mut rx: OutboundRx,
    statuses: Statuses,
    comments: bool,
) -> Result<HttpResponse, HttpError> {
    let keep_alive = comments.then(|| Duration::from_millis(config.http.sse_keep_alive_ms.max(1)));
    // The response is often there already: then no timer is armed.
    let first = match rx.try_recv() {
        Ok(first) => Ok(Some(first)),
        Err(mpsc::error::TryRecvError::Disconnected) => Ok(None),
        // Boxed: most responses are there already, and the timer's future
        // would add its size to every request's.
        Err(mpsc::error::TryRecvError::Empty) => {
            Box::pin(tokio::time::timeout(Duration::from_millis(config.http.stream_after_ms), rx.recv())).await
        }
    };
    match first {
        Ok(Some(first)) => Ok(match *first {
            Outbound::Final { bytes, retry_after_secs: Some(secs), .. } => HttpResponse::TooManyRequests()
                .insert_header(JSON_CONTENT_TYPE)
                .insert_header((actix_web::http::header::RETRY_AFTER, secs))
                .body(bytes),
            Outbound::Final { bytes, error_code, .. } => {
                let status = match statuses {
                    Statuses::ByCode => status_for(error_code),
                    Statuses::AlwaysOk => StatusCode::OK,
                };
                HttpResponse::build(status).insert_header(JSON_CONTENT_TYPE).body(bytes)
            }
            notification => sse::request_response(Some(notification), rx, keep_alive),
        }),
        Ok(None) => Err(HttpError::internal(Some(&id), "The request ended without a response")),
        Err(_) => Ok(sse::request_response(None, rx, keep_alive)),
    }
}
