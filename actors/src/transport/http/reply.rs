//! The reply to a request that runs in a request actor: `application/json`
//! when the response is ready within `http.stream_after_ms` and came alone,
//! else an SSE stream of its notifications and then the response.

use std::time::Duration;

use actix_web::http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use mcp_protocol::RequestId;
use tokio::sync::mpsc;

use super::error::{status_for, HttpError};
use crate::channels::outbound::{self, Outbound, OutboundRx};
use crate::config::Config;
use crate::pipeline::intake::Admitted;
use crate::pipeline::legacy::era::Era;
use crate::server::McpServer;
use crate::transport::sse;

/// Runs an admitted request in a request actor and replies. The actor
/// starts in this task ([`McpServer::start_request_here`]): a handler that
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
    let actor = server.start_request_here(admitted, era, tx);
    async move {
        actor.await;
        reply(server.config(), id, rx, statuses).await
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
/// else an SSE stream.
pub(super) async fn reply(
    config: &Config,
    id: RequestId,
    mut rx: OutboundRx,
    statuses: Statuses,
) -> Result<HttpResponse, HttpError> {
    let keep_alive = Duration::from_millis(config.http.sse_keep_alive_ms.max(1));
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
            Outbound::Final { bytes, error_code } => {
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
