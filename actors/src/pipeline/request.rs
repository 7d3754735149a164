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
use futures::FutureExt;
use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::request::ClientRequest;
use mcp_protocol::{ErrorData, ProtocolVersion, RequestId};
use slog::{debug, info, warn, Logger};
use tokio::sync::{mpsc, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::catalog::context::{ContextParts, RequestContext};
use crate::catalog::error::{panic_message, HandlerError};
use crate::catalog::Tool;
use crate::channels::control::{Abort, Cancel};
use crate::channels::outbound::{Outbound, OutboundTx};
use crate::pipeline::intake::Admitted;
use crate::pipeline::legacy::era::Era;
use crate::pipeline::service::{Answer, McpService};
use crate::pipeline::watch::Watch;
use crate::quota::Charge;
use crate::telemetry::trace_scope::InTrace;
use crate::telemetry::Outcome;

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// A response was handed to the outlet.
    Answered,
    /// Cancelled by the client or the server; nothing was sent.
    Cancelled,
    /// The timeout fired; an error response was sent.
    TimedOut,
    /// The server is shutting down; an error response was sent.
    Aborted,
    /// The handler panicked (with this message); an error response was sent.
    Panicked(String),
}

/// The actor that runs one request.
pub(crate) struct RequestActor {
    service: Arc<McpService>,
    id: RequestId,
    /// What the request is, boxed so that the actor stays small to move.
    work: Option<Box<Admitted>>,
    outbound: OutboundTx,
    /// Fires when the request must stop: a [`Cancel`], the client leaving,
    /// the timeout, an [`Abort`], or the server shutting down (it is a child
    /// of the server's token).
    cancel: CancellationToken,
    /// The server's token: fired, it says a cancellation was the shutdown.
    stopping: CancellationToken,
    /// An [`Abort`] arrived: the cancellation is answered with an error.
    aborted: bool,
    /// A place in its connection's in-flight cap, freed when the actor stops.
    _slot: Option<OwnedSemaphorePermit>,
    timeout: Duration,
    mailbox: usize,
    era: Era,
    method: &'static str,
    /// What is recorded of the request (metrics, span, slow log, audit),
    /// told once how it ended (an actor stopped early records a
    /// cancellation when it stops).
    watch: Watch,
    log: Logger,
}

/// What a request actor needs to start.
pub(crate) struct RequestSpec {
    /// The admitted request (id, validated `_meta`, parsed request, facts),
    /// boxed: it is large, and it moves from the transport to the actor.
    pub work: Box<Admitted>,
    /// Where notifications and the response go.
    pub outbound: OutboundTx,
    /// Cancel after this long.
    pub timeout: Duration,
    /// Mailbox capacity.
    pub mailbox: usize,
    /// The era it is served in.
    pub era: Era,
    /// The request's cancellation token: a child of `stopping`.
    pub cancel: CancellationToken,
    /// The server's token, fired at shutdown: the request then answers an
    /// error instead of nothing.
    pub stopping: CancellationToken,
    /// A place in its connection's in-flight cap (stdio), held until the
    /// actor stops.
    pub slot: Option<OwnedSemaphorePermit>,
    /// A request running longer is logged at INFO (`log.slow_ms`).
    pub slow: Duration,
}

impl RequestActor {
    /// Starts the actor in the calling task: it runs there until it first
    /// waits, and from then on as a task of its own on the current arbiter.
    /// A request whose handler answers at once is served whole within the
    /// caller's poll, with no task spawned and no wake-up in between.
    pub(crate) fn start_here(self) -> StartHere {
        StartHere(Some(Box::pin(Context::new().into_future(self))))
    }

    /// The actor for `spec`, not started.
    pub(crate) fn new(service: Arc<McpService>, mut spec: RequestSpec, log: &Logger) -> RequestActor {
        let w = &mut *spec.work;
        let watch = Watch::new(&service, w, spec.slow);
        // The parent logger: the actor's own lines carry request and method
        // inline, and the handler's child logger is built only if used.
        // A traced request's lines (its own and its handler's) carry the trace id.
        let trace = w.meta.trace.as_ref().or(w.facts.trace.as_ref());
        let log = match trace {
            Some(t) => log.new(slog::o!("trace_id" => t.trace_id().to_owned())),
            None => log.clone(),
        };
        let method = watch.method();
        RequestActor {
            service,
            id: w.id.clone(),
            work: Some(spec.work),
            outbound: spec.outbound,
            cancel: spec.cancel,
            stopping: spec.stopping,
            aborted: false,
            _slot: spec.slot,
            timeout: spec.timeout,
            mailbox: spec.mailbox,
            era: spec.era,
            method,
            watch,
            log,
        }
    }
}

/// The future of [`RequestActor::start_here`]: ready after one poll of the
/// actor, which it hands to the arbiter if the actor is still running.
#[must_use = "the actor starts when this is polled"]
pub(crate) struct StartHere(Option<std::pin::Pin<Box<RunningActor>>>);

/// A request actor's context future: the actor and what it runs.
type RunningActor = actix::dev::ContextFut<RequestActor, Context<RequestActor>>;

impl std::future::Future for StartHere {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if let Some(mut actor) = self.0.take() {
            if actor.as_mut().poll(cx).is_pending() {
                // What the actor waits on was registered with this task's
                // waker; its own task's first poll registers again.
                actix::spawn(actor);
            }
        }
        std::task::Poll::Ready(())
    }
}

impl Actor for RequestActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox);
        let Some(work) = self.work.take() else {
            self.watch.dismiss();
            ctx.stop();
            return;
        };
        debug!(self.log, "request started"; "request" => %self.id, "method" => self.method);
        self.watch.begin();
        if let Era::Legacy(session) = &self.era {
            // `notifications/cancelled` in the session reaches this actor.
            session.track(self.id.clone(), ctx.address().recipient());
        }
        let Admitted { meta, request, facts, tool, .. } = *work;
        let rctx = RequestContext::new(ContextParts {
            id: self.id.clone(),
            meta,
            cancel: self.cancel.clone(),
            outbound: self.outbound.clone(),
            log: self.log.clone(),
            catalog: self.service.catalog().clone(),
            session: self.era.peer(),
            facts,
            denied: self.watch.denied(),
        });
        // Built once into its box: wrapped and spawned by value, this large
        // future would be copied at each step.
        // The timeout runs from the request's start, read once for both.
        let deadline = tokio::time::Instant::from_std(self.watch.started_at()) + self.timeout;
        let limit = Limit { timeout: self.timeout, deadline };
        let work = Box::pin(run(self.service.clone(), request, tool, rctx, limit, self.watch.take_charge()));
        ctx.spawn(work.into_actor(self).map(|Ran { ending, code, tool_error, over_quota }, act, ctx| {
            if over_quota {
                act.watch.refused_by_quota();
            }
            let ending = act.shutdown_answer(ending);
            act.record(match ending {
                Ending::Answered if tool_error => Outcome::ToolError,
                Ending::Answered => code.map_or(Outcome::Ok, Outcome::Error),
                Ending::Cancelled | Ending::Aborted => Outcome::Cancelled,
                Ending::TimedOut => Outcome::TimedOut,
                Ending::Panicked(_) => Outcome::Error(-32603),
            });
            match ending {
                Ending::Answered => debug!(act.log, "request answered"; "request" => %act.id, "method" => act.method),
                Ending::Cancelled => debug!(act.log, "request cancelled"; "request" => %act.id, "method" => act.method),
                Ending::TimedOut => warn!(act.log, "request timed out";
                    "request" => %act.id, "method" => act.method, "timeout_ms" => act.timeout.as_millis() as u64),
                Ending::Aborted => {
                    info!(act.log, "request ended by shutdown"; "request" => %act.id, "method" => act.method)
                }
                Ending::Panicked(message) => slog::error!(act.log, "handler panicked; answered -32603";
                    "request" => %act.id, "method" => act.method, "panic" => message),
            }
            ctx.stop();
        }));
    }

    fn stopped(&mut self, ctx: &mut Self::Context) {
        // Whatever is still running for this request must stop with it.
        self.cancel.cancel();
        if let Era::Legacy(session) = &self.era {
            session.finished(&self.id, &ctx.address().recipient());
        }
        self.record(Outcome::Cancelled);
    }
}

impl RequestActor {
    /// Records how the request ended (once).
    fn record(&mut self, outcome: Outcome) {
        self.watch.finish(outcome, &self.id, &self.log);
    }

    /// A request cancelled by the shutdown (or an [`Abort`]) still answers:
    /// -32603 "server shutting down", so no stream is cut without a response.
    fn shutdown_answer(&self, ending: Ending) -> Ending {
        if ending != Ending::Cancelled || !(self.aborted || self.stopping.is_cancelled()) {
            return ending;
        }
        let data = ErrorData::internal("server shutting down");
        let answer = Outbound::answer(encode_error(Some(&self.id), &data), Some(data.code.0));
        // The client may have gone, or stopped reading: then nobody waits.
        let _ = self.outbound.try_send(answer);
        Ending::Aborted
    }
}

impl Handler<Cancel> for RequestActor {
    type Result = ();

    fn handle(&mut self, msg: Cancel, ctx: &mut Self::Context) {
        debug!(self.log, "cancellation requested";
            "request" => %self.id, "method" => self.method, "reason" => msg.reason.as_deref().unwrap_or("-"));
        self.cancel.cancel();
        ctx.stop();
    }
}

/// How long a handler may run: its timeout, and the instant it ends.
#[derive(Clone, Copy)]
struct Limit {
    timeout: Duration,
    deadline: tokio::time::Instant,
}

/// How [`run`] ended: how the request ended, the error code it answered
/// with, whether the tool reported an error (`isError`), and whether a quota
/// refused it.
struct Ran {
    ending: Ending,
    code: Option<i32>,
    tool_error: bool,
    over_quota: bool,
}

impl Ran {
    fn new(ending: Ending, code: Option<i32>, tool_error: bool) -> Ran {
        Ran { ending, code, tool_error, over_quota: false }
    }
}

/// Runs the handler until it answers, the request is cancelled (by a
/// [`Cancel`], or the client leaving: the outbound channel closed) or the
/// timeout fires, and hands the response to the outbound channel. A call
/// the quotas count (`charge`) is counted first; one over a quota is
/// answered so, and its handler never runs.
/// The handler's future is built here, in place: it is large, and moving it
/// into this future would copy it once more per call.
async fn run(
    service: Arc<McpService>,
    request: ClientRequest,
    tool: Option<Arc<Tool>>,
    ctx: RequestContext,
    limit: Limit,
    charge: Option<Box<Charge>>,
) -> Ran {
    let (id, version) = (ctx.request_id().clone(), ctx.protocol_version());
    let legacy = ctx.in_session();
    let (outbound, cancel) = (ctx.outbound().clone(), ctx.cancellation().clone());
    if let Some(charge) = charge {
        // Boxed: only calls the quotas count pay for the room it takes.
        if let Some(refused) = Box::pin(settle(charge, &id, &outbound, &cancel)).await {
            return refused;
        }
    }
    // A panicking handler is an internal error for this request only: the
    // client gets -32603 and the actor, thread and server carry on.
    // What the handler causes (catalog changes, so the hub's notifications)
    // carries its trace context.
    let trace = ctx.trace_context().cloned();
    let handler = std::panic::AssertUnwindSafe(InTrace::new(trace, service.handle(request, tool, ctx))).catch_unwind();
    let mut handler = std::pin::pin!(handler);
    if cancel.is_cancelled() || outbound.is_closed() {
        return Ran::new(Ending::Cancelled, None, false);
    }
    // The handler alone first: most answer at once, and then no timer is
    // armed and no waiter registered.
    let outcome = match futures::poll!(handler.as_mut()) {
        std::task::Poll::Ready(r) => Ok(r),
        // Boxed: the waiting (a timer, the token, the client) would add its
        // futures' size to every request's, answered at once or not.
        std::task::Poll::Pending => {
            match Box::pin(wait_for(handler.as_mut(), &cancel, &outbound, limit.deadline)).await {
                Some(outcome) => outcome,
                None => return Ran::new(Ending::Cancelled, None, false),
            }
        }
    };
    if outcome.is_err() {
        // Timed out: the handler stops (its token fires, its future is
        // dropped) and the client still gets a response saying why.
        cancel.cancel();
    }
    // `isError: true`: a success of the protocol, a failure of the operation.
    let tool_error = matches!(&outcome, Ok(Ok(Ok(Answer::Tool(r)))) if r.is_error == Some(true));
    let (bytes, code, ending) = encode_outcome(&service, &id, version, legacy, limit.timeout, outcome);
    let answered = matches!(ending, Ending::Answered | Ending::Panicked(_));
    if answered && cancel.is_cancelled() {
        return Ran::new(Ending::Cancelled, code, tool_error);
    }
    Ran::new(deliver(&outbound, &cancel, Outbound::answer(bytes, code), ending).await, code, tool_error)
}

/// Counts a call against its quotas: `None` when it may run, else how its
/// refusal (answered at once, 429 with `Retry-After` over HTTP) ended.
async fn settle(charge: Box<Charge>, id: &RequestId, outbound: &OutboundTx, cancel: &CancellationToken) -> Option<Ran> {
    let over = charge.settle().await.err()?;
    let data = over.error_data();
    let answer = Outbound::retry_later(encode_error(Some(id), &data), data.code.0, over.retry_after_secs);
    let ending = deliver(outbound, cancel, answer, Ending::Answered).await;
    Some(Ran { over_quota: true, ..Ran::new(ending, Some(data.code.0), false) })
}

/// Hands the final `answer` to the outbound channel: `ending` once it is
/// there, [`Ending::Cancelled`] when the client left (or, for an answer,
/// the request was cancelled while it waited for room).
async fn deliver(outbound: &OutboundTx, cancel: &CancellationToken, answer: Box<Outbound>, ending: Ending) -> Ending {
    // Room in the channel is the rule: then no waiter is registered.
    let answer = match outbound.try_send(answer) {
        Ok(()) => return ending,
        Err(mpsc::error::TrySendError::Closed(_)) => return Ending::Cancelled,
        Err(mpsc::error::TrySendError::Full(answer)) => answer,
    };
    let answered = matches!(ending, Ending::Answered | Ending::Panicked(_));
    // Boxed for the same reason as the wait for the handler.
    let sent = Box::pin(async {
        tokio::select! {
            biased;
            _ = cancel.cancelled(), if answered => false,
            sent = outbound.send(answer) => sent.is_ok(),
        }
    })
    .await;
    if sent {
        ending
    } else {
        Ending::Cancelled
    }
}

/// What a handler ended with: its answer or error, or its panic.
type HandlerOutcome = std::thread::Result<Result<Answer, HandlerError>>;

/// The bytes of a handler's outcome (its answer, its error, its panic or the
/// timeout), the error code they carry, and how the request ended.
fn encode_outcome(
    service: &McpService,
    id: &RequestId,
    version: ProtocolVersion,
    legacy: bool,
    timeout: Duration,
    outcome: Result<HandlerOutcome, Ending>,
) -> (Vec<u8>, Option<i32>, Ending) {
    match outcome {
        Ok(Ok(Ok(answer))) => (service.encode_answer(id, &answer, legacy), None, Ending::Answered),
        Ok(Err(panic)) => {
            let data = ErrorData::internal("the handler failed (it panicked); see the server log");
            (encode_error(Some(id), &data), Some(data.code.0), Ending::Panicked(panic_message(&*panic)))
        }
        Ok(Ok(Err(e))) => {
            let data = e.to_error_data(version);
            (encode_error(Some(id), &data), Some(data.code.0), Ending::Answered)
        }
        Err(ending) => {
            let data = ErrorData::internal(format!("Request timed out after {} ms", timeout.as_millis()));
            (encode_error(Some(id), &data), Some(data.code.0), ending)
        }
    }
}

/// Waits for a handler that did not answer at once: its outcome, the timeout
/// (`Err`), or `None` when the request was cancelled (by the token, or the
/// client leaving: the outbound channel closed).
async fn wait_for<F: std::future::Future>(
    handler: std::pin::Pin<&mut F>,
    cancel: &CancellationToken,
    outbound: &OutboundTx,
    deadline: tokio::time::Instant,
) -> Option<Result<F::Output, Ending>> {
    // The token fires before the handler future is dropped, so a handler can
    // observe either.
    let client_gone = async {
        outbound.closed().await;
        cancel.cancel();
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => None,
        _ = client_gone => None,
        _ = tokio::time::sleep_until(deadline) => Some(Err(Ending::TimedOut)),
        r = handler => Some(Ok(r)),
    }
}

impl Handler<Abort> for RequestActor {
    type Result = ();

    /// The request answers "server shutting down" and stops.
    fn handle(&mut self, _: Abort, _ctx: &mut Self::Context) {
        self.aborted = true;
        self.cancel.cancel();
    }
}
