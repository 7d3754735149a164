//! The Tasks extension, client side: with [`ClientOptions::tasks`] declared,
//! a call the server turns into a task (`resultType: "task"`) is followed
//! to its end — `tasks/get` at the task's `pollIntervalMs`, its
//! `input_required` questions answered by the handlers through
//! `tasks/update` — and dropping the call cancels the task
//! (`tasks/cancel`). The methods are also there one by one, and a listen
//! stream's `taskIds` delivers `notifications/tasks`.
//!
//! [`ClientOptions::tasks`]: super::ClientOptions::tasks

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::model::JsonObject;
use mcp_protocol::tasks::{DetailedTask, Task, TaskStatus};
use serde_json::Value;

use super::api::object;
use super::connection::{spawn_detached, Inner};
use super::error::ClientError;
use super::input;
use super::options::RequestOptions;
use super::started::Started;
use super::Client;
use mcp_protocol::request::method;

/// The polling interval when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(1000);
/// The shortest interval honoured (a server suggesting 0 is not hammered).
const MIN_POLL: Duration = Duration::from_millis(20);

fn task_params(id: &str) -> JsonObject {
    JsonObject::from_iter([("taskId".to_owned(), id.into())])
}

impl Inner {
    pub(crate) async fn get_task(self: &Arc<Self>, id: &str) -> Result<DetailedTask, ClientError> {
        let answer = self.request(method::TASKS_GET, task_params(id), &RequestOptions::default()).await?;
        answer.decode(method::TASKS_GET)
    }

    /// Follows a task until it ends: its result, or its error.
    pub(crate) async fn follow(self: &Arc<Self>, task: Task) -> Result<Value, ClientError> {
        let mut guard = CancelTask { inner: Arc::downgrade(self), id: Some(task.task_id.clone()) };
        let mut poll = task.poll_interval_ms;
        loop {
            tokio::time::sleep(poll.map(Duration::from_millis).unwrap_or(DEFAULT_POLL).max(MIN_POLL)).await;
            let detailed = self.get_task(&task.task_id).await?;
            poll = detailed.task.poll_interval_ms.or(poll);
            match detailed.task.status {
                TaskStatus::Working => {}
                TaskStatus::InputRequired => {
                    let requests = detailed.input_requests.unwrap_or_default();
                    let responses = input::answer_all(&self.options, None, &requests).await?;
                    let mut params = task_params(&task.task_id);
                    params.insert("inputResponses".into(), responses.into());
                    self.request(method::TASKS_UPDATE, params, &RequestOptions::default()).await?;
                }
                TaskStatus::Completed => {
                    guard.id = None;
                    return Ok(detailed.result.unwrap_or_default());
                }
                TaskStatus::Failed => {
                    guard.id = None;
                    return Err(match detailed.error {
                        Some(error) => ClientError::from_error_value(error),
                        None => mcp_protocol::ErrorData::internal("the task failed").into(),
                    });
                }
                TaskStatus::Cancelled => {
                    guard.id = None;
                    return Err(ClientError::Cancelled);
                }
                other => {
                    return Err(ClientError::Transport(format!("task status {other:?} is not one this client knows")))
                }
            }
        }
    }
}

/// Cancels a task whose follower was dropped before it ended.
struct CancelTask {
    inner: std::sync::Weak<Inner>,
    id: Option<String>,
}

impl Drop for CancelTask {
    fn drop(&mut self) {
        let (Some(id), Some(inner)) = (self.id.take(), self.inner.upgrade()) else { return };
        spawn_detached(async move {
            let _ = inner.request(method::TASKS_CANCEL, task_params(&id), &RequestOptions::default()).await;
        });
    }
}

impl Client {
    /// Sends a request without following a task it becomes.
    pub async fn request_task(&self, method: &str, params: Value) -> Result<Started, ClientError> {
        self.inner.request(method, object(params)?, &RequestOptions::default()).await?.into_tree(method)
    }

    /// `tasks/get`: the task with its result, error or questions.
    pub async fn get_task(&self, id: &str) -> Result<DetailedTask, ClientError> {
        self.inner.get_task(id).await
    }

    /// `tasks/update`: answers the task's questions, by key.
    pub async fn update_task(&self, id: &str, responses: JsonObject) -> Result<(), ClientError> {
        let mut params = task_params(id);
        params.insert("inputResponses".into(), responses.into());
        self.inner.request(method::TASKS_UPDATE, params, &RequestOptions::default()).await.map(|_| ())
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, id: &str) -> Result<(), ClientError> {
        self.inner.request(method::TASKS_CANCEL, task_params(id), &RequestOptions::default()).await.map(|_| ())
    }

    /// Follows a task to its end (polling, answering its questions); the
    /// result of the request it runs. Dropping the future cancels the task.
    pub async fn follow_task(&self, task: Task) -> Result<Value, ClientError> {
        self.inner.follow(task).await
    }
}
