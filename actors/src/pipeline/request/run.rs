//! How one request's handler runs inside its actor: counted against the
//! quotas, polled once alone, then raced against its timeout, its
//! cancellation and the client leaving; its outcome encoded and handed to
//! the outbound channel.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::request::ClientRequest;
use mcp_protocol::{ErrorData, ProtocolVersion, RequestId};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Ending;
use crate::catalog::context::RequestContext;
use crate::catalog::error::{panic_message, HandlerError};
use crate::catalog::Tool;
use crate::channels::outbound::{Outbound, OutboundTx};
use crate::pipeline::service::{Answer, McpService};
use crate::quota::Charge;
use crate::telemetry::trace_scope::InTrace;

/// How long a handler may run: its timeout, and the instant it ends.
#[derive(Clone, Copy)]
pub(super) struct Limit {
    pub(super) timeout: Duration,
    pub(super) deadline: tokio::time::Instant,
}

/// How [`run`] ended: how the request ended, the error code it answered
/// with, whether the tool reported an error (`isError`), and whether a quota
/// refused it.
pub(super) struct Ran {
    pub(super) ending: Ending,
    pub(super) code: Option<i32>,
    pub(super) tool_error: bool,
    pub(super) over_quota: bool,
}

impl Ran {
    fn new(ending: Ending, code: Option<i32>, tool_error: bool) -> Ran {
        Ran { ending, code, tool_error, over_quota: false }
    }
}

/// Runs the handler until it answers, the request is cancelled (by a
/// [`Cancel`](crate::channels::control::Cancel), or the client leaving: the
/// outbound channel closed) or the timeout fires, and hands the response to
/// the outbound channel. A call the quotas count (`charge`) is counted
/// first; one over a quota is answered so, and its handler never runs.
/// The handler's future is built here, in place: it is large, and moving it
/// into this future would copy it once more per call.
pub(super) async fn run(
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
