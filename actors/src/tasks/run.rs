//! A handler run that may outlive its request: spawned on the current
//! arbiter, stopped by its own cancellation token, its panic caught.

use futures::FutureExt;
use mcp_protocol::model::tools::CallToolResult;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::catalog::error::HandlerError;
use crate::catalog::HandlerFuture;

/// Stops a task's handler (`tasks/cancel`).
#[derive(Debug, Clone, Copy, actix::Message)]
#[rtype(result = "()")]
pub struct CancelRun;

/// How a handler run ended.
#[derive(Debug)]
pub(crate) enum RunOutcome {
    /// It returned (a result, an error, or `InputRequired`).
    Done(Result<CallToolResult, HandlerError>),
    /// It panicked, with this message.
    Panicked(String),
    /// Its token fired first; the handler was dropped.
    Cancelled,
}

/// Runs `handler` until it ends or `cancel` fires; the receiver hears how.
pub(crate) fn spawn_run(
    handler: HandlerFuture<CallToolResult>,
    cancel: CancellationToken,
) -> oneshot::Receiver<RunOutcome> {
    let (tx, rx) = oneshot::channel();
    actix_rt::spawn(async move {
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => RunOutcome::Cancelled,
            r = std::panic::AssertUnwindSafe(handler).catch_unwind() => match r {
                Ok(done) => RunOutcome::Done(done),
                Err(panic) => RunOutcome::Panicked(crate::catalog::error::panic_message(&*panic)),
            },
        };
        let _ = tx.send(outcome);
    });
    rx
}
