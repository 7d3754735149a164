//! [`RequestActor`]: one actor per request. It owns the call, its outlet for
//! notifications and the final response, its cancellation token and its
//! timeout; it answers once (or not at all when cancelled) and stops.
//!
//! Cancellation arrives three ways, all observed by the handler as its
//! token firing and its future being dropped:
//! - a [`Cancel`] message (stdio `notifications/cancelled`, shutdown);
//! - the outlet closing (the HTTP response stream was dropped: the client left);
//! - the timeout.

mod run;

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::{ErrorData, RequestId};
use slog::{debug, info, warn, Logger};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use crate::catalog::context::{ContextParts, RequestContext};
use crate::channels::control::{Abort, Cancel};
use crate::channels::outbound::{Outbound, OutboundTx};
use crate::pipeline::intake::Admitted;
use crate::pipeline::legacy::era::Era;
use crate::pipeline::service::McpService;
use crate::pipeline::watch::Watch;
use crate::telemetry::Outcome;
use run::{run, Limit, Ran};

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
        if let Some(mut actor) = self.0.take()
            && actor.as_mut().poll(cx).is_pending()
        {
            // What the actor waits on was registered with this task's
            // waker; its own task's first poll registers again.
            actix::spawn(actor);
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

impl Handler<Abort> for RequestActor {
    type Result = ();

    /// The request answers "server shutting down" and stops.
    fn handle(&mut self, _: Abort, _ctx: &mut Self::Context) {
        self.aborted = true;
        self.cancel.cancel();
    }
}
