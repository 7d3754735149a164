//! [`RequestActor`]: one actor per request. It owns the call, its outlet for
//! notifications and the final response, its cancellation token and its
//! timeout; it answers once (or not at all when cancelled) and stops.
//!
//! Cancellation arrives three ways, all observed by the handler as its
//! token firing and its future being dropped:
//! - a [`Cancel`] message (stdio `notifications/cancelled`, shutdown);
//! - the outlet closing (the HTTP response stream was dropped: the client left);
//! - the timeout.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::jsonrpc::{encode_error, encode_result};
use mcp_protocol::request::ClientRequest;
use mcp_protocol::{ErrorData, RequestId, RequestMeta};
use slog::{debug, info, warn, Logger};
use tokio_util::sync::CancellationToken;

use crate::context::RequestContext;
use crate::legacy::PendingRequests;
use crate::outbound::{Outbound, OutletTx};
use crate::service::McpService;

/// Asks a request actor to stop its work and send nothing more.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Cancel {
    /// Why (logged).
    pub reason: Option<String>,
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A response was handed to the outlet.
    Answered,
    /// Cancelled by the client or the server; nothing was sent.
    Cancelled,
    /// The timeout fired; an error response was sent.
    TimedOut,
}

/// The actor that runs one request.
pub struct RequestActor {
    service: Arc<McpService>,
    id: RequestId,
    work: Option<(RequestMeta, ClientRequest)>,
    outlet: OutletTx,
    cancel: CancellationToken,
    timeout: Duration,
    mailbox: usize,
    legacy: Option<Arc<PendingRequests>>,
    method: &'static str,
    log: Logger,
}

/// What a request actor needs to start.
pub struct RequestSpec {
    /// The request id.
    pub id: RequestId,
    /// Its validated `_meta`.
    pub meta: RequestMeta,
    /// The parsed request.
    pub request: ClientRequest,
    /// Where notifications and the response go.
    pub outlet: OutletTx,
    /// Cancel after this long.
    pub timeout: Duration,
    /// Mailbox capacity.
    pub mailbox: usize,
    /// Legacy sessions: where server-to-client requests await answers.
    pub legacy: Option<Arc<PendingRequests>>,
}

impl RequestActor {
    /// Starts the actor on the current arbiter.
    pub fn start_with(service: Arc<McpService>, spec: RequestSpec, log: &Logger) -> Addr<RequestActor> {
        // The parent logger: the actor's own lines carry request and method
        // inline, and the handler's child logger is built only if used.
        let log = log.clone();
        let method = spec.request.method();
        RequestActor {
            service,
            id: spec.id,
            work: Some((spec.meta, spec.request)),
            outlet: spec.outlet,
            cancel: CancellationToken::new(),
            timeout: spec.timeout,
            mailbox: spec.mailbox,
            legacy: spec.legacy,
            method,
            log,
        }
        .start()
    }
}

impl Actor for RequestActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox);
        let Some((meta, request)) = self.work.take() else {
            ctx.stop();
            return;
        };
        debug!(self.log, "request started"; "request" => %self.id, "method" => self.method);
        let version = meta.version;
        let rctx = RequestContext::new(
            self.id.clone(),
            meta,
            self.cancel.clone(),
            self.outlet.clone(),
            self.log.clone(),
            self.service.catalog().clone(),
            self.legacy.clone(),
        );
        let service = self.service.clone();
        let cancel = self.cancel.clone();
        let outlet = self.outlet.clone();
        let timeout = self.timeout;
        let id = self.id.clone();
        let work = async move {
            let handler = service.handle(request, rctx);
            // The token fires before the handler future is dropped, so a
            // handler can observe either.
            let client_gone = async {
                outlet.closed().await;
                cancel.cancel();
            };
            let outcome = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Ending::Cancelled,
                _ = client_gone => return Ending::Cancelled,
                _ = tokio::time::sleep(timeout) => None,
                r = handler => Some(r),
            };
            let (bytes, code, ending) = match outcome {
                Some(Ok(result)) => (encode_result(&id, &result), None, Ending::Answered),
                Some(Err(e)) => {
                    let data = e.to_error_data(version);
                    let code = data.code.0;
                    (encode_error(Some(&id), &data), Some(code), Ending::Answered)
                }
                None => {
                    cancel.cancel();
                    let data = ErrorData::internal(format!("Request timed out after {} ms", timeout.as_millis()));
                    (encode_error(Some(&id), &data), Some(data.code.0), Ending::TimedOut)
                }
            };
            let final_msg = Box::new(Outbound::Final { bytes: bytes.into(), error_code: code });
            tokio::select! {
                biased;
                _ = cancel.cancelled(), if ending != Ending::TimedOut => Ending::Cancelled,
                sent = outlet.send(final_msg) => if sent.is_ok() { ending } else { Ending::Cancelled },
            }
        };
        ctx.spawn(work.into_actor(self).map(|ending, act, ctx| {
            match ending {
                Ending::Answered => debug!(act.log, "request answered"; "request" => %act.id, "method" => act.method),
                Ending::Cancelled => info!(act.log, "request cancelled"; "request" => %act.id, "method" => act.method),
                Ending::TimedOut => warn!(act.log, "request timed out";
                    "request" => %act.id, "method" => act.method, "timeout_ms" => act.timeout.as_millis() as u64),
            }
            ctx.stop();
        }));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        // Whatever is still running for this request must stop with it.
        self.cancel.cancel();
    }
}

impl Handler<Cancel> for RequestActor {
    type Result = ();

    fn handle(&mut self, msg: Cancel, ctx: &mut Self::Context) {
        info!(self.log, "cancellation requested";
            "request" => %self.id, "method" => self.method, "reason" => msg.reason.as_deref().unwrap_or("-"));
        self.cancel.cancel();
        ctx.stop();
    }
}
