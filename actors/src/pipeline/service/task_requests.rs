//! `tools/call` as a task, and `tasks/get`, `tasks/update`, `tasks/cancel`
//! (the Tasks extension).

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::model::tools::CallToolParams;
use mcp_protocol::request::method;
use mcp_protocol::request_state::Binding;
use mcp_protocol::tasks::{self, TaskIdParams, TaskStatus, UpdateTaskParams};
use mcp_protocol::{ErrorCode, ErrorData, ProtocolError};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::{Answer, McpService};
use crate::catalog::context::RequestContext;
use crate::catalog::context::TaskLink;
use crate::catalog::error::HandlerError;
use crate::catalog::{TaskSupport, Tool};
use crate::tasks::{settlement, spawn_run, RunOutcome, TaskActor, TaskCall, TaskRecord, TaskService};

/// -32602 for an unknown, expired or another subject's task.
fn not_found(id: &str) -> HandlerError {
    HandlerError::invalid_params(format!("Failed to retrieve task: no task {id:?} (unknown or expired)"))
}

fn store_error(e: crate::tasks::StoreError) -> HandlerError {
    HandlerError::internal(e.to_string())
}

/// Why a task could not be created: the store or the caller's share of it
/// at its limit is load (-32000, HTTP 429: retry later), not a fault.
fn refused(e: crate::tasks::StoreError) -> HandlerError {
    let (reason, limit) = match &e {
        crate::tasks::StoreError::ShareFull(n) => ("caller_share", *n),
        crate::tasks::StoreError::Full(n) => ("store", *n),
        crate::tasks::StoreError::Unavailable(_) => return store_error(e),
    };
    let message = format!("The server cannot take another task now ({e}); try again later");
    HandlerError::Rpc(
        ErrorData::new(ErrorCode::SERVER_BUSY, message)
            .with_data(serde_json::json!({"reason": reason, "limit": limit})),
    )
}

fn is_input_required(outcome: &RunOutcome) -> bool {
    matches!(outcome, RunOutcome::Done(Err(HandlerError::InputRequired)))
}

impl McpService {
    /// The task service, when the client may use tasks on this request: the
    /// extension is on, the request is of the stateless era, and it declared
    /// the extension.
    pub(super) fn tasks_for(&self, ctx: &RequestContext) -> Option<&Arc<TaskService>> {
        let declared = !ctx.in_session() && tasks::declared(ctx.client_capabilities());
        self.tasks.as_ref().filter(|_| declared)
    }

    /// The service for a `tasks/*` request: -32601 where the extension is
    /// off or in a legacy session, -32021 for a client that did not declare it.
    fn tasks_gate(&self, ctx: &RequestContext, method: &str) -> Result<&Arc<TaskService>, HandlerError> {
        if self.tasks.is_none() || ctx.in_session() {
            return Err(ProtocolError::MethodNotFound(method.to_owned()).into());
        }
        self.tasks_for(ctx).ok_or_else(|| tasks::missing_extension(method).into())
    }

    /// A `tools/call` of a tool that allows tasks, by a client that may use
    /// them. The handler runs on its own (it may outlive the request); the
    /// call becomes a task when the handler calls `begin_task`, or is still
    /// running after `tasks.task_after_ms`. A handler that answers first is
    /// answered in the call (an optional task), or through a task created
    /// already finished (a required one); one that asks for input first
    /// gets an `InputRequiredResult` (a multi round-trip request of the call).
    /// When the store or the caller's share of it is full, an optional
    /// task's call is answered in the call, and a required one is refused
    /// with -32000 (HTTP 429).
    pub(super) async fn call_as_task(
        &self,
        tasks: Arc<TaskService>,
        tool: Arc<Tool>,
        p: CallToolParams,
        ctx: RequestContext,
    ) -> Result<Value, HandlerError> {
        let args = p.arguments.unwrap_or_default();
        let owner = ctx.auth().map(crate::facts::identity::Identity::key);
        let binding = || Binding::new("tools/call", &p.name, Some(&args.to_map())).for_subject(owner.as_deref());
        let token = CancellationToken::new();
        // Dropped with this call (the client left before a task existed):
        // the handler stops too.
        let guard = token.clone().drop_guard();
        let (link, begun) = TaskLink::pending();
        let run_ctx = ctx.detached(token.clone(), ctx.outbound().clone(), link.clone(), None, None);
        self.begin_round(&run_ctx, &binding, p.input_responses, p.request_state.as_deref())?;
        let mut run = spawn_run(tool.call(&args, run_ctx.clone()), token.clone());
        let after = Duration::from_millis(tasks.config().task_after_ms);
        let early = tokio::select! {
            biased;
            outcome = &mut run => Some(outcome.unwrap_or(RunOutcome::Cancelled)),
            _ = begun => None,
            _ = tokio::time::sleep(after) => None,
        };
        let call = || task_call(&p.name, &args, &run_ctx);
        let optional = tool.task_support() == TaskSupport::Optional;
        match early {
            Some(outcome) if optional || is_input_required(&outcome) => self.in_the_call(outcome, &run_ctx, &binding),
            Some(outcome) => {
                // A required task whose handler already ended: a finished task.
                let mut settled = tasks.new_record(call(), owner.clone());
                settlement(outcome, &run_ctx, tasks.now(), run_ctx.logger())(&mut settled);
                tasks.create(settled.clone()).await.map_err(refused)?;
                self.created(&settled)
            }
            None => {
                link.mark_begun();
                let record = tasks.new_record(call(), owner.clone());
                match tasks.create(record.clone()).await {
                    Ok(()) => {
                        guard.disarm();
                        TaskActor::start_with(record.id.clone(), tasks.clone(), run_ctx, token, run);
                        self.created(&record)
                    }
                    // No room for the task: an optional one is answered in
                    // the call, as if it had answered early.
                    Err(e) if e.is_full() && optional => {
                        let outcome = run.await.unwrap_or(RunOutcome::Cancelled);
                        self.in_the_call(outcome, &run_ctx, &binding)
                    }
                    Err(e) => Err(refused(e)),
                }
            }
        }
    }

    /// The answer of a call that did not become a task: its result, or an
    /// `InputRequiredResult` when its handler asked for input.
    fn in_the_call(
        &self,
        outcome: RunOutcome,
        run_ctx: &RequestContext,
        binding: &dyn Fn() -> Binding,
    ) -> Result<Value, HandlerError> {
        match outcome {
            RunOutcome::Done(Err(HandlerError::InputRequired)) => {
                let input_required = self.input_required(run_ctx, binding)?;
                self.complete_with::<Value>(Err(input_required), None)
            }
            RunOutcome::Done(r) => self.complete_with(Ok(r?), None),
            RunOutcome::Panicked(m) => Err(HandlerError::internal(format!("the handler panicked: {m}"))),
            RunOutcome::Cancelled => Err(HandlerError::internal("the handler was cancelled")),
        }
    }

    /// A `CreateTaskResult`.
    fn created(&self, record: &TaskRecord) -> Result<Value, HandlerError> {
        let mut m = serde_json::to_value(record.task()).map_err(|e| HandlerError::internal(e.to_string()))?;
        m["resultType"] = Value::String("task".into());
        self.finish(&m, None)
    }

    /// `tasks/get`.
    pub(super) async fn get_task(&self, p: TaskIdParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        Box::pin(self.get_task_boxed(p, &ctx)).await.map(Answer::Tree)
    }

    async fn get_task_boxed(&self, p: TaskIdParams, ctx: &RequestContext) -> Result<Value, HandlerError> {
        let tasks = self.tasks_gate(ctx, method::TASKS_GET)?;
        let owner = ctx.auth().map(crate::facts::identity::Identity::key);
        let record = tasks.get_for(&p.task_id, owner.as_deref()).await.map_err(store_error)?;
        let record = record.ok_or_else(|| not_found(&p.task_id))?;
        self.finish(&record.detailed(), None)
    }

    /// `tasks/cancel`: the running handler's token fires (it settles
    /// `cancelled`); a task waiting for input is cancelled at once; a
    /// finished one is left as it is. Acknowledged with an empty result.
    pub(super) async fn cancel_task(&self, p: TaskIdParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        Box::pin(self.cancel_task_boxed(p, &ctx)).await.map(Answer::Tree)
    }

    async fn cancel_task_boxed(&self, p: TaskIdParams, ctx: &RequestContext) -> Result<Value, HandlerError> {
        let tasks = self.tasks_gate(ctx, method::TASKS_CANCEL)?;
        let owner = ctx.auth().map(crate::facts::identity::Identity::key);
        tasks.get_for(&p.task_id, owner.as_deref()).await.map_err(store_error)?.ok_or_else(|| not_found(&p.task_id))?;
        let now = tasks.now();
        let change = Box::new(move |t: &mut TaskRecord| match t.status {
            TaskStatus::InputRequired => t.settle(TaskStatus::Cancelled, now),
            TaskStatus::Working => !std::mem::replace(&mut t.cancel_requested, true),
            _ => false,
        });
        let after = tasks.update(&p.task_id, change).await.map_err(store_error)?;
        if after.is_some_and(|(t, _)| t.status == TaskStatus::Working) && !tasks.cancel_running(&p.task_id) {
            // Running on another instance: tell it.
            tasks.request_cancel(&p.task_id).await.map_err(store_error)?;
        }
        self.finish(&Map::new(), None)
    }

    /// `tasks/update`: answers to outstanding input requests (others are
    /// ignored). Once none is outstanding, the handler runs again with
    /// every answer so far, inside the task. Acknowledged with an empty result.
    pub(super) async fn update_task(&self, p: UpdateTaskParams, ctx: RequestContext) -> Result<Answer, HandlerError> {
        Box::pin(self.update_task_boxed(p, &ctx)).await.map(Answer::Tree)
    }

    async fn update_task_boxed(&self, p: UpdateTaskParams, ctx: &RequestContext) -> Result<Value, HandlerError> {
        let tasks = self.tasks_gate(ctx, method::TASKS_UPDATE)?.clone();
        let owner = ctx.auth().map(crate::facts::identity::Identity::key);
        tasks.get_for(&p.task_id, owner.as_deref()).await.map_err(store_error)?.ok_or_else(|| not_found(&p.task_id))?;
        let now = tasks.now();
        let answers = p.input_responses;
        // Resumed here: this instance runs it, under a lease.
        let runner = tasks.lease();
        let change = Box::new(move |t: &mut TaskRecord| {
            if t.status != TaskStatus::InputRequired {
                return false;
            }
            let mut changed = false;
            for (key, answer) in &answers {
                if t.input_requests.remove(key).is_some() {
                    t.call.responses.insert(key.clone(), answer.clone());
                    changed = true;
                }
            }
            if changed && t.input_requests.is_empty() {
                t.settle(TaskStatus::Working, now);
                t.runner = Some(runner.clone());
            } else if changed {
                t.updated_ms = now.max(t.updated_ms);
            }
            changed
        });
        let after = tasks.update(&p.task_id, change).await.map_err(store_error)?;
        if let Some((record, true)) = after
            && record.status == TaskStatus::Working
        {
            self.resume(tasks, record, ctx)?;
        }
        self.finish(&Map::new(), None)
    }

    /// Runs a task's handler again, here, with every answer it was given.
    fn resume(&self, tasks: Arc<TaskService>, record: TaskRecord, ctx: &RequestContext) -> Result<(), HandlerError> {
        let tool = self.catalog.tool(&record.call.tool).ok_or_else(|| {
            HandlerError::internal(format!("task {}: its tool {} is gone", record.id, record.call.tool))
        })?;
        let mut meta = ctx.meta().clone();
        meta.client_capabilities = std::sync::Arc::new(record.call.capabilities.clone());
        meta.progress_token = None;
        let token = CancellationToken::new();
        // Nobody reads a resumed run's outbound channel.
        let (outbound, _) = crate::channels::outbound::channel(1);
        let run_ctx = ctx.detached(token.clone(), outbound, TaskLink::begun(), None, Some(meta));
        run_ctx.begin_round(1, record.call.responses.clone(), record.call.state.clone());
        let run = spawn_run(tool.call(&record.call.arguments, run_ctx.clone()), token.clone());
        TaskActor::start_with(record.id, tasks, run_ctx, token, run);
        Ok(())
    }
}

/// What a task records of its call, to run it again (`tasks/update`): the
/// tool and arguments, the caller's version and capabilities, and the
/// answers and handler state of its input rounds so far.
fn task_call(tool: &str, args: &mcp_protocol::RawObject, run_ctx: &RequestContext) -> TaskCall {
    let (responses, state) = run_ctx.round_so_far();
    TaskCall {
        tool: tool.to_owned(),
        arguments: args.clone(),
        version: run_ctx.protocol_version().as_str().to_owned(),
        capabilities: run_ctx.client_capabilities().clone(),
        responses,
        state,
    }
}
