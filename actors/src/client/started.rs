//! What a request answered: its result at once, or a task the server
//! made of it (the Tasks extension).

use mcp_protocol::tasks::Task;
use serde_json::Value;

/// What a call answered: its result at once, or a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Started {
    /// The result.
    Done(Value),
    /// The server made it a task.
    Task(Task),
}

impl Started {
    /// The result as the server sent it (a task as its `CreateTaskResult`).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Started::Done(v) => v,
            Started::Task(task) => serde_json::to_value(task).unwrap_or_default(),
        }
    }
}
