//! The task shapes: [`Task`], the status-specific [`DetailedTask`] of
//! `tasks/get` and `notifications/tasks`, and the params of the methods.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for the client's `tasks/update`.
    InputRequired,
    /// Ended with a result (a tool error too: `isError: true`).
    Completed,
    /// Ended with a JSON-RPC error.
    Failed,
    /// Cancelled before it ended.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// A task's metadata, as in a `CreateTaskResult` (with `resultType: "task"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Its identifier.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// What it is doing (the handler's last progress message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601.
    pub last_updated_at: String,
    /// Time to live from creation, in ms (`null`: unlimited; always sent).
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// A task with the payload of its status: `inputRequests` while
/// `input_required`, `result` once `completed`, `error` once `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The metadata.
    #[serde(flatten)]
    pub task: Task,
    /// Outstanding server-to-client requests, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// The result of the underlying request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error that failed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// Params of `tasks/update`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Responses to outstanding `inputRequests`, by key.
    #[serde(default)]
    pub input_responses: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_detailed_task_inlines_its_payload_and_always_sends_ttl() {
        let t = DetailedTask {
            task: Task {
                task_id: "t1".into(),
                status: TaskStatus::Completed,
                status_message: None,
                created_at: "2025-11-25T10:30:00.000Z".into(),
                last_updated_at: "2025-11-25T10:31:00.000Z".into(),
                ttl_ms: None,
                poll_interval_ms: Some(500),
            },
            input_requests: None,
            result: Some(json!({"content": []})),
            error: None,
        };
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"taskId": "t1", "status": "completed", "createdAt": "2025-11-25T10:30:00.000Z",
                   "lastUpdatedAt": "2025-11-25T10:31:00.000Z", "ttlMs": null, "pollIntervalMs": 500,
                   "result": {"content": []}})
        );
        assert_eq!(serde_json::from_value::<DetailedTask>(serde_json::to_value(&t).unwrap()).unwrap(), t);
        assert!(TaskStatus::Cancelled.is_terminal() && !TaskStatus::InputRequired.is_terminal());
    }
}
