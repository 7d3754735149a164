//! [`TaskActor`]: one actor per running task handler. It owns the run's
//! cancellation token, records the handler's status messages on the task,
//! and settles the task when the handler ends: a result → `completed`
//! (a tool error too, with `isError`), a JSON-RPC error or a panic →
//! `failed`, input requests → `input_required`, cancellation → `cancelled`.

use std::sync::Arc;

use actix::prelude::*;
use mcp_protocol::tasks::TaskStatus;
use mcp_protocol::ErrorData;
use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::run::{CancelRun, RunOutcome};
use super::service::TaskService;
use crate::catalog::context::RequestContext;
use crate::catalog::error::HandlerError;

/// The actor of one running task handler.
pub struct TaskActor {
    id: String,
    tasks: Arc<TaskService>,
    /// The handler's context (its input round is read when it asks for input).
    ctx: RequestContext,
    cancel: CancellationToken,
    run: Option<oneshot::Receiver<RunOutcome>>,
    statuses: Option<watch::Receiver<Option<String>>>,
    log: slog::Logger,
}

impl TaskActor {
    /// Takes over the run of task `id`'s handler.
    pub(crate) fn start_with(
        id: String,
        tasks: Arc<TaskService>,
        ctx: RequestContext,
        cancel: CancellationToken,
        run: oneshot::Receiver<RunOutcome>,
    ) -> Addr<TaskActor> {
        let statuses = ctx.task_link().map(|l| l.statuses());
        let log = ctx.logger().new(slog::o!("task" => id.clone()));
        TaskActor { id, tasks, ctx, cancel, run: Some(run), statuses, log }.start()
    }

    /// Records the handler's latest status message on the task.
    fn follow_statuses(&mut self, ctx: &mut Context<Self>) {
        let Some(mut statuses) = self.statuses.take() else { return };
        let (tasks, id) = (self.tasks.clone(), self.id.clone());
        ctx.spawn(
            async move {
                while statuses.changed().await.is_ok() {
                    let message = statuses.borrow_and_update().clone();
                    let now = tasks.now();
                    let change = Box::new(move |t: &mut super::TaskRecord| {
                        if t.is_terminal() || t.status_message == message {
                            return false;
                        }
                        t.status_message.clone_from(&message);
                        t.updated_ms = now.max(t.updated_ms);
                        true
                    });
                    let _ = tasks.update(&id, change).await;
                }
            }
            .into_actor(self),
        );
    }
}

/// The change that settles a task after its handler's `outcome` (run
/// with `ctx`), at `now`, a panic logged to `log`: for the actor of a running task, and for a
/// required task whose handler ended before the task was created.
pub(crate) fn settlement(outcome: RunOutcome, ctx: &RequestContext, now: u64, log: &slog::Logger) -> super::Change {
    let version = ctx.protocol_version();
    match outcome {
        RunOutcome::Done(Ok(result)) => {
            let result = serde_json::to_value(&result).unwrap_or_default();
            Box::new(move |t| {
                t.result = Some(result.clone());
                t.settle(TaskStatus::Completed, now)
            })
        }
        RunOutcome::Done(Err(HandlerError::InputRequired)) => {
            let round = ctx.take_round();
            let answered: Map<String, Value> =
                round.answered.iter().filter_map(|k| round.responses.get(k).map(|v| (k.clone(), v.clone()))).collect();
            let state = round.state_out.or(round.state_in);
            let pending: Map<String, Value> =
                round.pending.into_iter().map(|(k, r)| (k, serde_json::to_value(r).unwrap_or_default())).collect();
            Box::new(move |t| {
                t.call.responses.extend(answered.clone());
                t.call.state.clone_from(&state);
                if t.cancel_requested {
                    return t.settle(TaskStatus::Cancelled, now);
                }
                if pending.is_empty() {
                    t.error = Some(error_value(&ErrorData::internal("the handler asked for input without a request")));
                    return t.settle(TaskStatus::Failed, now);
                }
                let changed = t.settle(TaskStatus::InputRequired, now);
                t.input_requests.clone_from(&pending);
                t.runner = None;
                changed
            })
        }
        RunOutcome::Done(Err(e)) => {
            let error = error_value(&e.to_error_data(version));
            Box::new(move |t| {
                t.error = Some(error.clone());
                t.settle(TaskStatus::Failed, now)
            })
        }
        RunOutcome::Panicked(message) => {
            slog::error!(log, "task handler panicked; the task failed"; "panic" => message);
            let error = error_value(&ErrorData::internal("the handler failed (it panicked); see the server log"));
            Box::new(move |t| {
                t.error = Some(error.clone());
                t.settle(TaskStatus::Failed, now)
            })
        }
        RunOutcome::Cancelled => Box::new(move |t| t.settle(TaskStatus::Cancelled, now)),
    }
}

fn error_value(e: &ErrorData) -> Value {
    serde_json::to_value(e).unwrap_or_default()
}

impl Actor for TaskActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.tasks.register(&self.id, ctx.address().recipient());
        self.follow_statuses(ctx);
        // While it runs, this instance renews its claim on the task.
        let every = std::time::Duration::from_millis((self.tasks.config().lease_ms / 3).max(100));
        ctx.run_interval(every, |act, ctx| {
            let (tasks, id) = (act.tasks.clone(), act.id.clone());
            ctx.spawn(
                async move {
                    let _ = tasks.renew(&id).await;
                }
                .into_actor(act),
            );
        });
        let Some(run) = self.run.take() else { return ctx.stop() };
        ctx.spawn(
            run.into_actor(self)
                .then(|outcome, act, _ctx| {
                    let outcome = outcome.unwrap_or(RunOutcome::Cancelled);
                    let change = settlement(outcome, &act.ctx, act.tasks.now(), &act.log);
                    let (tasks, id) = (act.tasks.clone(), act.id.clone());
                    async move { tasks.update(&id, change).await }.into_actor(act)
                })
                .map(|settled, act, ctx| {
                    match settled {
                        Ok(Some((t, _))) => slog::debug!(act.log, "task settled"; "status" => ?t.status),
                        Ok(None) => slog::debug!(act.log, "task gone before it settled"),
                        Err(e) => slog::warn!(act.log, "could not settle the task"; "error" => %e),
                    }
                    ctx.stop();
                }),
        );
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.cancel.cancel();
        self.tasks.unregister(&self.id);
    }
}

impl Handler<CancelRun> for TaskActor {
    type Result = ();

    fn handle(&mut self, _: CancelRun, _ctx: &mut Context<Self>) {
        slog::debug!(self.log, "task cancelled");
        self.cancel.cancel();
    }
}
