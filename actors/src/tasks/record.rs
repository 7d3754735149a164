//! [`TaskRecord`]: a task as the store keeps it — its state, its payload,
//! its owner, and the call it runs (so that a `tasks/update` can resume
//! the handler on whichever instance receives it).

use mcp_protocol::model::capabilities::ClientCapabilities;
use mcp_protocol::tasks::{iso8601, DetailedTask, Task, TaskStatus};
use mcp_protocol::RawObject;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Its id (a UUID v4: 122 random bits).
    pub id: String,
    /// The key of the caller that created it ([`Identity::key`](crate::facts::identity::Identity::key):
    /// its issuer and subject; authorization on), else `None`.
    pub owner: Option<String>,
    /// Its status.
    pub status: TaskStatus,
    /// The handler's latest status message.
    pub status_message: Option<String>,
    /// Created, ms since the epoch.
    pub created_ms: u64,
    /// Last changed, ms since the epoch.
    pub updated_ms: u64,
    /// Time to live from creation, ms.
    pub ttl_ms: u64,
    /// Suggested polling interval, ms.
    pub poll_ms: u64,
    /// Outstanding input requests, by key (`input_required`).
    pub input_requests: Map<String, Value>,
    /// The result (`completed`).
    pub result: Option<Value>,
    /// The JSON-RPC error (`failed`).
    pub error: Option<Value>,
    /// A `tasks/cancel` arrived while it was running.
    pub cancel_requested: bool,
    /// The call it runs.
    pub call: TaskCall,
    /// The instance running it now, if any, and until when its lease holds
    /// (ms since the epoch; the runner renews it while it runs).
    pub runner: Option<(String, u64)>,
}

/// The `tools/call` a task runs, with what its handler has been told so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: RawObject,
    /// The request's protocol version.
    pub version: String,
    /// The client's declared capabilities.
    pub capabilities: ClientCapabilities,
    /// Input responses given so far (before and during the task), by key.
    pub responses: Map<String, Value>,
    /// The handler's own state between runs.
    pub state: Option<Value>,
}

impl TaskRecord {
    /// Whether it has ended.
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// Whether its time to live has run out at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        now_ms >= self.created_ms.saturating_add(self.ttl_ms)
    }

    /// The metadata of a `CreateTaskResult`.
    pub fn task(&self) -> Task {
        Task {
            task_id: self.id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: iso8601(self.created_ms),
            last_updated_at: iso8601(self.updated_ms),
            ttl_ms: Some(self.ttl_ms),
            poll_interval_ms: Some(self.poll_ms),
        }
    }

    /// The task with its status's payload (`tasks/get`, `notifications/tasks`).
    pub fn detailed(&self) -> DetailedTask {
        DetailedTask {
            task: self.task(),
            input_requests: (self.status == TaskStatus::InputRequired).then(|| self.input_requests.clone()),
            result: if self.status == TaskStatus::Completed { self.result.clone() } else { None },
            error: if self.status == TaskStatus::Failed { self.error.clone() } else { None },
        }
    }

    /// Moves it to `status` at `now_ms` (a terminal status is final: later
    /// moves are ignored and `false` is returned).
    pub fn settle(&mut self, status: TaskStatus, now_ms: u64) -> bool {
        if self.is_terminal() {
            return false;
        }
        self.status = status;
        self.updated_ms = now_ms.max(self.updated_ms);
        if status != TaskStatus::InputRequired {
            self.input_requests.clear();
        }
        if status.is_terminal() {
            self.runner = None;
        }
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn record() -> TaskRecord {
        TaskRecord {
            id: "t".into(),
            owner: None,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: 1_000,
            updated_ms: 1_000,
            ttl_ms: 60_000,
            poll_ms: 500,
            input_requests: Map::new(),
            result: None,
            error: None,
            cancel_requested: false,
            call: TaskCall {
                tool: "x".into(),
                arguments: RawObject::empty(),
                version: "2026-07-28".into(),
                capabilities: ClientCapabilities::default(),
                responses: Map::new(),
                state: None,
            },
            runner: None,
        }
    }

    #[test]
    fn terminal_is_final_and_payloads_follow_the_status() {
        let mut r = record();
        r.input_requests.insert("k".into(), json!({"method": "elicitation/create"}));
        r.status = TaskStatus::InputRequired;
        assert!(r.detailed().input_requests.is_some());
        r.result = Some(json!({"content": []}));
        assert!(r.settle(TaskStatus::Completed, 2_000));
        assert!(r.detailed().input_requests.is_none() && r.detailed().result.is_some());
        assert!(!r.settle(TaskStatus::Cancelled, 3_000), "a finished task stays finished");
        assert_eq!((r.status, r.updated_ms), (TaskStatus::Completed, 2_000));
        assert!(!r.expired(60_999) && r.expired(61_000));
    }
}
