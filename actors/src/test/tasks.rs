//! Following a task in the test client: `tasks/get` until the task ends,
//! its questions answered through `tasks/update`.

use std::time::Duration;

use mcp_protocol::tasks::{DetailedTask, TaskStatus};
use mcp_protocol::ErrorData;
use serde_json::{json, Value};

use super::{decode, input, CallError, TestClient};

/// How often a task is asked after, when it suggests no interval (and the
/// most a suggestion is honoured: a test waits no longer than this between
/// polls).
const POLL: Duration = Duration::from_millis(100);
/// The shortest interval honoured.
const MIN_POLL: Duration = Duration::from_millis(5);
/// How many polls a task may take before the client gives up (with `POLL`,
/// over ten minutes).
const MAX_POLLS: usize = 6_000;

impl TestClient {
    /// `result` itself, or — when the server made the call a task
    /// (`resultType: "task"`) — the task's result once it ended.
    pub(super) async fn finished(&self, result: Value) -> Result<Value, CallError> {
        if result.get("resultType").and_then(Value::as_str) != Some("task") {
            return Ok(result);
        }
        let id = result.get("taskId").and_then(Value::as_str).map(str::to_owned);
        let id = id.ok_or_else(|| CallError::Protocol("a task result without taskId".into()))?;
        let mut poll = interval(&result);
        for _ in 0..MAX_POLLS {
            actix_rt::time::sleep(poll).await;
            let raw = self.request("tasks/get", json!({"taskId": id})).await?;
            let task: DetailedTask = decode(raw.clone())?;
            poll = interval(&raw);
            match task.task.status {
                TaskStatus::Working => {}
                TaskStatus::InputRequired => self.update(&id, &raw).await?,
                TaskStatus::Completed => return Ok(task.result.unwrap_or(Value::Null)),
                TaskStatus::Failed => return Err(failed(task.error)),
                TaskStatus::Cancelled => return Err(CallError::Protocol(format!("task {id} was cancelled"))),
                other => return Err(CallError::Protocol(format!("task {id}: unknown status {other:?}"))),
            }
        }
        Err(CallError::Protocol(format!("task {id} did not end within {MAX_POLLS} polls")))
    }

    /// Answers a task's `inputRequests` by the `answering` callback.
    async fn update(&self, id: &str, task: &Value) -> Result<(), CallError> {
        let Some(answer) = &self.answer else {
            return Err(CallError::Protocol(format!("task {id} asked for input; use answering()")));
        };
        let Some(requests) = task.get("inputRequests").and_then(Value::as_object) else {
            return Err(CallError::Protocol(format!("task {id} is input_required without inputRequests")));
        };
        let responses = input::answer_all(answer, requests);
        self.request("tasks/update", json!({"taskId": id, "inputResponses": responses})).await.map(drop)
    }
}

/// The task's `pollIntervalMs`, within [`MIN_POLL`, `POLL`].
fn interval(task: &Value) -> Duration {
    let suggested = task.get("pollIntervalMs").and_then(Value::as_u64).map(Duration::from_millis);
    suggested.unwrap_or(POLL).clamp(MIN_POLL, POLL)
}

/// A failed task's error as the call's.
fn failed(error: Option<Value>) -> CallError {
    let error = error.and_then(|e| serde_json::from_value::<ErrorData>(e).ok());
    let error = error.unwrap_or_else(|| ErrorData::new(mcp_protocol::ErrorCode::INTERNAL_ERROR, "the task failed"));
    CallError::Rpc { status: 200, error }
}
